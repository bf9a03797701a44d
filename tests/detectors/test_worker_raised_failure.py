"""A failure a worker raised as an exception, untagged, and the one worker its launcher saw fail.

``torch.multiprocessing.spawn`` prints the failed process's traceback under ``-- Process 1
terminated with the following error:`` with no rank tag. When the exception is a catalog failure
of its own (here fp16's ``RuntimeError: value cannot be converted to type c10::Half without
overflow`` from a ``masked_fill(mask, -1e9)`` on half scores), it is that worker's, as an
untagged ``rank_exception`` or OOM already was. Shape: torch 2.13's spawn on CPU (corpus
g26c-009's job); masked_fill's message as in huggingface/transformers#17224-style reports.
"""

from __future__ import annotations

from tests.helpers import engine_verdict

_LINES = [
    "rank 0 | step   32 | loss 1.0024 | lr 1.00e-03",
    "rank 1 | step   32 | loss 0.9733 | lr 1.00e-03",
    "W1207 06:54:57.702000 6061 torch/multiprocessing/spawn.py:165] Terminating process 6064 via signal SIGTERM",
    "Traceback (most recent call last):",
    '  File "/home/user/job/train.py", line 36, in <module>',
    "    mp.spawn(worker, args=(2,), nprocs=2, join=True)",
    '  File "/opt/venv/lib/python3.11/site-packages/torch/multiprocessing/spawn.py", line 211, in join',
    "    raise ProcessRaisedException(msg, error_index, failed_process.pid)",
    "torch.multiprocessing.spawn.ProcessRaisedException: ",
    "-- Process 1 terminated with the following error:",
    "Traceback (most recent call last):",
    '  File "/opt/venv/lib/python3.11/site-packages/torch/multiprocessing/spawn.py", line 87, in _wrap',
    "    fn(i, *args)",
    '  File "/home/user/job/train.py", line 11, in forward',
    "    scores = scores.masked_fill(pad_mask[:, None, :], -1e9)",
    "RuntimeError: value cannot be converted to type c10::Half without overflow",
]


def test_the_spawned_process_that_raised_it_is_named() -> None:
    top = engine_verdict(_LINES)[0]
    assert top.rank == 1
    assert top.failure != "rank_exception"  # read as the fp16 failure it is, not a bare exception
