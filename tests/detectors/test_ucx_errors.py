"""UCX, the RDMA transport under Open MPI, Horovod's MPI ops, UCC and NIXL: its ERROR lines for
a failed verbs call and its mlx5 transport giving up on a link are communication-library
failures (nccl_error); its warnings are not.

Real pastes: jipolanco/PencilFFTs.jl#54 (four MPI ranks failing ibv_reg_mr), horovod/horovod#1390
(RoCE retries exhausted, then UCX's fatal-error backtrace)."""

from __future__ import annotations

from tests.helpers import engine_verdict

_REG_MR = [
    "rank:0GPU:CuDevice(0)",
    "rank:1GPU:CuDevice(1)",
    "data size:(5120, 32, 32)",
    "Start data allocationg",
    "[1656470804.862083] [gpu13:416431:0]          ib_md.c:438  UCX  ERROR ibv_reg_mr(address=0x60ac00400, "
    "length=10485760, access=0xf) failed: Cannot allocate memory",
    "[1656470804.862186] [gpu13:416431:0]         ucp_mm.c:110  UCX  ERROR failed to register address 0x60ac00400 "
    "length 10485760 on md[5]=ib/mlx5_0: Input/output error",
]
_RETRY = [
    "[ksgpu-v-051:51920:0:52950] ib_mlx5_log.c:139  Transport retry count exceeded on mlx5_0:1/RoCE (synd 0x15 vend 0x85 hw_synd 0/0)",
    "[ksgpu-v-051:51920:0:52950] ib_mlx5_log.c:139  RC QP 0xc8d wqe[837]: SEND --e [va 0x7f11d4dc1640 len 101 lkey 0x368d04]",
    "==== backtrace (tid:  52950) ====",
    " 0 0x0000000000047798 ucs_fatal_error_message()  ???:0",
]


def test_a_failed_verbs_call_is_a_comm_library_error() -> None:
    top = engine_verdict(_REG_MR)[0]
    assert (top.failure, top.rank) == ("nccl_error", None)


def test_exhausted_link_retries_are_a_comm_library_error() -> None:
    assert [i.failure for i in engine_verdict(_RETRY)][:1] == ["nccl_error"]


def test_a_ucx_warning_is_quiet() -> None:
    lines = ["[1656470804.861000] [gpu13:416431:0]          ib_md.c:1183 UCX  WARN  IB: ibv_fork_init() was disabled "
             "or failed, yet a fork() has been issued.",
             *[f"step {s} | loss {2.3 - 0.01 * s:.4f}" for s in range(1, 15)]]
    assert not [i for i in engine_verdict(lines) if i.severity == "critical"]
