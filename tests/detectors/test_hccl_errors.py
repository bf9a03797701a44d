"""HCCL, Huawei Ascend's collective library, failing a call: torch_npu's checks and CANN's ERR02200
report are `nccl_error` (the same failure in Ascend's words), and CANN's `RankID:N` names the rank
(-1 before the communicator knows it). Real lines, their sources named; none from the corpus cases
that showed the class."""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict

CASES = [
    # https://github.com/vllm-project/vllm-ascend/issues/397 (open-r1 GRPO under torchrun, rank 0 in a broadcast)
    (0, ["[rank0]: RuntimeError: create:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:89 HCCL function error: "
         "HcclCommInitRootInfo(numRanks, &rootInfo, rank, &(comm->hcclComm_)), error code is 2",
         "[rank0]: [ERROR] 2025-03-26-11:49:12 (PID:3674, Device:0, RankID:0) ERR02200 DIST call hccl api failed."]),
    # a torch_npu test log (pytest's E lines: the harness says which rank raised; CANN had no RankID yet)
    (0, ["E   AssertionError: Rank 0 raised: create_config:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:130 HCCL "
            "function error: hcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, config, &(comm->hcclComm_)), error "
            "code is 7",
            "E   [ERROR] 2026-04-28-16:56:53 (PID:3354790, Device:0, RankID:-1) ERR02200 DIST call hccl api failed."]),
    # a vLLM worker on Ascend (multiproc_executor's prefix)
    (None, ["(Worker_DP0_TP0_EP0 pid=8457) ERROR 01-09 10:21:59 [multiproc_executor.py:751] [ERROR] 2026-01-09-10:21:58 "
            "(PID:8457, Device:0, RankID:-1) ERR02200 DIST call hccl api failed."]),
    # an Ascend deployment FAQ's example (the HCCL port already bound)
    (None, ["RuntimeError: createHCCLCommOrigin:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:2314 HCCL function "
            "error: HcclGetRootInfo(&hcclID)，error code is 7",
            "ERR02200 DIST call hccl api failed",
            "Failed to bind the IP port. Reason: The IP address and port have been bound already."]),
]


@pytest.mark.parametrize(("rank", "lines"), CASES)
def test_an_hccl_failure_is_an_nccl_error(rank: int | None, lines: list[str]) -> None:
    found = engine_verdict(lines)
    assert found and found[0].failure == "nccl_error", [(i.failure, i.rank) for i in found]
    assert found[0].rank == rank


def test_a_transport_link_hccl_could_not_build_is_an_nccl_error() -> None:
    # vllm-project/vllm-ascend#3162 (EI0009) and #2643 (the same text spelt 'creakLink')
    for line in ("[rank1]: EI0009: [PID: 2225827] 2025-09-24-20:59:48.119.066 Transport init error. Reason:"
                 " [Create][DestLink]Create Dest error! createLink para:rank[1]-localUserrank[1]-localIpAddr[172.16.0.114],"
                 " dst_rank[0]-remoteUserrank[0]-remote_ip_addr[172.16.0.114]",
                 "(VllmWorker rank=3 pid=50935) ERROR 09-10 03:36:31 [multiproc_executor.py:527]         Transport init"
                 " error. Reason: [Create][DestLink]Create Dest error! creakLink para:rank[7]-localUserrank[7]-localIpAddr"
                 "[192.168.1.3], dst_rank[9]-remoteUserrank[9]-remote_ip_addr[192.168.1.4]"):
        assert [i.failure for i in engine_verdict([line])][:1] == ["nccl_error"]


def test_gloo_libuv_check_is_an_nccl_error() -> None:
    # a Ray Train worker on macOS (gloo's libuv transport), then absl's SIGABRT dump
    lines = ["(RayTrainWorker pid=7315) [/Users/runner/work/pytorch/pytorch/pytorch/third_party/gloo/gloo/transport/uv/"
             "libuv.h:596] uv_accept: invalid argument",
             "(RayTrainWorker pid=7315) *** SIGABRT received at time=1734086759 ***"]
    assert [i.failure for i in engine_verdict(lines)][:1] == ["nccl_error"]
