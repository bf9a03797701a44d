"""torchrun names the first worker to EXIT ("failed (exitcode: 1) local_rank: N"), not the first to
fail. With untagged NCCL error text in the log, that exit is the NCCL error's consequence: one error
is that worker's own; several (every rank hit it) name no rank. Real lines from the threads named."""

from __future__ import annotations

from functools import partial

from detectors.diagnosis import build_report
from tests.helpers import fed_state, top_verdict

_SYS = "ncclSystemError: System call (socket, malloc, munmap, etc) failed."


_top = partial(top_verdict, path="console.log")


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


# one worker's tagged traceback ends in the NCCL error, and the agent names ANOTHER worker as the
# one that failed (SIGTERM to the first): https://github.com/Tencent-Hunyuan/HunyuanVideo/issues/114
_HUNYUAN = [
    "[rank0]:     work = group.alltoall_base(",
    "[rank0]: RuntimeError: NCCL Error 2: unhandled system error (run with NCCL_DEBUG=INFO for details)",
    "W1211 08:26:06.780000 139773546530624 torch/distributed/elastic/multiprocessing/api.py:858] "
    "Sending process 6832 closing signal SIGTERM",
    "E1211 08:26:06.844000 139773546530624 torch/distributed/elastic/multiprocessing/api.py:833] "
    "failed (exitcode: 1) local_rank: 1 (pid: 6833) of binary: /opt/conda/envs/myenv/bin/python",
]


def test_another_worker_s_exit_leaves_the_nccl_error_without_a_rank() -> None:
    # rank 1 exited first with its own lines absent: it most likely died of the same communicator
    # error, so neither rank is known to have started it, and the exit is not a crash of its own
    assert _top(_HUNYUAN) == ("nccl_error", None)


def test_the_same_worker_s_exit_keeps_its_rank() -> None:
    # the same lines with the agent naming the worker whose traceback it is (local_rank changed)
    lines = [*_HUNYUAN[:3], _HUNYUAN[3].replace("local_rank: 1 (pid: 6833)", "local_rank: 0 (pid: 6832)")]
    assert _top(lines) == ("nccl_error", 0)


def test_a_failed_worker_with_its_own_error_keeps_it() -> None:
    # rank 1's own OOM is in the logs (line added): it is not the NCCL error's, and it came first
    oom = ("[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total "
           "capacity of 79.15 GiB of which 1.05 GiB is free.")
    assert _top([oom, *_HUNYUAN]) == ("cuda_oom", 1)


# torch 1.x: the watchdog's timeout raised on rank 2, then torchrun names local_rank 0 as the
# first failed worker (https://github.com/llijiang/GuidedContrast/issues/2)
_GUIDED = [
    "RuntimeError: NCCL communicator was aborted on rank 2.  Original reason for failure was: [Rank 2] Watchdog caught "
    "collective operation timeout: WorkNCCL(SeqNum=47363, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1805489 "
    "milliseconds before timing out.",
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 37400) of binary: "
    "/data/home/scv3159/.conda/envs/py38/bin/python",
]


def test_an_exit_after_a_watchdog_timeout_is_its_consequence() -> None:
    # torchrun would have torn every worker down within seconds of a crash, long before a 30-minute
    # timeout: the exit it reports came after the timeout, and the exiting rank is not the hung one
    inc = build_report(fed_state(_GUIDED, "console.log"))["incidents"]
    assert [(i["failure"], i["initiator"]["rank"]) for i in inc][:1] == [("collective_timeout", None)]


def test_an_exit_with_its_own_error_is_still_the_cause() -> None:
    # rank 0's own traceback ends in an error of its own (line added): it crashed, the others waited
    lines = ["[rank0]: ValueError: Expected input batch_size (16) to match target batch_size (12).", *_GUIDED]
    assert _top(lines) == ("rank_exception", 0)


def test_one_nccl_error_every_member_aborted_on_names_no_rank() -> None:
    # https://github.com/hiyouga/LlamaFactory/issues/1169: one untagged NCCL error at the first barrier,
    # then BOTH ranks of the 2-rank communicator abort it: every member saw the error, the job's
    lines = ["torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1331, "
             "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.5",
             "ncclUnhandledCudaError: Call to CUDA function failed.", "Last error:", "Cuda failure 'invalid argument'",
             "DESKTOP-VMBL43V:1213:1213 [1] NCCL INFO comm 0x7b10e090 rank 1 nranks 2 cudaDev 1 busId 4000 - Abort COMPLETE",
             "DESKTOP-VMBL43V:1212:1212 [0] NCCL INFO comm 0x7aad4cf0 rank 0 nranks 2 cudaDev 0 busId 1000 - Abort COMPLETE",
             "[2023-10-13 06:57:13,068] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1) "
             "local_rank: 0 (pid: 1212) of binary: /home/marco/miniconda3/envs/lama/bin/python"]
    assert _top(lines) == ("nccl_error", None)
    # only rank 0's communicator aborted: the error is still the failed worker's
    assert _top([line for line in lines if "rank 1 nranks" not in line]) == ("nccl_error", 0)
