"""Runs that look like failures and are not, beside the failures they look like.

Shapes from CPU ``torchrun`` 2.13 jobs (corpus holdout32 g32c, made to tell these apart):

1. A gradient-norm outlier a guard reports and clips, then the step's own metric line logs the
   same norm again: the next norm of a *later* step says whether it came back (g32c-007).
2. A loop that skips each malformed record and logs the traceback (``logger.warning(...,
   exc_info=True)``): the last one comes near the end with one metric line left after it. The
   same exception handled before was handled again (g32c-025).
3. Ctrl-C after the run counted its steps to the total (``step 200/200``) and saved its final
   checkpoint: a stop in post-training work, not a hang or a failure (g32c-014).
4. One rank's own training loss NaN at a step its peer logged finite, then Lightning's
   EarlyStopping on every rank (``Monitored metric val_loss = nan is not finite``): the
   evaluation ran on the spoiled weights; the rank is the one whose loss went first (g32c-011).
"""

from __future__ import annotations

from tests.helpers import engine_verdict


def _loguru(t: int, rank: int, msg: str, level: str = "INFO") -> str:
    return f"2026-12-08 00:37:{t // 10:02d}.{t % 10}00 | {level:<8} | rank={rank} | {msg}"


def test_a_clipped_outlier_logged_twice_at_its_step_came_and_went() -> None:
    lines = [_loguru(s, 0, f"step {s:3d} loss {2.3 - s / 100:.4f} grad_norm 0.{390 + s % 7} lr 1.0e-03") for s in range(5, 57)]
    lines += [_loguru(57, r, "step 57: grad_norm 7.83 is 19x the running mean (0.406); clipped to 1.0", "WARNING")
              for r in (2, 1, 0, 3)]
    lines.append(_loguru(57, 0, "step  57 loss 2.8581 grad_norm 7.834 lr 1.0e-03"))
    lines += [_loguru(s, 0, f"step {s:3d} loss {2.0 - (s - 58) / 200:.4f} grad_norm 0.{398 + s % 9} lr 1.0e-03")
              for s in range(58, 100)]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.severity) == ("grad_norm_explosion", "info")


_TB = ["Traceback (most recent call last):",
       '  File "/home/user/job/train.py", line 19, in batches',
       "    r = json.loads(line)",
       '  File "/usr/lib/python3.11/json/decoder.py", line 353, in raw_decode',
       "    obj, end = self.scan_once(s, idx)",
       "json.decoder.JSONDecodeError: Expecting ',' delimiter: line 1 column {c} (char {ch})"]


def _skipped(t: str, record: int, col: int) -> list[str]:
    return [f"[2026-12-08 00:54:{t}][rank3][WARNING] skipping malformed record {record} in shard-00003.jsonl",
            *(line.format(c=col, ch=col - 1) for line in _TB)]


def _metric(t: str, step: int, loss: float) -> str:
    return f"[2026-12-08 00:54:{t}][rank0][INFO] step {step} loss {loss:.4f}"


def test_the_last_of_a_skip_loops_exceptions_was_handled_too() -> None:
    lines = [*_skipped("12,857", 41, 96), _metric("13,146", 20, 0.4976), _metric("13,556", 40, 0.4536),
             _metric("13,601", 45, 0.4412), *_skipped("13,570", 1337, 101), _metric("13,955", 60, 0.3891),
             _metric("13,980", 65, 0.3702), _metric("14,001", 70, 0.3514), *_skipped("14,039", 2050, 99),
             _metric("14,340", 80, 0.1706), "[2026-12-08 00:54:14,708][rank0][INFO] epoch finished (99 steps); saved model.pt"]
    assert all(inc.severity == "info" for inc in engine_verdict(lines))


def test_one_exception_then_a_single_metric_line_is_still_the_failure() -> None:
    # (nothing handled before it: one metric line that was already on its way proves nothing)
    lines = [_metric("13,146", 20, 0.4976), _metric("13,556", 40, 0.4536), *_skipped("14,039", 2050, 99),
             _metric("14,340", 80, 0.1706)]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.severity) == ("rank_exception", "critical")


def _interrupted_after(last: str) -> list[str]:
    lines = [f"step {s}/200 loss {4 / s:.5f}" for s in range(25, 201, 25) if s <= int(last)]
    lines += ["saved checkpoint checkpoints/step_200.pt (final)" if last == "200" else "saved checkpoint",
              "W1208 00:44:24.437000 27700 torch/distributed/elastic/agent/server/api.py:753] Received 2 death signal, "
              "shutting down workers",
              "W1208 00:44:24.438000 27700 torch/distributed/elastic/multiprocessing/api.py:1028] Sending process 30006 "
              "closing signal SIGINT"]
    for r in (0, 1):
        lines += [f"[rank{r}]: Traceback (most recent call last):",
                  f'[rank{r}]:   File "/home/user/job/train.py", line 24, in <module>', f"[rank{r}]:     time.sleep(0.5)",
                  f"[rank{r}]: KeyboardInterrupt"]
    return [*lines, "torch.distributed.elastic.multiprocessing.api.SignalException: Process 27700 got signal: 2"]


