"""nccl-tests (``all_reduce_perf`` and its siblings) name each rank's host and pid before they run, and
name only the host (and a pid) on a failure. A host with one rank in that table is that rank. The
lines are from NVIDIA/nccl-tests#102 (2022, a two-node MPICH run whose first node failed
communicator set-up: ``host3: Test NCCL failure common.cu:1125 'unhandled system error'``) and
tinygrad/open-gpu-kernel-modules#45 (the newer table with a ``Group`` column, NCCL 2.26)."""

from __future__ import annotations

from tests.helpers import engine_verdict

_TABLE = [
    "# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 validation: 1 ",
    "#",
    "# Using devices",
    "#   Rank  0 Pid 3590428 on     host3 device  0 [0x07] NVIDIA A100-SXM4-40GB",
    "#   Rank  1 Pid 450047 on     host4 device  0 [0x07] NVIDIA A100-SXM4-40GB",
]


def test_the_failing_host_is_its_one_rank() -> None:
    lines = [*_TABLE, "host3: Test NCCL failure common.cu:1125 'unhandled system error'",
             " .. host3 pid 3590858: Test failure common.cu:1017"]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("nccl_error", 0)


def test_a_host_with_two_ranks_names_neither() -> None:
    lines = ["#  Rank  0 Group  0 Pid   7995 on i-56butc28zq device  0 [0000:2c:00] NVIDIA GeForce RTX 4090",
             "#  Rank  1 Group  0 Pid   7995 on i-56butc28zq device  1 [0000:2d:00] NVIDIA GeForce RTX 4090",
             "i-56butc28zq: Test NCCL failure common.cu:1125 'unhandled system error'"]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("nccl_error", None)


def test_a_failure_of_a_host_the_table_does_not_list_names_no_rank() -> None:
    top = engine_verdict([*_TABLE, "host9: Test NCCL failure common.cu:1125 'unhandled system error'"])[0]
    assert top.rank is None
