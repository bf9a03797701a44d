"""A CUDA fault NCCL reports while tearing down a communicator that already failed.

NCCL's proxy thread reports an InfiniBand completion error ("NET/IB : Got completion with error
12", the transport's retries exhausted) and returns ncclSystemError up its stack; the
communicator is destroyed, and NCCL's own CUDA call in that same process (host:pid) then fails
with "Cuda failure 'an illegal memory access was encountered'". The network error is the
failure; the fault is NCCL's teardown. The lines are NCCL 2.4's (``.cu`` sources) from an
nccl-tests ``all_reduce_perf`` run under mpirun on two nodes (NVIDIA/nccl-tests issue threads,
corpus h8-012). A fault NCCL reports first, or in a process whose communicator had not failed,
stays the fault.
"""

from __future__ import annotations

from tests.helpers import engine_verdict

_IB = [
    "gpu5:35917:35994 [0] transport/net_ib.cu:788 NCCL WARN NET/IB : Got completion with error 12, opcode 1, len 0, vendor err 129",
    "gpu5:35917:35994 [0] NCCL INFO include/net.h:34 -> 2",
    "gpu5:35917:35994 [0] NCCL INFO transport/net.cu:537 -> 2",
    "gpu5:35917:35994 [0] NCCL INFO transport.cu:163 -> 2 [Proxy Thread]",
    "gpu5:35917:35917 [0] NCCL INFO Destroyed comm 0x7f24c4001af0 rank 4",
]


def _fault(proc: str) -> list[str]:
    return [
        "",
        f"{proc}:35917 [1] init.cu:194 NCCL WARN Cuda failure 'an illegal memory access was encountered'",
        f"{proc}:35917 [1] NCCL INFO init.cu:1143 -> 1",
    ]


def test_a_fault_in_the_teardown_of_a_failed_communicator_is_its_consequence() -> None:
    top = engine_verdict([*_IB, *_fault("gpu5:35917")])[0]
    assert top.failure == "nccl_error"
    assert "Got completion with error 12" in top.evidence[0].text


def test_a_fault_reported_first_is_the_fault() -> None:
    assert engine_verdict([*_fault("gpu5:35917"), *_IB])[0].failure == "cuda_illegal_memory_access"


def test_a_fault_in_another_process_is_its_own() -> None:
    assert engine_verdict([*_IB, *_fault("gpu6:40001")])[0].failure == "cuda_illegal_memory_access"