def test_a_stop_after_the_step_counter_reached_its_total_is_a_note() -> None:
    assert all(inc.severity == "info" for inc in engine_verdict(_interrupted_after("200")))


def test_a_stop_before_the_total_is_still_reported() -> None:
    assert any(inc.severity != "info" for inc in engine_verdict(_interrupted_after("150")))


def test_an_evaluations_nan_after_a_ranks_own_nan_names_that_rank() -> None:
    lines = []
    for epoch, step in enumerate((0, 25, 50, 75)):
        lines += [f"[rank 0] epoch {epoch} step {step} train_loss {1.38 - epoch / 5:.4f}",
                  f"[rank 1] epoch {epoch} step {step} train_loss {1.39 - epoch / 5:.4f}",
                  f"epoch {epoch}: val_loss {1.1 - epoch / 10:.4f}"]
    lines += ["[rank 0] epoch 4 step 100 train_loss 0.2286", "[rank 1] epoch 4 step 100 train_loss nan", "epoch 4: val_loss nan"]
    lines += [f"[rank: {r}] Monitored metric val_loss = nan is not finite. Previous best value was 0.668. "
              "Signaling Trainer to stop." for r in (1, 0)]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank, top.step) == ("nonfinite_loss", 1, 100)


def _timed_dump_then(after: list[int]) -> list[str]:
    lines = [f"[rank{r}] step {s} loss {2 - s / 100:.4f}" for s in (25, 50, 75, 100) for r in (0, 2, 1)]
    lines.append("[rank0] saving checkpoint step_100 ...")
    for _ in range(2):
        lines += ["Timeout (0:00:08)!", "Thread 0x00007f47af244b80 (most recent call first):",
                  '  File "/opt/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 5356 in barrier',
                  '  File "/home/user/exp/train.py", line 14 in save_checkpoint',
                  '  File "/home/user/exp/train.py", line 38 in <module>']
    return lines + [f"[rank{r}] step {s} loss {1 - s / 1000:.4f}" for s in after for r in (0, 2, 1)]


def test_a_timed_stack_dump_every_rank_logged_past_is_a_slow_step() -> None:
    assert all(inc.severity == "info" for inc in engine_verdict(_timed_dump_then([125, 150, 175, 200])))


def test_a_timed_stack_dump_with_no_step_after_it_is_a_hang() -> None:
    top = engine_verdict(_timed_dump_then([]))[0]
    assert top.failure == "rank_hang" and top.severity != "info"


_OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {gib}.00 GiB. GPU {r} has a total capacity of "
        "79.15 GiB of which 25.00 GiB is free.")


