"""A collective timed out and the ranks are level in their steps: the rank whose LAST own line
went somewhere else than every peer's is the one the collective waited for (parse.py
``_last_notes``, oddrank.``last_own_lines`` / ``lagging_rank``, correlate.hang).

torch.multiprocessing.spawn jobs (gloo, torch 2.x) whose workers log one line per step with their
rank; one worker goes elsewhere (a validation only it runs, a prefetch worker it waits on) and
never reaches the all_reduce its peers wait in; spawn then prints the first failed process's
gloo timeout and terminates the rest. Most of those last lines match no rule, so only the
file's last lines show them."""

from __future__ import annotations

import pytest

from detectors.engine import Engine
from detectors.model import Incident
from detectors.oddrank import lagging_rank, last_own_lines
from tests.helpers import engine_verdict, fed_whole_and_chunked

# spawn's report of process 0's gloo timeout (the parent's traceback, then the failed process's
# block), after "Terminating process PID via signal SIGTERM" for the others (torch >= 2.2)
_SPAWN_TIMEOUT = [
    "W1206 02:04:24.276000 30614 torch/multiprocessing/spawn.py:165] Terminating process 30701 via signal SIGTERM",
    "W1206 02:04:24.279000 30614 torch/multiprocessing/spawn.py:165] Terminating process 30702 via signal SIGTERM",
    "W1206 02:04:24.281000 30614 torch/multiprocessing/spawn.py:165] Terminating process 30703 via signal SIGTERM",
    "Traceback (most recent call last):",
    '  File "/home/user/exp/train.py", line 29, in <module>',
    "    mp.spawn(worker, args=(4,), nprocs=4)",
    '  File "/opt/venv/lib/python3.11/site-packages/torch/multiprocessing/spawn.py", line 211, in join',
    "    raise ProcessRaisedException(msg, error_index, failed_process.pid)",
    "torch.multiprocessing.spawn.ProcessRaisedException: ",
    "",
    "-- Process 0 terminated with the following error:",
    "Traceback (most recent call last):",
    '  File "/opt/venv/lib/python3.11/site-packages/torch/multiprocessing/spawn.py", line 87, in _wrap',
    "    fn(i, *args)",
    '  File "/home/user/exp/train.py", line 22, in worker',
    "    dist.all_reduce(w.grad)",
    '  File "/opt/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 3252, in all_reduce',
    "    work.wait()",
    "RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting "
    "25000ms for recv operation to complete",
]

# each rank's lines in three real formats: loguru's default format with a rank field bound into
# it ("{time:HH:mm:ss.SSS} | {level: <8} | r{extra[rank]} | {message}"), Python logging's
# "%(asctime)s | rank %(rank)d | %(message)s", torchrun --tee's "[rankN]:" before a print, and its
# "[defaultN]:" (the local rank only: one node, so the global rank too)
_FORMATS = {
    "torchrun_local": lambda r, t, msg: f"[default{r}]:{msg}",
    "loguru": lambda r, t, msg: f"02:03:53.{t:03d} | INFO     | r{r} | {msg}",
    "logging": lambda r, t, msg: f"2026-12-06 02:03:53,{t:03d} | rank {r} | {msg}",
    "torchrun_tee": lambda r, t, msg: f"[rank{r}]: {msg}",
}


def _job(fmt: str, last: dict[int, str]) -> list[str]:
    """Four ranks at steps 41-44 (the same step each), then each rank's own ``last`` line, then
    spawn's report of process 0's timeout."""
    line = _FORMATS[fmt]
    out = [line(r, 10 * s + r, f"step {s} | loss {0.5 - s / 100 + r / 1000:.4f}") for s in range(41, 45) for r in range(4)]
    out += [line(r, 500 + r, msg) for r, msg in last.items()]
    return out + _SPAWN_TIMEOUT


_DONE = "epoch 1 done (44 steps)"


def _top(lines: list[str]) -> Incident:
    return engine_verdict(lines)[0]


