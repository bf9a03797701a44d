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
