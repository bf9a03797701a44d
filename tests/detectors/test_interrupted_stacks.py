"""A job stopped from outside: each worker's ``KeyboardInterrupt`` traceback is a stack sample.

Users stop a stuck job with Ctrl-C (torchrun forwards it to every worker as SIGINT) and paste what
that printed. Each worker's traceback ends where it was waiting at that moment. When every rank
but one waits in the same collective (DDP's backward all-reduce, a barrier) and one is somewhere
else (its own loop, a data loader), that one held the others up. This is ``detectors.stacks``'s
verdict on a live py-spy sample. Shapes are from real CPU ``torchrun`` 2.13 jobs: a healthy job
interrupted (/tmp run, both ranks in backward), corpus holdout17 g17b-031, holdout18 g18-029 (a
rank asleep in its loader), and holdout18 h18c-010 (a single YOLOv4 process in its DataLoader's
queue, Lornatang/YOLOv4-PyTorch style, 2020).
"""

from __future__ import annotations

import pytest

from tests.helpers import engine_events, engine_verdict

_SITE = "/opt/venv/lib/python3.11/site-packages"


def _interrupted(rank: int, frames: list[tuple[str, int, str, str]]) -> list[str]:
    """A rank's KeyboardInterrupt traceback: (file, line, function, code) outermost first."""
    body = [line for file, no, fn, code in frames
            for line in (f'[rank{rank}]:   File "{file}", line {no}, in {fn}', f"[rank{rank}]:     {code}")]
    return [f"[rank{rank}]: Traceback (most recent call last):", *body, f"[rank{rank}]: KeyboardInterrupt"]


def _backward(rank: int) -> list[str]:
    return _interrupted(rank, [("/home/user/job/train.py", 31, "<module>", "opt.zero_grad(); loss.backward(); opt.step()"),
                               (f"{_SITE}/torch/_tensor.py", 623, "backward", "torch.autograd.backward("),
                               (f"{_SITE}/torch/autograd/graph.py", 979, "_engine_run_backward",
                                "return Variable._execution_engine.run_backward(")])


def _loader(rank: int) -> list[str]:
    return _interrupted(rank, [("/home/user/job/train.py", 29, "<module>", "x, y = load_batch(step)"),
                               ("/home/user/job/train.py", 21, "load_batch", "time.sleep(0.5)")])


def _metrics(t0: int, steps: range, ranks: range) -> list[str]:
    return [f"2026-12-06 05:17:{t0 + i:02d},266 INFO [rank{r}] step {s} loss 0.{3364 - s}"
            for i, s in enumerate(steps) for r in ranks]


def _stop(at: str) -> list[str]:
    return [f"W1206 {at}.629000 23561 torch/distributed/elastic/agent/server/api.py:753] Received 2 death signal, "
            "shutting down workers",
            f"W1206 {at}.630000 23561 torch/distributed/elastic/multiprocessing/api.py:1028] Sending process 23676 "
            "closing signal SIGINT"]


def test_the_one_rank_outside_the_collective_the_others_wait_in_hung() -> None:
    lines = [*_metrics(10, range(0, 400, 100), range(4)), *_stop("05:19:40"),
             *_backward(0), *_backward(2), *_loader(3), *_backward(1)]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank, top.data["rank_from"]) == ("rank_hang", 3, "stacks")
    assert "load_batch" in top.data["where"]


def test_every_rank_in_the_same_collective_names_no_one() -> None:
    # (two minutes of silence before the stop: a hang all the same, of no rank the stacks can name)
    lines = [*_metrics(10, range(0, 400, 100), range(2)), *_stop("05:19:40"), *_backward(0), *_backward(1)]
    assert all(i.rank is None for i in engine_verdict(lines) if i.failure == "rank_hang")


def test_a_job_stopped_while_its_metric_lines_still_came_was_making_progress() -> None:
    # the last metric line a second before the death signal, steps a second apart: a healthy
    # job someone stopped, caught with one rank in its own code
    lines = [*_metrics(10, range(0, 400, 100), range(2)), *_stop("05:17:14"), *_backward(0), *_loader(1)]
    assert all(i.failure != "rank_hang" for i in engine_verdict(lines))