@pytest.mark.parametrize("fmt", sorted(_FORMATS))
def test_the_rank_that_went_elsewhere_hung(fmt: str) -> None:
    # rank 2 starts a validation only it runs; ranks 0, 1, 3 end the epoch and wait in all_reduce
    top = _top(_job(fmt, {0: _DONE, 1: _DONE, 2: "running validation on 64 batches", 3: _DONE}))
    assert (top.failure, top.rank) == ("rank_hang", 2)
    assert top.data["last_note"] == "apart"
    assert "running validation" in top.evidence[0].text


@pytest.mark.parametrize("fmt", sorted(_FORMATS))
def test_level_last_lines_name_no_rank(fmt: str) -> None:
    # every rank's last line is the same: no rank stands apart, the timeout names none
    top = _top(_job(fmt, {r: _DONE for r in range(4)}))
    assert top.failure == "collective_timeout"
    assert top.rank is None


def test_the_rank_behind_in_its_last_note_hung() -> None:
    # rank 3 printed the same note one step short of its peers
    last = {0: "step 45: batch ready (16 samples)", 1: "step 45: batch ready (16 samples)",
            2: "step 45: batch ready (16 samples)", 3: "step 44: batch ready (16 samples)"}
    top = _top(_job("loguru", last))
    assert (top.failure, top.rank) == ("rank_hang", 3)
    assert top.data["last_note"] == "behind"


def test_a_rank_without_a_last_note_leaves_it_open() -> None:
    # rank 3 printed nothing of its own in the file's last lines: it may be the one that stands apart
    lines = _job("loguru", {0: _DONE, 1: _DONE, 2: "running validation on 64 batches"})
    lines = [ln for ln in lines if "| r3 |" not in ln]
    top = _top(lines)
    assert top.rank != 2


def test_a_teardown_note_is_not_a_rank_going_elsewhere() -> None:
    # Lightning's "[rank: 2] Received SIGTERM: 15" comes from spawn's teardown, after the timeout
    lines = [*_job("logging", {r: _DONE for r in range(4)}), "[rank: 2] Received SIGTERM: 15"]
    top = _top(lines)
    assert top.failure == "collective_timeout"
    assert top.rank is None


@pytest.mark.parametrize("size", [1, 3, 7, 64])
def test_chunking_does_not_change_the_last_notes(size: int) -> None:
    # live reads a file a few lines at a time, offline in one chunk: the notes are the same, also
    # when the file is longer than the window the notes are read from (earlier notes leave it)
    early = [f"02:01:{s % 60:02d}.{r:03d} | INFO     | r{r} | warm-up batch {s} of rank {r} read ({s * 7} kB)"
             for s in range(300) for r in range(4 if s < 290 else 3)]
    lines = early + _job("loguru", {0: _DONE, 1: "running validation on 64 batches", 2: _DONE, 3: _DONE})
    whole, live = fed_whole_and_chunked(lines, size)
    assert whole.state.last_notes == live.state.last_notes
    assert whole.state.last_notes["train.log"][("g", 1)][2].line == len(early) + 18
    assert [(i.failure, i.rank) for i in whole.verdict()] == [(i.failure, i.rank) for i in live.verdict()]
    assert (whole.verdict()[0].failure, whole.verdict()[0].rank) == ("rank_hang", 1)
    # part way through, while rank 3's last warm-up lines are still in the window, too
    part = len(early) - 5
    whole = Engine("t")
    whole.feed("".join(f"{ln}\n" for ln in lines[:part]).encode(), 1, whole.open_file("train.log"))
    live = Engine("t")
    fs = live.open_file("train.log")
    for i in range(0, part, size):
        live.feed("".join(f"{ln}\n" for ln in lines[i:min(i + size, part)]).encode(), i + 1, fs)
    assert whole.state.last_notes == live.state.last_notes
    assert sorted(whole.state.last_notes["train.log"]) == [("g", 0), ("g", 1), ("g", 2), ("g", 3)]


def test_per_rank_files_untagged_lines_are_the_files_rank() -> None:
    # per-rank log files (one per worker, its lines untagged): each file's last line is its rank's
    eng = Engine("t")
    for r in range(3):
        fs = eng.open_file(f"logs/rank{r}.log", rank=r)
        msg = "step 137: loading next shard" if r == 1 else "step 125 | loss 0.0561"
        body = [f"2026-12-07 02:25:06.{100 + r:03d} | INFO | step {s} | loss 0.06" for s in (100, 125)] + [
            f"2026-12-07 02:25:06.{500 + r:03d} | INFO | {msg}"]
        eng.feed("".join(f"{ln}\n" for ln in body).encode(), 1, fs)
    notes = {r: n for per_file in eng.state.last_notes.values() for (_, r), n in per_file.items()}
    assert sorted(notes) == [0, 1, 2]
    assert lagging_rank({r: n[1] for r, n in notes.items()}) == (1, "apart")


