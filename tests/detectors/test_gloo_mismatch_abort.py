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


def _fabric_abort(peers: tuple[int, ...]) -> list[str]:
    # Lightning Fabric's own launcher (no torchrun summary), loguru lines with a rank field, then
    # gloo's abort with no rank and the peers' lost connections (corpus holdout25 g25b-005)
    lines = [f"Initializing distributed: GLOBAL_RANK: {r}, MEMBER: {r + 1}/3" for r in range(3)]
    lines += [f"2026-12-07 04:29:22.98{r} | INFO     | rank={r} | __main__:main:24 - epoch 0 train_loss=1.66{r}"
              for r in range(3)]
    lines += ["terminate called after throwing an instance of 'gloo::EnforceNotMet'",
              "  what():  [enforce fail at /__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:456] "
              "op.preamble.length <= op.nbytes. 200 vs 196. Received data size doesn't match expected size. "
              "Is there a distributed collective mismatch in your code?"]
    for r in peers:
        lines += [f"[rank{r}]: Traceback (most recent call last):",
                  f"[rank{r}]:   File \"/home/ml/exp/train.py\", line 30, in main",
                  f"[rank{r}]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:537] "
                  "Read error [127.0.0.1]:29100: Connection reset by peer. This is typically caused by a remote worker "
                  "hanging or bugs in the application."]
    return lines


def test_with_no_launcher_the_one_rank_without_a_lost_peer_aborted() -> None:
    top = engine_verdict(_fabric_abort((0, 1)))[0]
    assert (top.failure, top.rank) == ("nccl_error", 2)
    assert top.data.get("inferred") is True
    # one peer's lines missing from the paste: either of two ranks may have aborted
    top = engine_verdict(_fabric_abort((0,)))[0]
    assert (top.failure, top.rank) == ("nccl_error", None)
