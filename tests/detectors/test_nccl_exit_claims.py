"""torchrun names the first worker to EXIT ("failed (exitcode: 1) local_rank: N"), not the first to
fail. With untagged NCCL error text in the log, that exit is the NCCL error's consequence: one error
is that worker's own; several (every rank hit it) name no rank. Real lines from the threads named."""

from __future__ import annotations

from detectors.diagnosis import build_report
from tests.helpers import fed_state

_SYS = "ncclSystemError: System call (socket, malloc, munmap, etc) failed."


def _top(lines: list[str]) -> tuple[str, int | None]:
    inc = build_report(fed_state(lines, "console.log"))["incidents"][0]
    return inc["failure"], inc["initiator"]["rank"]


def test_one_nccl_error_is_the_failed_worker_s() -> None:
    # https://github.com/Z-Zheng/ChangeStar/issues/5 (one traceback, then the agent's line)
    lines = ["    dist._verify_model_across_ranks(self.process_group, parameters)",
             "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:911, unhandled system error, NCCL version 2.7.8",
             _SYS,
             "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 31335) of binary: "
             "/home/cy/miniconda3/envs/STAnet/bin/python",
             "ERROR:torch.distributed.elastic.agent.server.local_elastic_agent:[default] Worker group failed"]
    assert _top(lines) == ("nccl_error", 0)


def test_every_worker_s_nccl_error_names_no_rank() -> None:
    # https://github.com/meta-llama/llama/issues/173 (two workers' identical errors, the agent names local_rank 0)
    err = ("RuntimeError: NCCL error in: /opt/conda/conda-bld/pytorch_1646755903507/work/torch/csrc/distributed/c10d/"
           "ProcessGroupNCCL.cpp:1169, unhandled system error, NCCL version 21.0.3")
    lines = [err, _SYS, "    work = group.allgather([tensor_list], [tensor])", err, _SYS,
             "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 239236) of binary: "
             "/home/winner/Downloads/enter/envs/py38_pt1110/bin/python"]
    assert _top(lines) == ("nccl_error", None)