def test_last_own_lines_skip_failures_and_frames() -> None:
    # what every failing rank prints alike is no note of where it went (torchrun --tee prefixes)
    lines = [
        "[rank0]: epoch 1 done",
        "[rank1]: epoch 1 done",
        "[rank1]: Traceback (most recent call last):",
        '[rank1]:   File "/home/user/train.py", line 29, in <module>',
        "[rank1]:     dist.barrier()",
        "[rank1]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer",
        "[rank0]:[E1207 06:57:11.688 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout",
    ]
    got = last_own_lines(lines)
    assert {r: n.body for r, n in got.items()} == {("g", 0): "epoch 1 done", ("g", 1): "epoch 1 done"}
    assert got[("g", 1)].index == 1


def test_lagging_rank_needs_three_ranks_and_one_apart() -> None:
    assert lagging_rank({0: "epoch 1 done", 1: "running validation"}) is None
    assert lagging_rank({0: "a", 1: "b", 2: "c"}) is None
    assert lagging_rank({0: "a", 1: "b", 2: "b", 3: "a"}) is None
    assert lagging_rank({0: "step 4 loss 0.5", 1: "step 4 loss 0.6", 2: "step 4 loss 0.7"}) is None
    assert lagging_rank({0: "Epoch 9: 35batch", 1: "Epoch 9: 26batch", 2: "Epoch 9: 35batch"}) == (1, "behind")


def test_the_notes_survive_the_daemons_checkpoint() -> None:
    # the engine checkpoint (monitor/snapshot.py) holds the job's and each file's notes
    import json

    from monitor.snapshot import dump, load

    eng = Engine("t")
    fs = eng.open_file("train.log")
    eng.feed("".join(f"{ln}\n" for ln in _job("loguru", {0: _DONE, 1: "running validation", 2: _DONE, 3: _DONE})).encode(),
             1, fs)
    back = load(json.loads(json.dumps(dump({"engine": eng, "file": fs}))))
    assert back["engine"].state.last_notes == eng.state.last_notes
    assert (back["file"].notes, back["file"].notes_key) == (fs.notes, fs.notes_key)
    assert (back["engine"].verdict()[0].failure, back["engine"].verdict()[0].rank) == ("rank_hang", 1)


# torchrun (torch 2.13) stopped from outside by SIGTERM (a job's time limit, ``timeout -s TERM``)
_SITE = "/opt/venv/lib/python3.11/site-packages/torch/distributed/elastic"
_STOPPED = [
    f"W1207 00:50:10.918000 18820 {_SITE}/agent/server/api.py:753] Received 15 death signal, shutting down workers",
    *[f"W1207 00:50:10.918000 18820 {_SITE}/multiprocessing/api.py:1028] Sending process {pid} closing signal SIGTERM"
      for pid in range(18845, 18849)],
    "Traceback (most recent call last):",
    f'  File "{_SITE}/multiprocessing/api.py", line 86, in _terminate_process_handler',
    '    raise SignalException(f"Process {os.getpid()} got signal: {sigval}", sigval=sigval)',
    "torch.distributed.elastic.multiprocessing.api.SignalException: Process 18820 got signal: 15",
]


def _kv_steps(last: dict[int, str]) -> list[str]:
    # logfmt lines ("ts=... rank=N event=... step=N"), as structlog's KeyValueRenderer writes them
    out = []
    for s in range(30, 37):
        for r in range(4):
            out += [f"ts=2026-12-07T00:49:5{s % 10}.2{r}0 rank={r} event=batch_ready step={s}",
                    f"ts=2026-12-07T00:49:5{s % 10}.2{r}1 rank={r} event=grad_sync_begin step={s}",
                    f"ts=2026-12-07T00:49:5{s % 10}.2{r}2 rank={r} event=step_end step={s} loss={1.1 - s / 100:.5f}"]
    return out + [f"ts=2026-12-07T00:49:51.29{r} rank={r} {msg}" for r, msg in last.items()]


