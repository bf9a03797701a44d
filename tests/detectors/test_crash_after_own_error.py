"""A rank's native crash printed right below that same rank's own communication-library error is
the error's consequence: the transport failed and the process died inside it. Real lines from
sparticlesteve/pytorch-cuda-mpi-error (slurm-405737.out: MPI_Bcast of a CUDA tensor over UCX, srun
--label; corpus h21b-012)."""

from __future__ import annotations

from functools import partial

from tests.helpers import top_verdict

_UCX = ["0: [1579244748.838971] [cgpu12:56309:2]    cuda_ipc_md.c:62   UCX  ERROR cuCtxGetDevice(&cu_device) is failed. "
        "ret:invalid device context",
        "0: [1579244748.838989] [cgpu12:56309:2]       ucp_rkey.c:250  UCX  ERROR Failed to unpack remote key from remote "
        "md[4]: Input/output error"]
_SEGV = ["0: [cgpu12:56309:2:56362] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x20)",
         "0: ==== backtrace ====",
         "0:    21  /lib64/libc.so.6(clone+0x3f) [0x2aaaaafe9a2f]",
         "0: ===================",
         "srun: error: cgpu12: task 0: Segmentation fault",
         "srun: Terminating job step 405737.0",
         "srun: error: cgpu12: task 1: Terminated"]


_top = partial(top_verdict, path="slurm-405737.out")


def test_a_segfault_right_below_its_own_transport_error_is_that_errors() -> None:
    assert _top(_UCX + _SEGV) == ("nccl_error", 0)


def test_a_segfault_alone_or_far_below_is_a_crash_of_its_own() -> None:
    assert _top(_SEGV) == ("rank_segfault", 0)
    far = [*_UCX, *(f"0: [1579244748.8{i}] [cgpu12:56309:2]  mpool.c:200  UCX  DEBUG note {i}" for i in range(8)), *_SEGV]
    assert _top(far) == ("rank_segfault", 0)