def test_the_same_stop_after_minutes_of_silence_names_the_rank() -> None:
    lines = [*_metrics(10, range(0, 400, 100), range(2)), *_stop("05:21:14"), *_backward(0), *_loader(1)]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("rank_hang", 1)


def test_one_process_interrupted_in_its_data_loader_was_stuck_there() -> None:
    lines = [
        "[2020-10-15 03:47:31,824]-[train.py line:112]:===Epoch:[1/50]===",
        "^CTraceback (most recent call last):",
        '  File "train.py", line 113, in train',
        "    for i, (imgs, labels) in enumerate(self.train_dataloader):",
        '  File "/usr/local/lib/python3.6/dist-packages/torch/utils/data/dataloader.py", line 761, in _try_get_data',
        "    data = self._data_queue.get(timeout=timeout)",
        '  File "/usr/lib/python3.6/queue.py", line 173, in get',
        "    self.not_empty.wait(remaining)",
        '  File "/usr/lib/python3.6/threading.py", line 299, in wait',
        "    gotit = waiter.acquire(True, timeout)",
        "KeyboardInterrupt",
    ]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.severity, top.rank) == ("rank_hang", "warning", None)


def test_one_process_interrupted_in_its_own_code_is_no_hang() -> None:
    lines = ["epoch 1 loss 0.52", "Traceback (most recent call last):", '  File "train.py", line 40, in <module>',
             "    out = model(x)", '  File "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", line 1501, in _call_impl',
             "    return forward_call(*args, **kwargs)", "KeyboardInterrupt"]
    assert all(i.failure != "rank_hang" for i in engine_verdict(lines))


def test_the_launchers_own_wait_names_none_of_its_workers() -> None:
    # mp.spawn's parent interrupted in its join loop (holdout18 g18-058): it always waits there,
    # so its stack names no rank; the Ctrl-C itself, with no clock on it, is a stop from outside
    lines = ["rank=1 | Epoch 0 [75/100] loss 1.1104", "Traceback (most recent call last):",
             '  File "/tmp/j58/train.py", line 29, in <module>', "    mp.spawn(worker, args=(4,), nprocs=4, join=True)",
             f'  File "{_SITE}/torch/multiprocessing/spawn.py", line 140, in join',
             "    ready = multiprocessing.connection.wait(",
             '  File "/usr/lib/python3.11/multiprocessing/connection.py", line 947, in wait',
             '  File "/usr/lib/python3.11/selectors.py", line 415, in select',
             "    fd_event_list = self._selector.poll(timeout)", "KeyboardInterrupt"]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.severity, top.rank, top.data.get("stacks")) == ("rank_hang", "warning", None, None)


def test_a_scripts_own_launcher_waiting_for_its_workers_is_no_computing_process() -> None:
    # YOLOX's launch_by_subprocess (Megvii-BaseDetection/YOLOX#309, 2 GPUs stuck after "start train
    # epoch1"), and torch.distributed.launch before 1.9 (pytorch/pytorch#45042, MhLiao/
    # MaskTextSpotterV3#49): the parent blocks in process.wait() on the workers it started; a Ctrl-C
    # there is a stop of a job that made no progress, like mp.spawn's join
    yolox = ["2021-08-02 16:36:33 | INFO     | yolox.core.trainer:193 - ---> start train epoch1",
             "^CTraceback (most recent call last):", '  File "tools/train.py", line 118, in <module>', "    launch(",
             '  File "/home/u/YOLOX-main/yolox/core/launch.py", line 163, in launch_by_subprocess', "    process.wait()",
             '  File "/home/u/miniconda3/envs/yolox/lib/python3.8/subprocess.py", line 1079, in wait',
             "    return self._wait(timeout=timeout)",
             '  File "/home/u/miniconda3/envs/yolox/lib/python3.8/subprocess.py", line 1804, in _wait',
             "    (pid, sts) = self._try_wait(0)",
             '  File "/home/u/miniconda3/envs/yolox/lib/python3.8/subprocess.py", line 1762, in _try_wait',
             "    (pid, sts) = os.waitpid(self.pid, wait_flags)", "KeyboardInterrupt"]
    launch = ["Traceback (most recent call last):",
              '  File "/usr/local/lib/python3.7/site-packages/torch/distributed/launch.py", line 253, in main',
              "    process.wait()", '  File "/usr/local/lib/python3.7/subprocess.py", line 1019, in wait',
              "    return self._wait(timeout=timeout)", '  File "/usr/local/lib/python3.7/subprocess.py", line 1611, in _try_wait',
              "    (pid, sts) = os.waitpid(self.pid, wait_flags)", "KeyboardInterrupt"]
    for lines in (yolox, launch):
        top = engine_verdict(lines)[0]
        assert (top.failure, top.severity, top.rank) == ("rank_hang", "warning", None)