def test_a_job_stopped_from_outside_names_the_rank_whose_last_note_stands_apart() -> None:
    # at step 37 ranks 0-2 began the gradient sync, rank 3 only got its batch; torchrun is stopped
    last = {r: "event=grad_sync_begin step=37" for r in range(3)} | {3: "event=batch_ready step=37"}
    top = _top([*_kv_steps(last), *_STOPPED])
    assert (top.failure, top.severity, top.rank) == ("rank_hang", "warning", 3)
    assert top.data["last_note"] == "apart"


def test_a_job_stopped_from_outside_with_level_notes_names_no_rank() -> None:
    top = _top([*_kv_steps({r: "event=grad_sync_begin step=37" for r in range(4)}), *_STOPPED])
    assert (top.failure, top.severity, top.rank) == ("rank_hang", "warning", None)


def test_of_two_ranks_the_one_a_count_short_is_behind() -> None:
    assert lagging_rank({0: "step 17 micro 2 sync false", 1: "step 17 micro 1 sync false"}) == (1, "behind")
    assert lagging_rank({0: "step 16 micro 3", 1: "step 17 micro 0"}) is None  # two places differ
    assert lagging_rank({0: "epoch 1 done", 1: "running validation"}) is None  # which is odd?
    assert lagging_rank({0: "step 17 micro 2", 1: "step 17 micro 2"}) is None


def test_two_ranks_stopped_from_outside_the_one_behind_in_its_micro_step_hung() -> None:
    # structlog's JSONRenderer lines, one per gradient-accumulation micro-step (the last one syncs);
    # rank 1 stalls inside micro-step 2 while rank 0 waits in its all_reduce; torchrun is stopped
    def micro(r: int, s: int, m: int) -> str:
        return (f'{{"rank": {r}, "world_size": 2, "step": {s}, "micro": {m}, "loss": {1 + m / 10 + r / 100:.5f}, '
                f'"sync": {"true" if m == 3 else "false"}, "event": "micro_step", "level": "info", '
                f'"timestamp": "2026-12-07T02:10:00.{100 * s + 10 * m + r:06d}Z"}}')
    lines = [micro(r, s, m) for s in range(14, 17) for m in range(4) for r in range(2)]
    lines += [micro(0, 17, m) for m in range(3)] + [micro(1, 17, m) for m in range(2)]
    top = _top([*lines, *_STOPPED])
    assert (top.failure, top.severity, top.rank) == ("rank_hang", "warning", 1)
    assert top.data["last_note"] == "behind"


# torchrun (torch 2.x) jobs whose ranks wait in init_process_group's store for a rank that never
# arrives: each waiting rank raises DistStoreError with an untagged traceback (no rank named), then
# torchrun's summary lists the exits (corpus holdout18 g18-068 has this shape with three ranks); the
# world's size is the pasted command line's
_VENV = "/opt/venv/lib/python3.11/site-packages/torch/distributed"


def _store_wait(absent: int) -> list[str]:
    return [
        "Traceback (most recent call last):",
        '  File "/home/user/job/train.py", line 8, in <module>',
        '    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=20))',
        f'  File "{_VENV}/distributed_c10d.py", line 2169, in _new_process_group_helper',
        "    backend_class = ProcessGroupGloo(",
        f"torch.distributed.DistStoreError: wait timeout after 20000ms, keys: /default_pg/0//cpu//0/{absent}",
    ]


