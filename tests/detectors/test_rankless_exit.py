"""A launcher's exit that names no rank, beside ranks' own communication errors: their exits.

Slurm's ``srun: error: nid006742: tasks 32-33: Exited with exit code 1`` names two tasks at once
(so no rank), while the tasks' own ``srun --label`` lines (``34: torch.distributed.DistBackendError:
NCCL error in: ..., invalid usage ...`` / ``Failed to initialize any NET plugin``) already show
why they exited: the exit is theirs, not another exception. The lines are the shape of a
Megatron-LM job on a Slurm cluster with NCCL 2.29 whose node lacked its NET plugin (corpus
h27a-001); every process of that node failed alike, so no single rank is named.
"""

from __future__ import annotations

from tests.helpers import engine_verdict


def _failed(task: int) -> list[str]:
    p = f"{task}: "
    return [
        f"{p}Traceback (most recent call last):",
        f'{p}  File "/usr/local/lib/python3.12/dist-packages/torch/distributed/distributed_c10d.py", line 2201, '
        "in _new_process_group_helper",
        f"{p}    eager_backend.eager_connect_single_device(device_id)",
        f"{p}torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/"
        "NCCLUtils.cpp:93, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.29.3",
        f"{p}ncclInvalidUsage: This usually reflects invalid usage of NCCL library.",
        f"{p}Last error:",
        f"{p}Failed to initialize any NET plugin",
    ]


def test_an_exit_naming_several_tasks_is_theirs_not_another_cause() -> None:
    lines = [line for task in (34, 35, 32, 33) for line in _failed(task)] + [
        "srun: error: nid006742: tasks 32-33: Exited with exit code 1",
        " 0: [2026-06-24T18:43:23.817] error: *** STEP 2611382.1 ON nid006687 CANCELLED AT 2026-06-24T18:43:23 DUE TO TASK FAILURE ***",
        "srun: error: nid006742: tasks 34-35: Exited with exit code 1",
        "srun: error: nid006717: tasks 12,15: Killed",
    ]
    top = engine_verdict(lines)[0]
    assert top.failure == "nccl_error"