def _timed_out(rank: int, fn: str, line: int) -> list[str]:
    return [
        f"[rank{rank}]: Traceback (most recent call last):",
        f'[rank{rank}]:   File "/home/user/job/train.py", line {line}, in <module>',
        f'[rank{rank}]:   File "{_SITE}/torch/distributed/c10d_logger.py", line 83, in wrapper',
        f'[rank{rank}]:   File "{_SITE}/torch/distributed/distributed_c10d.py", line 5356, in {fn}',
        f"[rank{rank}]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] "
        "Timed out waiting 20000ms for recv operation to complete",
    ]


def test_when_every_rank_timed_out_the_one_in_another_collective_is_named() -> None:
    # a CPU torchrun job whose rank 1 ran an extra all_reduce (corpus holdout19 g19-034): ranks 0
    # and 2 time out in the final barrier, rank 1 in its all_reduce
    lines = ["05:25:19 [rank2] training loop finished, waiting at final barrier",
             "05:25:19 [rank0] training loop finished, waiting at final barrier",
             *_timed_out(0, "barrier", 26), *_timed_out(1, "all_reduce", 16), *_timed_out(2, "barrier", 26)]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank, top.data["rank_from"]) == ("rank_hang", 1, "stacks")


def test_ranks_timed_out_in_the_same_collective_name_no_one() -> None:
    lines = [*_timed_out(0, "barrier", 26), *_timed_out(1, "barrier", 26), *_timed_out(2, "barrier", 26)]
    assert all(i.rank is None for i in engine_verdict(lines) if i.severity == "critical")


def _sigterm(at: str) -> list[str]:
    return [f"W1206 {at}.333000 30598 torch/distributed/elastic/agent/server/api.py:753] Received 15 death signal, "
            "shutting down workers",
            f"W1206 {at}.334000 30598 torch/distributed/elastic/multiprocessing/api.py:1028] Sending process 30604 "
            "closing signal SIGTERM"]


def _steps(last: dict[int, int]) -> list[str]:
    return [f"2026-12-06 03:28:{s // 10:02d},398 INFO [rank={r}] train.py:21 step {s} loss={1.1 - s / 1000:.4f}"
            for s in range(0, 60, 10) for r in sorted(last) if s <= last[r]]


def test_a_job_stopped_from_outside_minutes_after_its_last_metric_line_had_hung() -> None:
    # a CPU torchrun job whose ranks blocked on uneven inputs until a time limit's SIGTERM
    # (corpus holdout18 g18-047): lines every second, then two minutes of nothing
    top = engine_verdict([*_steps({0: 50, 1: 50, 2: 40}), *_sigterm("03:30:21")])[0]
    assert (top.failure, top.rank, top.data["stopped_from_outside"]) == ("rank_hang", 2, True)


def test_a_job_stopped_while_its_lines_still_came_is_no_hang() -> None:
    top = engine_verdict([*_steps({0: 50, 1: 50}), *_sigterm("03:28:06")])[0]
    assert top.failure != "rank_hang"


def test_a_stop_with_too_few_timed_lines_to_judge_is_a_warning_naming_no_rank() -> None:
    # one metric line is no cadence to measure the silence by: a stop from outside, unjudged
    lines = ["2026-12-06 03:28:00,398 INFO [rank=0] train.py:21 step 0 loss=1.1", *_sigterm("03:50:21")]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.severity, top.rank, top.data["unclocked"]) == ("rank_hang", "warning", None, True)