def _summary(failed: list[int], stopped: int) -> list[str]:
    out = [f"W1206 03:43:42.887000 8171 {_VENV}/elastic/multiprocessing/api.py:1028] Sending process {8180 + stopped} closing signal SIGTERM",
           f"E1206 03:43:42.895000 8171 {_VENV}/elastic/multiprocessing/api.py:1002] failed (exitcode: 1) local_rank: {failed[0]} "
           f"(pid: {8180 + failed[0]}) of binary: /opt/venv/bin/python3.11",
           "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
           "============================================================", "train.py FAILED",
           "------------------------------------------------------------", "Failures:"]
    for i, r in enumerate(failed[1:], 1):
        out += [f"[{i}]:", "  time      : 2026-12-06_03:43:42", "  host      : localhost", f"  rank      : {r} (local_rank: {r})",
                f"  exitcode  : 1 (pid: {8180 + r})", "  error_file: <N/A>",
                "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"]
    out += [f"[{len(failed)}]:", "  time      : 2026-12-06_03:43:42", "  host      : localhost",
            f"  rank      : {stopped} (local_rank: {stopped})", f"  exitcode  : -15 (pid: {8180 + stopped})  (SIGTERM)",
            "  error_file: <N/A>", f"  traceback : Signal 15 (SIGTERM) received by PID {8180 + stopped}",
            "------------------------------------------------------------", "Root Cause (first observed failure):", "[0]:",
            "  time      : 2026-12-06_03:43:42", "  host      : localhost", f"  rank      : {failed[0]} (local_rank: {failed[0]})",
            f"  exitcode  : 1 (pid: {8180 + failed[0]})", "  error_file: <N/A>",
            "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
            "============================================================"]
    return out


# a print with the rank in brackets, and Python logging's "%(levelname)s:%(name)s:rank %(rank)d: %(message)s"
_TAGS = {"print": lambda r, msg: f"[rank {r}] {msg}", "logging": lambda r, msg: f"INFO:__main__:rank {r}: {msg}"}


@pytest.mark.parametrize("tag", sorted(_TAGS))
def test_unnamed_store_waits_name_the_rank_whose_last_note_stands_apart(tag: str) -> None:
    # ranks 0-2 got their dataset ready and called init_process_group; rank 3 is still preparing it
    say = _TAGS[tag]
    lines = ["$ torchrun --nproc_per_node=4 train.py", *[say(r, "preparing dataset cache ...") for r in range(4)]]
    lines += [say(r, "dataset ready; init_process_group(gloo)") for r in range(3)]
    lines += [*_store_wait(3), *_store_wait(3), *_store_wait(3), *_summary([0, 1, 2], 3)]
    top = _top(lines)
    assert (top.failure, top.rank) == ("rank_hang", 3)
    assert top.data["last_note"] == "apart"


def test_unnamed_store_waits_with_level_notes_name_no_hung_rank() -> None:
    say = _TAGS["print"]
    lines = ["$ torchrun --nproc_per_node=4 train.py", *[say(r, "dataset ready; init_process_group(gloo)") for r in range(4)]]
    lines += [*_store_wait(3), *_store_wait(3), *_store_wait(3), *_summary([0, 1, 2], 3)]
    top = _top(lines)
    assert top.failure != "rank_hang"


def test_unnamed_store_waits_in_a_world_of_unknown_size_name_no_hung_rank() -> None:
    # no launcher line says how many ranks there are: a rank the excerpt does not show may be the one
    say = _TAGS["print"]
    lines = [say(r, "preparing dataset cache ...") for r in range(4)]
    lines += [say(r, "dataset ready; init_process_group(gloo)") for r in range(3)]
    lines += [*_store_wait(3), *_store_wait(3), *_store_wait(3), *_summary([0, 1, 2], 3)]
    assert _top(lines).failure != "rank_hang"


def test_unnamed_store_waits_name_no_rank_whose_note_differs_in_numbers_only() -> None:
    # rank 3 was given another store address (its own port): other numbers, not a rank behind
    say = _TAGS["print"]
    lines = ["$ torchrun --nproc_per_node=4 train.py",
             *[say(r, f"init_process_group(gloo) master=localhost:{29511 if r == 3 else 44131}") for r in range(4)]]
    lines += [*_store_wait(3), *_store_wait(3), *_store_wait(3), *_summary([0, 1, 2], 3)]
    assert _top(lines).failure != "rank_hang"


def test_the_notes_and_a_context_event_of_the_same_line_keep_their_own_mqtt_ids() -> None:
    # the aggregator drops a second event with one id: the notes sent after a chunk that ended on
    # a context line (a world size, a tqdm bar at 0) must not take that line's id
    from detectors.model import Event, EventKind, Source
    from monitor.mqtt import event_id

    src = Source("train.log", 20, "Trainer: world_size=4")
    ctx = Event(EventKind.CONTEXT, src, data={"key": "world_size", "value": 4})
    notes = Event(EventKind.CONTEXT, Source("train.log", 20, ""), data={"key": "last_notes", "value": "0\t20\tx\tx"})
    assert event_id("node1", ctx) != event_id("node1", notes)


