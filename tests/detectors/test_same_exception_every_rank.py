"""The same exception, word for word, raised by several ranks at the same point is the job's own
error (a configuration every rank shares), so no rank started it, whichever torchrun saw exit
first; one rank's exception is still that rank's. (A real 3-process CPU torchrun job, torch 2.13:
SyncBatchNorm wrapped in DDP on CPU.)"""

from __future__ import annotations

from tests.helpers import engine_verdict


def _raise(rank: int, message: str) -> list[str]:
    return [f"[rank{rank}]: Traceback (most recent call last):",
            f'[rank{rank}]:   File "/home/user/job/train.py", line 31, in <module>',
            f"[rank{rank}]:     model = DDP(model)",
            f"[rank{rank}]: ValueError: {message}"]


_SYNCBN = "SyncBatchNorm layers only work with GPU modules"
_TORCHRUN = ["E1206 02:01:51.132000 27930 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: 1)"
             " local_rank: 0 (pid: 27990) of binary: /opt/venv/bin/python3"]


def test_every_rank_raising_the_same_error_names_no_rank() -> None:
    top = engine_verdict(_raise(1, _SYNCBN) + _raise(0, _SYNCBN) + _raise(2, _SYNCBN) + _TORCHRUN)[0]
    assert (top.failure, top.rank) == ("rank_exception", None)


def test_different_errors_keep_the_first_rank() -> None:
    lines = _raise(1, "bad sample 17 in shard 3") + _raise(0, "bad sample 2 in shard 0")
    assert engine_verdict(lines)[0].rank == 1


def test_the_same_error_but_for_each_ranks_own_device_names_no_rank() -> None:
    # a CREDiT DDP job (corpus holdout31 h31b-009): every rank's input left on the CPU, each
    # message naming its own device, "cuda:6" on rank 6 and "cuda:3" on rank 3
    def mismatch(r: int) -> str:
        return (f"Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:{r}! "
                "(when checking argument for argument mat1 in method wrapper_CUDA_addmm)")
    lines = [ln.replace("ValueError", "RuntimeError") for r in (6, 3) for ln in _raise(r, mismatch(r))]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("rank_exception", None)


def test_another_ranks_number_in_the_message_still_differs() -> None:
    # rank 1 names rank 2's bad shard, rank 0 names its own: two different errors
    lines = _raise(1, "shard of rank 2 is empty") + _raise(0, "shard of rank 0 is empty")
    assert engine_verdict(lines)[0].rank == 1