def test_a_rank_interrupted_inside_the_collective_loggers_wrapper_waits_in_the_collective() -> None:
    # torch 2.1+ wraps every collective in c10d_logger's wrapper: an interrupt that lands while it
    # handles the call's error ("Connection closed by peer" as the others went away) leaves the
    # wrapper innermost (corpus holdout20 g20-015: rank 2 asleep in its own loop)
    def in_wrapper(rank: int) -> list[str]:
        return _interrupted(rank, [("/home/user/train_job/train.py", 78, "<module>", "main()"),
                                   ("/home/user/train_job/train.py", 69, "main", "sync_grads(model); opt.step()"),
                                   ("/home/user/train_job/train.py", 34, "sync_grads", "dist.all_reduce(p.grad)"),
                                   (f"{_SITE}/torch/distributed/c10d_logger.py", 85, "wrapper",
                                    "msg_dict = _get_msg_dict(func.__name__, *args, **kwargs)"),
                                   (f"{_SITE}/torch/distributed/c10d_logger.py", 53, "_get_msg_dict",
                                    "def _get_msg_dict(func_name, *args, **kwargs) -> dict[str, Any]:")])
    lines = [f"2026-12-06 09:16:{10 + s}, [INFO] rank{r}/3 ddp: step {s} loss 1.3" for s in range(1, 9) for r in range(3)]
    lines += ["W1206 09:17:23.461000 11552 torch/distributed/elastic/agent/server/api.py:753] Received 2 death signal, shutting down workers",
              *_interrupted(2, [("/home/user/train_job/train.py", 78, "<module>", "main()"),
                                ("/home/user/train_job/train.py", 68, "main", "time.sleep(1)")]),
              *in_wrapper(0), *in_wrapper(1)]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("rank_hang", 2)


def test_a_stop_after_every_rank_but_one_noted_a_step_names_that_one() -> None:
    # ranks 0 and 1 note step 0 (progress lines, no metric) and wait in its all-reduce; rank 2
    # only showed its loop's bar at 0 (a rank the job has) and never got there; then SIGTERM
    bar = "\r[rank {r}] epoch 0:   0%|          | 0/200 [00:00<?, ?it/s]"
    lines = [bar.format(r=1), "rank 1 step 0: backward done, all-reducing grads", bar.format(r=0),
             "rank 0 step 0: backward done, all-reducing grads", bar.format(r=2), *_sigterm("23:56:10")]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.severity, top.rank) == ("rank_hang", "warning", 2)
    # with rank 2's note too, nobody is behind
    top = engine_verdict([*lines[:5], "rank 2 step 0: backward done, all-reducing grads", *_sigterm("23:56:10")])[0]
    assert (top.failure, top.rank) == ("rank_hang", None)


def test_json_step_notes_show_the_rank_that_never_began_the_next_step() -> None:
    # JSON events: every rank ends step 22 (with its loss), ranks 0, 2, 3 begin step 23, then SIGTERM
    ev = '{{"ts": 1796603391.4, "rank": {r}, "event": "{e}", "step": {s}{extra}}}'
    lines = [ev.format(r=r, e="step_end", s=s, extra=f', "loss": {0.4 - s / 100:.4f}') for s in range(20, 23) for r in range(4)]
    lines += [ev.format(r=r, e="step_begin", s=23, extra="") for r in (0, 2, 3)]
    top = engine_verdict([*lines, *_sigterm("23:56:10")])[0]
    assert (top.failure, top.rank) == ("rank_hang", 1)


def test_a_job_stopped_from_outside_while_its_timed_lines_still_came_raises_no_alert() -> None:
    """DeepSpeed's launcher receiving Ctrl-C 14 s after the last timed step line (every 5 s), no rank failing
    (a benign run someone stopped): the stop is a note, never a page."""
    step = ("[2025-08-15 08:41:{s:02d},241] [INFO] [logging.py:107:log_dist] [Rank 0] step={n}, skipped=2, "
            "lr=[1e-05], mom=[(0.9, 0.999)]")
    lines = [step.format(s=s, n=n) for n, s in zip(range(3, 14), range(6, 61, 5), strict=True)]
    lines += ["[2025-08-15 08:42:10,745] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 3668201",
              "[2025-08-15 08:42:11,153] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 3668202",
              "[2025-08-15 08:42:11,420] [INFO] [launch.py:328:sigkill_handler] Main process received SIGINT, exiting"]
    assert [i for i in engine_verdict(lines) if i.severity in ("warning", "critical")] == []
    # the same stop two minutes after the last line: it had stopped making progress
    late = [*lines[:-3], *(ln.replace("08:42:1", "08:44:1") for ln in lines[-3:])]
    assert any(i.severity in ("warning", "critical") for i in engine_verdict(late))