def _bs_search(then_oom_at: int | None) -> list[str]:
    # a batch-size search in accelerate's find_executable_batch_size style (corpus holdout32 g32e-001):
    # each rank logs the OOM at WARNING, halves its batch and retries; rank 0 logs the metric lines
    lines = []
    for bs in (512, 256, 128):
        for r in (0, 1):
            lines += [f"2026-12-08 01:14:26,1{r}0 - INFO - [rank{r}] train.bs_search - trying per-device batch_size={bs}",
                      f"2026-12-08 01:14:26,1{r}4 - WARNING - [rank{r}] train.bs_search - " + _OOM.format(gib=bs // 5, r=r),
                      f"2026-12-08 01:14:26,1{r}6 - WARNING - [rank{r}] train.bs_search - Batch size {bs} does not fit in "
                      f"memory, halving to {bs // 2} and retrying"]
    lines += [f"2026-12-08 01:14:26,7{r}0 - INFO - [rank{r}] train.bs_search - trying per-device batch_size=64" for r in (1, 0)]
    for step in range(4, 52, 4):
        lines.append(f"2026-12-08 01:14:27,{step:03d} - INFO - [rank0] train.bs_search - epoch {step // 16} step {step} "
                     f"global_batch 128 loss {18 - step / 3:.4f}")
        if step == then_oom_at:
            lines += ["2026-12-08 01:14:28,000 - ERROR - [rank1] train - " + _OOM.format(gib=12, r=1)]
            break
    return lines


def test_a_batch_size_search_that_catches_its_ooms_then_trains_is_a_note() -> None:
    assert all(inc.severity == "info" for inc in engine_verdict(_bs_search(None)))


def test_an_oom_after_the_search_that_ends_the_run_is_the_failure() -> None:
    top = engine_verdict(_bs_search(24))[0]
    assert (top.failure, top.rank, top.severity) == ("cuda_oom", 1, "critical")


def test_the_batches_of_one_evaluation_pass_are_no_series_of_evaluations() -> None:
    # "eval batch 2 mse 15.2" after "eval batch 0 mse 10.6": one pass's per-batch values vary (corpus
    # holdout32 g32e-002); a whole evaluation per epoch that jumps is still judged
    lines = [f"step {s} loss {2 - s / 100:.4f}" for s in range(4, 52, 4)]
    lines += [f"eval batch {b} mse {v}" for b, v in enumerate((10.6044, 11.3475, 15.2036, 12.2413, 10.1142, 13.4005))]
    assert engine_verdict(lines) == []


def _paddle(epochs: dict[int, int], summary_scale: float = 1.0) -> list[str]:
    # PaddlePaddle's MIRNetV2 training logs (corpus holdout32 h32a-003): workerlog.0 logs each epoch's
    # batches ("Epoch: 45\tBatch: 200/2000\tTime: ...\tLoss: 0.0065"), workerlog.1 only the epoch's
    # summary, whose "Loss" is the sum over its batches: it grows with the epoch's batch count
    lines = ["==> logs/workerlog.0 <=="]
    for e, n in epochs.items():
        lines += [f"Epoch: {e}\tBatch: {b}/{n}\tTime: {b / 2:.4f}\tLoss: 0.00{64 + b % 3}" for b in range(n // 5, n, n // 5)]
    lines.append("==> logs/workerlog.1 <==")
    lines += [f"Epoch: {e}\tTime: {n * 0.7:.4f}\tLoss: {0.0065 * n * summary_scale:.4f}\tLearningRate 0.000118"
              for e, n in epochs.items()]
    return lines


def test_an_epoch_summary_that_sums_its_batches_grows_with_their_count() -> None:
    assert engine_verdict(_paddle({45: 2000, 46: 4000, 75: 4000, 76: 24000})) == []


def test_an_epoch_summary_far_above_the_sum_of_its_batches_is_still_judged() -> None:
    lines = _paddle({45: 2000, 46: 2000, 47: 2000})
    lines += ["Epoch: 48\tTime: 1400.0000\tLoss: 240.0000\tLearningRate 0.000118",
              "Epoch: 49\tTime: 1400.0000\tLoss: 260.0000\tLearningRate 0.000118"]
    assert [inc.failure for inc in engine_verdict(lines)][:1] == ["loss_spike"]


def _bar_oom(fatal: bool) -> list[str]:
    # only rank 0 logs the loss (a tqdm bar and "step N/80" lines); rank 3's OOM warning, glued to a
    # bar fragment, says it retries with a smaller micro-batch (corpus holdout33 g33c-016)
    lines = [f"train:  {s}%|#   | {s}/80 [00:0{s // 20}<00:03, 21.63it/s, loss={6.5 - s / 30:.3f}]" for s in range(1, 34)]
    lines.append("train:  42%|####  | 34/80 [00:01<00:02, 20.86it/s, loss=5.204][rank3] WARNING step 40: CUDA out of "
                 "memory. Tried to allocate 4.88 GiB. GPU 3 has a total capacity of 39.39 GiB of which 1.87 GiB is free. "
                 "Inclu... -> retrying with micro_batch=8 x grad_accum=2")
    if fatal:
        return [*lines, "W1208 03:02:11.000000 4411 torch/distributed/elastic/multiprocessing/api.py:897] Sending "
                "process 4415 closing signal SIGTERM",
                "E1208 03:02:11.000000 4411 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) "
                "local_rank: 3 (pid: 4418) of binary: /usr/bin/python3"]
    lines += [f"train:  {s}%|#   | {s}/80 [00:02<00:01, 20.86it/s, loss={5.2 - (s - 34) / 30:.3f}]" for s in range(35, 81)]
    return [*lines, "step 60/80 loss=4.5550", "step 80/80 loss=4.0357", "finished all steps"]


def test_an_oom_of_a_rank_that_logs_no_lines_of_its_own_is_handled_when_the_job_trains_on() -> None:
    """With every rank in each step's collectives, rank 0's lines could not have gone on had rank 3
    died: its OOM was caught (a note). The same OOM that ends rank 3 is the failure."""
    assert all(inc.severity == "info" for inc in engine_verdict(_bar_oom(False)))
    top = engine_verdict(_bar_oom(True))[0]
    assert (top.failure, top.rank, top.severity) == ("cuda_oom", 3, "critical")


def _shutdown(last: int) -> list[str]:
    # two gloo ranks logging "step N/50"; rank 0 saves and exits first, and rank 1's post-training
    # sync meets its closed socket (corpus holdout33 g33f-007, healthy)
    lines = [f"2026-12-08 03:31:2{s // 10},252 - rank:{r} - runner - INFO - step {s}/50 loss 1.{s}{r}"
             for s in range(10, last + 1, 10) for r in (1, 0)]
    return [*lines, "2026-12-08 03:31:23,308 - rank:0 - runner - INFO - saved final.pt; rank 0 exiting",
            "2026-12-08 03:31:24,751 - rank:1 - runner - WARNING - ignoring error in post-training sync during shutdown: "
            "[/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by peer "
            "[127.0.0.1]:17799. This is typically caused by a remote worker crashing.",
            "2026-12-08 03:31:24,751 - rank:1 - runner - INFO - rank exiting cleanly"]


def test_a_lost_peer_after_every_rank_counted_to_its_total_is_the_shutdown() -> None:
    assert [i for i in engine_verdict(_shutdown(50)) if i.severity in ("warning", "critical")] == []
    # the same lost peer with the steps short of the total: the peer died mid-run
    assert any(i.severity == "critical" for i in engine_verdict(_shutdown(30)))
