"""NCCL's own WARN lines: the ones reporting a failure are ``nccl_error``; the WARNs a healthy
job prints (a missing optional library, a sysfs path) are not. Every line is a real one."""

from __future__ import annotations

import pytest

from detectors.model import EventKind
from detectors.parse import default_parser
from detectors.parsers.base import FileState
from tests.helpers import engine_verdict


def _matches(line: str) -> list[tuple[str | None, int | None]]:
    events = default_parser().parse_line(line, 1, FileState("x.log"))
    return [(ev.failure, ev.rank) for ev in events if ev.kind is EventKind.MATCH]


@pytest.mark.parametrize("line", [
    # bootstrap connect refused (espnet/espnet, corpus d4-012)
    "tj1-asr-train-v100-13:941227:943077 [0] include/socket.h:390 NCCL WARN Connect to 10.38.10.112<21724> failed : Connection refused",
    # the newer socket code's wording (corpus holdout3)
    "h100-15:139:1092 [7] socket.c:485 NCCL WARN socketStartConnect: Connect to 10.0.0.82<38455> failed : Software caused connection abort",
    # NCCL 2.4's collective check (NVIDIA/nccl#248, corpus dist-120)
    "init.cc:1247 NCCL WARN Mismatched collective detected, please check your collective calls at and around rank 39. "
    "You can use NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL to see the collective logs",
    # IB health check (corpus dev)
    "h100-28:238:1313 [0] transport/net_ib.cc:139 NCCL WARN communicator encountered a fatal error (detected in ncclIbTest)",
    # proxy socket (corpus dev)
    "gpu004:2200689:2200705 [2] proxy.cc:1143 NCCL WARN Socket recv failed while polling for opId=0x7f4778cdaae8",
    # InfiniBand async events that are failures (Lightning-AI/lit-llama#380, corpus dist-100; corpus dist-099)
    "...-48:34050:34121 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : port error",
    "gpu-a-17:2201:2290 [3] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : local catastrophic error",
    # other NET/IB failures keep their reading
    "n136-081-017:201805:201927 [0] transport/net_ib.cc:667 NCCL WARN NET/IB : collective mismatch error local size 32768 "
    "remote 1048576 addr 0 rkey 3beac3 seq adf/adf",  # NVIDIA/nccl#531
])
def test_failure_warns_are_nccl_errors(line: str) -> None:
    assert [f for f, _ in _matches(line)] == ["nccl_error"]


def test_two_processes_claiming_one_rank_name_no_rank() -> None:
    # NCCL bootstrap.cc under Slurm (Lightning-AI/pytorch-lightning, corpus d4-013): "rank 1" is a slot
    line = "hpc-25-14:18569:18835 [0] bootstrap.cc:131 NCCL WARN Bootstrap Root : rank 1 of 8 ranks has already checked in"
    assert _matches(line) == [("nccl_error", None)]


@pytest.mark.parametrize("line", [
    "DESKTOP:36629:36629 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]",
    "DESKTOP:36629:36635 [0] graph/xml.cc:332 NCCL WARN Could not find real path of /sys/class/pci_bus/0000:21/../../0000:21:00.0",
    # informational InfiniBand async events NCCL prints as WARN (transport/net_ib.cc, "Got async event : %s"
    # with rdma-core's ibv_event_type_str); UCX treats the same events as diagnostics (openucx/ucx#7349) and
    # NVIDIA/nccl#1819 the GID change as a performance matter
    "gpu1:5021:5386 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : client reregistration",
    "gpu1:5021:5386 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : port active",
    "gpu1:5021:5386 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : GID table change",
    "gpu1:5021:5386 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : SM change",
])
def test_benign_warns_are_not_failures(line: str) -> None:
    assert _matches(line) == []


def _nccl_error(rank: int) -> str:
    # torch 2.6's DistBackendError as every rank printed it (corpus holdout5 h5-054), rank varied
    return (f"[rank{rank}]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
            "NCCLUtils.cpp:77, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.25.1")


def test_an_nccl_error_every_member_reports_is_the_jobs() -> None:
    from detectors.diagnosis import build_report
    from tests.helpers import fed_state

    one = build_report(fed_state([_nccl_error(3)], "x.log"))["incidents"][0]
    assert (one["failure"], one["initiator"]["rank"]) == ("nccl_error", 3)
    both = build_report(fed_state([_nccl_error(0), _nccl_error(2)], "x.log"))["incidents"][0]
    assert (both["failure"], both["initiator"]["rank"]) == ("nccl_error", None)
    assert {c["rank"] for c in both["collateral"]} == {0, 2}


@pytest.mark.parametrize("line", [
    # from https://github.com/ultralytics/ultralytics/issues/22878 (corpus h6b-036)
    "[2025-12-05 17:00:28] TT:454558:454558 [0] init.cc:1791 NCCL WARN Invalid rank requested : 2/2",
    # from https://github.com/jeffffffli/HybrIK/issues/47
    "ued37c44e4ea65b:6861:6861 [7] init.cc:981 NCCL WARN Invalid rank requested : 7/4",
])
def test_invalid_rank_at_init_is_the_jobs_nccl_error(line: str) -> None:
    # the rank/nranks pair is a slot the launch misconfigured, not a failing process
    assert _matches(line) == [("nccl_error", None)]