def test_a_rank_interrupted_in_its_own_wait_while_its_peers_lost_it_had_hung_not_died() -> None:
    # a CPU torchrun job stopped with Ctrl-C (corpus holdout24 g24d-002): rank 1's KeyboardInterrupt
    # traceback ends in its own loop (time.sleep waiting for shard files) before the first step; ranks
    # 0 and 2, blocked in DDP's constructor collective, report "Connection closed by peer" once it exits
    peer = ("[default{r}]:RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection "
            "closed by peer [127.0.0.1]:57015. This is typically caused by a remote worker crashing.")
    lines = ["[default0]:2026-12-07 02:40:15.111 | INFO     | r0 | __main__:main:22 - process group ready: world_size=3 backend=gloo",
             f"W1207 02:40:39.691000 12673 {_SITE}/torch/distributed/elastic/agent/server/api.py:753] Received 2 death "
             "signal, shutting down workers",
             "[default1]:[rank1]: Traceback (most recent call last):",
             '[default1]:[rank1]:   File "/home/user/job/train.py", line 24, in main',
             '[default1]:[rank1]:     ids = wait_for_shard_index("/data/cache/wiki_tok", RANK)',
             '[default1]:[rank1]:   File "/home/user/job/train.py", line 16, in wait_for_shard_index',
             "[default1]:[rank1]:     time.sleep(1.0)", "[default1]:[rank1]: KeyboardInterrupt"]
    for r in (2, 0):
        lines += [f"[default{r}]:Traceback (most recent call last):",
                  f'[default{r}]:  File "{_SITE}/torch/nn/parallel/distributed.py", line 1064, in __init__',
                  f"[default{r}]:    _verify_param_shape_across_processes(self.process_group, parameters)", peer.format(r=r)]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("rank_hang", 1)


def _fh_block(tag: str, current: list[tuple[str, int, str]]) -> list[str]:
    # Python's faulthandler after faulthandler.register(signal.SIGTERM) (CPython Python/traceback.c):
    # tqdm's monitor thread, then the thread that received the signal, innermost frame first
    lines = [f"{tag}Thread 0x00007f9194ffe6c0 (most recent call first):",
             f'{tag}  File "/usr/lib/python3.11/threading.py", line 331 in wait',
             f'{tag}  File "/venv/lib/python3.11/site-packages/tqdm/_monitor.py", line 69 in run', f"{tag}",
             f"{tag}Current thread 0x00007f91bce06b80 (most recent call first):"]
    return lines + [f'{tag}  File "{f}", line {n} in {fn}' for f, n, fn in current]


def test_faulthandler_dumps_at_a_stop_are_stack_samples() -> None:
    # corpus holdout25 g25d-004: torchrun received SIGTERM; rank 0 waits in DDP's backward
    # all-reduce, rank 1 is still in its own data fetch
    lines = [f"[default{r}]:train:  26%|##6       | 53/200 [00:20<00:05, 26.15it/s, loss=0.688]" for r in (0, 1)]
    lines += ["W1207 04:57:36.913000 7082 torch/distributed/elastic/agent/server/api.py:753] Received 15 death signal, "
              "shutting down workers",
              "W1207 04:57:36.913000 7082 torch/distributed/elastic/multiprocessing/api.py:1028] Sending process 7093 "
              "closing signal SIGTERM"]
    lines += _fh_block("[default0]:", [("/venv/lib/python3.11/site-packages/torch/autograd/graph.py", 979, "_engine_run_backward"),
                                      ("/venv/lib/python3.11/site-packages/torch/_tensor.py", 623, "backward"),
                                      ("/home/user/job/train.py", 22, "<module>")])
    lines += _fh_block("[default1]:", [("/home/user/job/train.py", 16, "fetch_remote_shard"),
                                      ("/home/user/job/train.py", 20, "<module>")])
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("rank_hang", 1)
    assert top.data.get("rank_from") == "stacks"


