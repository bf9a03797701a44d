"""Slurm's cgroup OOM handler kills a task and srun names it: ``srun: error: HOST: task N: Out
Of Memory`` (``slurmstepd: error: Detected 1 oom-kill event(s)`` says it happened, not to whom).
The task number is the global rank when srun starts one task per rank, so the host-memory
failure is that rank's; ``tasks 1-3`` names several and so no single rank. Real pastes:
brain-score/vision#950 (task 0), chrisknewman/tusas#149 (tasks 1-3, Slurm 23's
``oom_kill event`` wording), nextflow-io/nextflow#5932."""

from __future__ import annotations

from tests.helpers import engine_verdict

_BRAIN_SCORE = [
    "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=37205392.0. Some of your processes may have been"
    " killed by the cgroup out-of-memory handler.",
    "srun: error: node107: task 0: Out Of Memory",
]
_TUSAS = [
    "slurmstepd: error: Detected 1 oom_kill event in StepId=440575.0. Some of the step tasks have been OOM Killed.",
    "srun: error: nid001277: tasks 1-3: Out Of Memory",
    "srun: Terminating StepId=440575.0",
    "slurmstepd: error: *** STEP 440575.0 ON nid001277 CANCELLED AT 2023-12-05T07:16:01 ***",
]


def test_the_task_slurm_oom_killed_is_the_rank() -> None:
    lines = ["Epoch 0:  12%|█▏        | 120/1000 [02:01<14:50,  1.01s/it, loss=2.31]", *_BRAIN_SCORE]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("host_oom", 0)
    lines = [*_BRAIN_SCORE[:1], _BRAIN_SCORE[1].replace("task 0", "task 3")]
    assert engine_verdict(lines)[0].rank == 3


def test_without_the_task_line_no_rank_is_named() -> None:
    top = engine_verdict(_BRAIN_SCORE[:1])[0]
    assert (top.failure, top.rank) == ("host_oom", None)


def test_several_tasks_killed_name_no_rank() -> None:
    top = engine_verdict(_TUSAS)[0]
    assert (top.failure, top.rank) == ("host_oom", None)


def test_a_host_allocation_failure_takes_the_rank_torchrun_saw_fail() -> None:
    # an untagged CPU allocator error, then torchrun naming the worker that exited with an error
    # (a Qwen-72B LoRA run, 2023)
    lines = ["RuntimeError: [enforce fail at alloc_cpu.cpp:83] err == 0. DefaultCPUAllocator: can't allocate memory: you"
             " tried to allocate 268435456 bytes. Error code 12 (Cannot allocate memory)",
             "[2023-12-22 07:10:38,757] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 86503"
             " closing signal SIGTERM",
             "[2023-12-22 07:10:48,546] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1)"
             " local_rank: 2 (pid: 86505) of binary: /usr/bin/python"]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("host_oom", 2)
