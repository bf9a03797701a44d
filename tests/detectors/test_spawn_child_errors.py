"""torch.multiprocessing.spawn's notice names the failed process (``-- Process 1 terminated with the
following error:``) and prints its traceback below. The outermost frame of every spawned child is
spawn's own ``_wrap`` (where the child began, no communication), and a DataLoader worker's error
comes chained (``Caught OSError in DataLoader worker process 0.`` with the ``Original
ConnectionResetError``, then the exception it caused): the child's own error, not a wait or a lost
peer (corpus holdout32 g32e-008, a CPU job of two processes whose rank 1 failed to fetch a shard).
"""

from __future__ import annotations

from tests.helpers import engine_verdict

_CHILD = [
    "Traceback (most recent call last):",
    '  File "/opt/venv/lib/python3.11/site-packages/torch/multiprocessing/spawn.py", line 87, in _wrap',
    "    fn(i, *args)",
    '  File "/home/user/proj/train.py", line 42, in main',
    "    for step, x in enumerate(dl, 1):",
    '  File "/opt/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 1567, in _process_data',
    "    data.reraise()",
    '  File "/opt/venv/lib/python3.11/site-packages/torch/_utils.py", line 794, in reraise',
    "    raise exception",
    "OSError: Caught OSError in DataLoader worker process 0.",
    "Original ConnectionResetError: [Errno 104] Connection reset by peer",
    "",
    "The above exception was the direct cause of the following exception:",
    "",
    "Traceback (most recent call last):",
    '  File "/home/user/proj/train.py", line 19, in fetch',
    "    raise OSError(f'Failed to fetch {url} after 3 attempts') from err",
    "OSError: Failed to fetch https://objstore.internal/datasets/c4-mini/shard-00009.tar after 3 attempts",
]


def test_a_spawned_childs_chained_data_error_is_that_processs_failure() -> None:
    lines = [f"[2026-12-08 01:18:37,{s:03d}][train][INFO][rank 0] step {s} loss 0.{60 - s}" for s in (5, 10, 15)]
    lines += ["W1208 01:18:40.894000 1164 torch/multiprocessing/spawn.py:165] Terminating process 1166 via signal SIGTERM",
              "torch.multiprocessing.spawn.ProcessRaisedException: ", "",
              "-- Process 1 terminated with the following error:", *_CHILD]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("rank_exception", 1)