def _watchdog_dump(rank: int, announce: str, main: list[tuple[str, int, str]], helper_first: bool = True) -> list[str]:
    # a hang watchdog thread of the program's own: it prints a line with its rank, then
    # faulthandler.dump_traceback(all_threads=True); the watchdog is the "Current thread", the
    # training loop is the main thread's block (outermost frame <module>). CPython lists the
    # threads newest first, so the main thread usually comes last.
    helper = [f"Current thread 0x00007f0c88e1{rank}6c0 (most recent call first):",
              '  File "/home/user/job/train.py", line 11 in watchdog',
              '  File "/usr/lib/python3.11/threading.py", line 982 in run',
              '  File "/usr/lib/python3.11/threading.py", line 1045 in _bootstrap_inner',
              '  File "/usr/lib/python3.11/threading.py", line 1002 in _bootstrap', ""]
    main_block = [f"Thread 0x00007f0ca9e7{rank}b80 (most recent call first):",
                  *(f'  File "{f}", line {n} in {fn}' for f, n, fn in main), ""]
    return [announce.format(r=rank), *(helper + main_block if helper_first else main_block + helper)]


_IN_BACKWARD = [(f"{_SITE}/torch/autograd/graph.py", 979, "_engine_run_backward"),
                (f"{_SITE}/torch/_tensor.py", 623, "backward"), ("/home/user/job/train.py", 31, "<module>")]
_IN_OWN_LOCK = [("/home/user/job/train.py", 22, "rotate_history"), ("/home/user/job/train.py", 20, "flush_metrics"),
                ("/home/user/job/train.py", 32, "<module>")]


@pytest.mark.parametrize("announce", ["[watchdog rank={r}] no training step finished in 15s, dumping all thread stacks and exiting",
                                      "rank {r}: still running after 600s. Dumping stack traces...",
                                      "[rank {r}] WATCHDOG: no progress for 120 s, thread stacks follow"])
@pytest.mark.parametrize("helper_first", [True, False])
def test_a_watchdogs_all_thread_dump_is_read_at_the_main_threads_block(announce: str, helper_first: bool) -> None:
    # corpus holdout31 g31-009: each rank's watchdog dumps every thread and exits with code 3;
    # rank 1's main thread sits in its own metrics lock while ranks 0 and 2 wait in DDP's
    # backward all-reduce. The watchdog's own block ("Current thread") says nothing of the hang.
    lines = [f"rank={r} step={s} loss=0.{6368 - s}" for s in (8, 16) for r in (1, 2, 0)]
    lines += ["rank=2 step=24 loss=0.5512", "rank=0 step=24 loss=0.5512"]
    for r in (1, 0, 2):
        lines += _watchdog_dump(r, announce, _IN_OWN_LOCK if r == 1 else _IN_BACKWARD, helper_first)
    lines += ["E1207 22:06:33.976000 14742 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: 3) "
              "local_rank: 0 (pid: 14745) of binary: /usr/bin/python"]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank, top.data.get("rank_from")) == ("rank_hang", 1, "stacks")


def test_a_helper_threads_block_is_no_stack_sample() -> None:
    # the watchdog's own "Current thread" block alone (the paste cut before the main thread's):
    # the process was not waiting in the watchdog function
    lines = _watchdog_dump(1, "[watchdog rank={r}] dumping all thread stacks", _IN_OWN_LOCK)[:6]
    assert not [ev for ev in engine_events(lines) if ev.data.get("stack_dump")]
    whole = _watchdog_dump(1, "[watchdog rank={r}] dumping all thread stacks", _IN_OWN_LOCK)
    (sample,) = [ev for ev in engine_events(whole) if ev.data.get("stack_dump")]
    assert (sample.rank, str(sample.data["frames"]).split("\t")[0]) == (1, "rotate_history")


def _lost_peer(rank: int, inner: list[tuple[str, int, str, str]]) -> list[str]:
    body = [line for file, no, fn, code in inner
            for line in (f'[rank{rank}]:   File "{file}", line {no}, in {fn}', f"[rank{rank}]:     {code}")]
    return [f"[rank{rank}]: Traceback (most recent call last):", *body,
            f"[rank{rank}]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] "
            f"Connection closed by peer [127.0.0.1]:4{rank}840. This is typically caused by a remote worker crashing.",
            f"[rank{rank}]: ", f"[rank{rank}]: During handling of the above exception, another exception occurred:",
            f"[rank{rank}]: ", f"[rank{rank}]: Traceback (most recent call last):",
            f'[rank{rank}]:   File "/home/user/job/train.py", line 20, in <module>', f"[rank{rank}]:     loss.backward()",
            f"[rank{rank}]: KeyboardInterrupt"]