def test_a_monitors_status_table_gives_each_rank_its_last_state() -> None:
    """A watchdog thread's table of every rank's heartbeat (``rank | step | phase | last beat |
    status``, one row per rank) printed until an outer ``timeout`` SIGTERMs torchrun: the one rank
    whose phase stands apart (``data`` while its peers sit in ``compute``, the all-reduce) held the
    others up (corpus holdout33 g33-013, a CPU torchrun job)."""
    table = ["[monitor] ---- heartbeat table ----", "[monitor] rank | step | phase   | last beat    | status"]
    rows = [f"[monitor]    {r} |  121 | {'data   ' if r == 1 else 'compute'} |   {ago}s ago | STALE" for r in range(4)
            for ago in ("19.5",)]
    assert lagging_rank({k[1]: n.body for k, n in last_own_lines([*table, *rows]).items()}) == (1, "apart")
    lines = [f"[rank{r}] step {s} loss {2 - s / 100:.3f}" for s in range(100, 121, 10) for r in range(4)]
    lines += [*table, *rows, *table[1:], *(row.replace("19.5", "25.5") for row in rows),
              "W1208 02:51:37.000000 1958 torch/distributed/elastic/agent/server/api.py:723] Received 15 death signal, "
              "shutting down workers",
              "torch.distributed.elastic.multiprocessing.api.SignalException: Process 1958 got signal: 15"]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("rank_hang", 1)
    # every rank in the same phase: no one stands apart
    level = [ln.replace("data   ", "compute") for ln in lines]
    assert all(i.rank is None for i in engine_verdict(level))


def test_a_monitors_status_row_about_a_rank_is_that_ranks_state() -> None:
    """rank 0's watchdog prints a heartbeat row for each rank at ERROR level, rich's handler leaving
    the time column blank within the second (corpus holdout30 g30c-008)."""
    rows = [f"           ERROR    [r0] heartbeat rank {r}: step 52 phase {'data' if r == 2 else 'fwd_bwd'}, 20.0s ago  train.py:38"
            for r in range(4)]
    assert lagging_rank({k[1]: n.body for k, n in last_own_lines(rows).items()}) == (2, "apart")


def _checksum_loop(retries: bool) -> list[str]:
    # every rank logs a step each third of a second with a clock to the millisecond; then rank 2 alone
    # prints its data loader's retries until an outer `timeout` SIGTERMs torchrun 16 s after the last
    # step (corpus holdout33 g33-015)
    lines = [f"2026-12-08 03:01:{13 + s // 30:02d},{(s * 33) % 1000:03d} [rank{r}] INFO trainer: step {s} loss 1.{r}{s % 7} "
             f"(33.1 ms/step)" for s in range(10, 51, 10) for r in (3, 2, 1, 0)]
    if retries:
        lines += ["2026-12-08 03:01:15,168 [rank2] WARNING data: record 1829 failed checksum, retrying (attempt 1)",
                  "2026-12-08 03:01:23,172 [rank2] WARNING data: record 1829 failed checksum, retrying (attempt 33177256)"]
    return [*lines, "W1208 03:01:31.100000 9754 torch/distributed/elastic/agent/server/api.py:753] Received 15 death "
            "signal, shutting down workers",
            "torch.distributed.elastic.multiprocessing.api.SignalException: Process 9754 got signal: 15"]


def test_a_stop_after_one_rank_went_on_alone_in_a_retry_loop_names_it() -> None:
    """A silence of fifty steps' time is too short to call a hang by itself (a checkpoint may take
    it), but one rank printing its own note after every metric line, apart from its peers' last
    lines, went elsewhere while they waited."""
    top = engine_verdict(_checksum_loop(True))[0]
    assert (top.failure, top.rank) == ("rank_hang", 2)
    assert not [i for i in engine_verdict(_checksum_loop(False)) if i.failure == "rank_hang" and i.rank is not None]
