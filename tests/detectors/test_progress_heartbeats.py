"""A hung rank that prints nothing, found by the heartbeat it stopped giving.

Lines with a rank and a progress counter but no metric (``[heartbeat] rank=3 epoch=0 batch=20``,
a Lightning ddp_spawn job's own callback; corpus holdout17 g17b-023) make no sample, but they
show how far each rank got. When the timeout reports leave several ranks silent, the one whose
counter stopped short of all the others is the one they wait for.
"""

from __future__ import annotations

from tests.helpers import engine_verdict

_SPAWN_TIMEOUT = [
    "W1206 02:11:09.824000 4806 torch/multiprocessing/spawn.py:165] Terminating process 5003 via signal SIGTERM",
    "W1206 02:11:09.830000 4806 torch/multiprocessing/spawn.py:165] Terminating process 5004 via signal SIGTERM",
    "W1206 02:11:09.832000 4806 torch/multiprocessing/spawn.py:165] Terminating process 5006 via signal SIGTERM",
    "[rank: 3] Received SIGTERM: 15",
    "Traceback (most recent call last):",
    '  File "/opt/venv/lib/python3.11/site-packages/torch/multiprocessing/spawn.py", line 211, in join',
    "    raise ProcessRaisedException(msg, error_index, failed_process.pid)",
    "torch.multiprocessing.spawn.ProcessRaisedException: ",
    "",
    "-- Process 2 terminated with the following error:",
    "Traceback (most recent call last):",
    '  File "/opt/venv/lib/python3.11/site-packages/torch/multiprocessing/spawn.py", line 87, in _wrap',
    "    fn(i, *args)",
    "RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting "
    "30000ms for recv operation to complete",
]


def _beats(last: dict[int, int]) -> list[str]:
    return [f"[heartbeat] rank={r} epoch=0 batch={b}" for b in range(0, max(last.values()) + 1, 10)
            for r in sorted(last) if b <= last[r]]


def test_the_rank_whose_heartbeat_stopped_short_is_the_hung_one() -> None:
    top = engine_verdict(_beats({0: 30, 1: 30, 2: 30, 3: 20}) + _SPAWN_TIMEOUT)[0]
    assert (top.failure, top.rank) == ("rank_hang", 3)


def test_heartbeats_that_all_stopped_together_name_no_one() -> None:
    top = engine_verdict(_beats({0: 30, 1: 30, 2: 30, 3: 30}) + _SPAWN_TIMEOUT)[0]
    assert top.rank is None


def test_an_epoch_outranks_the_counter_within_it() -> None:
    lines = ["[heartbeat] rank=0 epoch=1 batch=0", "[heartbeat] rank=1 epoch=1 batch=0",
             "[heartbeat] rank=3 epoch=0 batch=90", *_SPAWN_TIMEOUT]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("rank_hang", 3)


def test_counts_of_things_are_no_counter() -> None:
    """'step 44: batch ready (16 samples)': 44 is the step, 16 is no batch index."""
    from tests.helpers import fed_state

    st = fed_state(["02:03:53.596 | INFO    | r0 | step 44: batch ready (16 samples)"], "train.log")
    assert [rs.last_progress for rs in st.ranks.values() if rs.last_progress is not None] == [44]
