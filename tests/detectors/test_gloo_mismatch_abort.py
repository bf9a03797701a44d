"""gloo's receive-size enforce: a collective mismatch aborts the process with C++'s std::terminate.

``terminate called after throwing an instance of 'gloo::EnforceNotMet'`` / ``what(): [enforce fail
at .../gloo/transport/tcp/pair.cc:456] op.preamble.length <= op.nbytes. 576 vs 512. Received data
size doesn't match expected size.`` is printed by the process that dies of SIGABRT (torchrun: exit
-6); its peers then lose their connection. The report names no rank, and a peer's rank-tagged
traceback printed right below it is not its process's (a process that called std::terminate
prints no Python traceback). Lines from CPU torchrun 2.13 jobs (corpus holdout19 g19-014, g19-029).
"""

from __future__ import annotations

from tests.helpers import engine_verdict

_ABORT = [
    "stage1 | step  40 | loss 1.1496",
    "terminate called after throwing an instance of 'gloo::EnforceNotMet'",
    "  what():  [enforce fail at /__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:456] "
    "op.preamble.length <= op.nbytes. 576 vs 512. Received data size doesn't match expected size. Is there a "
    "distributed collective mismatch in your code?",
    "[rank0]: Traceback (most recent call last):",
    '[rank0]:   File "/home/user/job/train.py", line 18, in <module>',
    "[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:534] Read error "
    "[127.0.0.1]:41219: Connection reset by peer",
]
_FAILED = ("E1206 05:23:18.813000 31858 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: -6) "
           "local_rank: 1 (pid: 31885) of binary: /opt/venv/bin/python3.11")
_TORN = ("W1206 05:23:18.770000 31858 torch/distributed/elastic/multiprocessing/api.py:1028] Sending process 31884 "
         "closing signal SIGTERM")


def test_the_mismatch_is_the_aborted_workers_nccl_error() -> None:
    top = engine_verdict([*_ABORT, _TORN, _FAILED])[0]
    assert (top.failure, top.rank) == ("nccl_error", 1)


def test_the_peer_traceback_below_does_not_claim_the_abort() -> None:
    top = engine_verdict(_ABORT)[0]
    assert (top.failure, top.rank) == ("nccl_error", None)