def test_a_rank_interrupted_in_its_own_code_while_its_peers_lost_it_is_the_hung_one() -> None:
    # corpus holdout32 g32d-015: rank 3 sits on a prefetch lock; at Ctrl-C ranks 0-2 lose their
    # connection inside DDP (backward, and rank 1 in the forward's buffer broadcast, also a
    # collective), and rank 3's only traceback is its KeyboardInterrupt: it printed no error of its own
    lines = [f"[01:20:{29 + i // 4}][r{r}] it={10 * (i + 1)} loss=1.3{i} elapsed={i / 3:.1f}s" for i in range(7) for r in (0, 3, 1, 2)]
    lines += ["W1208 01:21:02.431000 2005 torch/distributed/elastic/agent/server/api.py:753] Received 2 death signal, "
              "shutting down workers"]
    backward = [(f"{_SITE}/torch/_tensor.py", 623, "backward", "torch.autograd.backward("),
                (f"{_SITE}/torch/autograd/graph.py", 979, "_engine_run_backward", "return Variable._execution_engine.run_backward(")]
    broadcast = [(f"{_SITE}/torch/nn/parallel/distributed.py", 2422, "_sync_buffers", "self._sync_module_buffers(authoritative_rank)"),
                 (f"{_SITE}/torch/nn/parallel/distributed.py", 2363, "_distributed_broadcast_coalesced", "dist._broadcast_coalesced(")]
    lines += _interrupted(3, [("/home/user/job/train.py", 18, "<module>", "x, y = prefetch_next(step)"),
                              ("/home/user/job/train.py", 11, "prefetch_next", "with prefetch_lock:")])
    lines += _lost_peer(2, backward) + _lost_peer(1, broadcast) + _lost_peer(0, backward)
    lines.append("torch.distributed.elastic.multiprocessing.api.SignalException: Process 2005 got signal: 2")
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("rank_hang", 3)


def test_a_ctrl_c_that_found_every_process_computing_is_a_note() -> None:
    """torchrun forwards Ctrl-C (``Sending process N closing signal SIGINT``), each worker's
    KeyboardInterrupt is inside ``loss.backward()`` and the agent ends in ``SignalException: ...
    got signal: 2``; nothing failed (a committed log, corpus holdout33 h33a-014, the sign-language
    trainer): the job was running when stopped, a note, never a page. The same stop finding one
    process in a wait still warns."""
    def worker(inner: list[str]) -> list[str]:
        return ["Traceback (most recent call last):", '  File "/home/u/tools/train_ddp.py", line 183, in <module>',
                "    main()", '  File "/home/u/engines/trainner.py", line 108, in _backward_and_update',
                "    loss.backward()", *inner, "KeyboardInterrupt"]
    backward = [f'  File "{_SITE}/torch/autograd/__init__.py", line 200, in backward',
                "    Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass"]
    lines = [f"[2024-03-30 06:11:04,008][main.Trainner][INFO] - iteration index: {i}, batch loss: {90 - i / 10:.3f}"
             for i in range(0, 300, 100)]
    lines += ["WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 1066740 closing signal SIGINT",
              "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 1066741 closing signal SIGINT"]
    tail = ["Traceback (most recent call last):", f'  File "{_SITE}/torch/distributed/elastic/multiprocessing/api.py", '
            "line 62, in _terminate_process_handler",
            '    raise SignalException(f"Process {os.getpid()} got signal: {sigval}", sigval=sigval)',
            "torch.distributed.elastic.multiprocessing.api.SignalException: Process 1066706 got signal: 2"]
    running = [*lines, *worker(backward), *worker(backward), *tail]
    assert [(i.failure, i.severity) for i in engine_verdict(running) if i.severity in ("warning", "critical")] == []
    waiting = [f'  File "{_SITE}/torch/utils/data/dataloader.py", line 1133, in _try_get_data',
               "    data = self._data_queue.get(timeout=timeout)",
               '  File "/usr/lib/python3.9/queue.py", line 180, in get', "    self.not_empty.wait(remaining)"]
    assert any(i.severity in ("warning", "critical") for i in engine_verdict([*lines, *worker(backward), *worker(waiting), *tail]))