@pytest.mark.parametrize("line", [
    # from https://github.com/pytorch/pytorch/issues/131781 (corpus h6a-035): bootstrap socket, ncclSystemError
    "g105:26921:27058 [0] NCCL INFO group.cc:64 -> 2 [Async thread]",
    # from https://github.com/NVIDIA/nccl/issues/675: ncclInternalError
    "hostname:2714030:2728529 [2] NCCL INFO group.cc:72 -> 3 [Async thread]",
    # from https://github.com/NVIDIA/nccl/issues/1612: ncclRemoteError
    "[0] NCCL INFO group.cc:75 -> 6 [Async thread]",
])
def test_failed_async_init_chain_is_an_nccl_error(line: str) -> None:
    assert _matches(line) == [("nccl_error", None)]


@pytest.mark.parametrize("line", [
    # the same chain's inner frames, and a zero return, are no failure line of their own
    "g105:26921:27058 [0] NCCL INFO bootstrap.cc:275 -> 2",
    "g105:26921:27058 [0] NCCL INFO group.cc:64 -> 0 [Async thread]",
])
def test_inner_frames_and_success_are_not_matches(line: str) -> None:
    assert _matches(line) == []


@pytest.mark.parametrize("line", [
    # from https://github.com/OpenRLHF/OpenRLHF/issues/265 (corpus h6a-033): a Ray worker, container-local address
    "(RayWorkerVllm pid=207931, ip=10.0.1.75) [E socket.cpp:922] [c10d] The client socket has timed out after 1800s "
    "while trying to connect to (172.17.0.2, 44737).",
    # from https://github.com/lllyasviel/ControlNet/issues/382
    "[E socket.cpp:793] [c10d] The client socket has timed out after 1800s while trying to connect to (127.0.0.1, 48391).",
])
def test_unreachable_store_is_the_jobs_nccl_error(line: str) -> None:
    assert _matches(line) == [("nccl_error", None)]


def test_unreachable_store_outranks_the_peers_collective_timeout() -> None:
    # OpenRLHF#265: the group never forms, so a rank that joined times out on its first collectives
    from detectors.diagnosis import build_report
    from tests.helpers import fed_state

    lines = ["(RayWorkerVllm pid=207931, ip=10.0.1.75) [E socket.cpp:922] [c10d] The client socket has timed out after "
             "1800s while trying to connect to (172.17.0.2, 44737).",
             "(ActorModelRayActor pid=207260, ip=10.0.1.75) [E ProcessGroupNCCL.cpp:475] [Rank 3] Watchdog caught "
             "collective operation timeout: WorkNCCL(SeqNum=3856, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
             "Timeout(ms)=1800000) ran for 1800268 milliseconds before timing out."]
    top = build_report(fed_state(lines, "x.log"))["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"]) == ("nccl_error", None)


def test_a_return_code_chain_with_no_warn_is_an_error_once_it_leaves_its_first_frame() -> None:
    from tests.helpers import engine_verdict

    # NVIDIA/nccl#697 (corpus holdout22 h22c-014): two nodes over NET/Socket, the proxy thread's
    # codes only, no WARN line above them
    chain = ["dgxa100:1050:1315 [0] NCCL INFO Channel 15/0 : 0[90000] -> 1[1000] [send] via NET/Socket/7",
             "dgxa100:1050:1316 [0] NCCL INFO include/net.h:25 -> 2",
             "dgxa100:1050:1316 [0] NCCL INFO transport/net.cc:515 -> 2"]
    assert [(i.failure, i.severity) for i in engine_verdict(chain)][:1] == [("nccl_error", "critical")]
    # OpenNMT/OpenNMT-py#1606 (corpus h21b-027): a lone code from the topology lookup of a NIC's sysfs
    # path, which NCCL goes on without
    lookup = ["sfr-pod-rmeng:435:783 [0] NCCL INFO Could not find real path of /sys/class/net/eth0/device",
              "sfr-pod-rmeng:435:783 [0] NCCL INFO include/net.h:19 -> 2",
              "sfr-pod-rmeng:435:783 [0] NCCL INFO Ring 00 : 0 -> 8 [receive] via NET/Socket/0"]
    assert engine_verdict(lookup) == []


def test_no_external_net_plugin_is_a_note() -> None:
    """NCCL using its internal network plugin for want of libnccl-net.so (src/net.cc), printed at
    WARN, then every rank's communicator ``Init COMPLETE`` and the job trains (corpus holdout33
    g33f-005, healthy). A failed plugin call is still an error."""
    lines = ["vm:11758:11825 [0] NCCL WARN NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.",
             "vm:11758:11825 [0] NCCL INFO comm 0x55d3c8a0 rank 0 nranks 4 cudaDev 0 busId 1b000 - Init COMPLETE",
             *[f"[rank0] step {s} loss {2 - s / 100:.3f}" for s in range(10, 50, 10)]]
    assert [i for i in engine_verdict(lines) if i.severity in ("warning", "critical")] == []
    bad = ["vm:11758:11825 [0] NCCL WARN NET/Plugin: Failed to initialize: Call to ncclNetPlugin init returned error 2"]
    assert any(i.failure == "nccl_error" and i.severity == "critical" for i in engine_verdict(bad))
