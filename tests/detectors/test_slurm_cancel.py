"""Slurm ending a job or step itself (``*** JOB N ON host CANCELLED AT T DUE TO TIME LIMIT ***``,
preemption, a node failure) kills every task whatever it was doing: the job was torn down, no
rank failed; a hang or crash before it is still the cause. Real pastes: desihub/desitarget#628,
ZettaAI/zetta_utils#671, marbl/canu#1067 (older Slurm's wording)."""

from __future__ import annotations

from tests.helpers import engine_verdict

_DESI = [
    "srun: Force Terminated job 32233190",
    "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
    "slurmstepd: error: *** STEP 32233190.0 ON nid01934 CANCELLED AT 2020-07-03T02:59:56 DUE TO TIME LIMIT ***",
    "srun: error: nid01934: tasks 2,4-5,7: Terminated",
    "srun: Terminating job step 32233190.0",
    "srun: error: nid01935: tasks 8-15: Terminated",
    "srun: error: nid01934: tasks 0-1,3,6: Terminated",
]


def test_a_time_limit_is_a_teardown_naming_no_rank() -> None:
    top = engine_verdict(_DESI)[0]
    assert (top.failure, top.rank) == ("launcher_teardown", None)


def test_older_slurm_wording_is_read() -> None:
    found = engine_verdict(["slurmstepd: *** JOB 830329 CANCELLED AT 2018-08-06T17:21:44 DUE TO TIME LIMIT on n447 ***"])
    assert [i.failure for i in found] == ["launcher_teardown"]


def test_a_timeout_before_the_time_limit_stays_the_cause() -> None:
    timeout = ("[rank1]:[E1205 10:00:00.000000000 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation "
               "timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600003 "
               "milliseconds before timing out.")
    found = engine_verdict([timeout, "slurmstepd: error: *** JOB 494583 ON gpu-7 CANCELLED AT 2024-04-20T09:09:37 DUE TO TIME LIMIT ***"])
    assert found[0].failure != "launcher_teardown"


# bigscience-workshop/bigscience's Megatron experiment outputs (corpus holdout24 h24b-014 and
# h24b-015): iteration lines with no clock, then Slurm stopping the step, and every node's launcher
# (torch.distributed.launch) printing its own stop
_ITERS = [f" iteration {i:>8}/    1000 | consumed samples: {i * 4:>12} | elapsed time per iteration (ms): 1620.3 | "
          f"learning rate: 1.500E-04 | global batch size:     4 | lm loss: {26.5 - i / 10:.6E} | loss scale: 4096.0 | "
          "number of skipped iterations:   0 | number of nan iterations:   0 |" for i in range(30, 210, 10)]
_LAUNCHERS = ["Killing subprocess 69102", "Killing subprocess 69103", "Main process received SIGTERM, exiting",
              "Killing subprocess 27895", "Main process received SIGTERM, exiting"]


def test_a_plain_scancel_of_a_running_job_is_a_note_not_a_hang() -> None:
    found = engine_verdict([*_ITERS, "slurmstepd: error: *** STEP 1809562.0 ON r6i5n1 CANCELLED AT 2021-05-23T08:29:53 ***",
                            *_LAUNCHERS, "slurmstepd: error: *** JOB 1809562 ON r6i5n1 CANCELLED AT 2021-05-23T08:29:53 ***"])
    assert [i for i in found if i.severity in ("critical", "warning")] == []
    assert all(i.failure != "rank_hang" for i in found)


def test_a_time_limit_with_no_clock_is_a_warning_teardown_not_a_guessed_hang() -> None:
    found = engine_verdict([*_ITERS, "slurmstepd: error: *** STEP 1809655.0 ON r6i4n3 CANCELLED AT 2021-05-24T09:50:34 "
                            "DUE TO TIME LIMIT ***", *_LAUNCHERS])
    assert (found[0].failure, found[0].severity, found[0].rank) == ("launcher_teardown", "warning", None)
    assert all(i.failure != "rank_hang" for i in found)


def test_a_loss_spike_before_a_time_limit_leads() -> None:
    # (the loss stays far above its level afterwards, as in h23i-014: 77, then 32, 21, 17 ...)
    spiked = [*_ITERS[:8], *(line.replace(f"{26.5 - (30 + 10 * i) / 10:.6E}", f"{77.0 - 2 * (i - 8):.6E}")
                             for i, line in enumerate(_ITERS) if i >= 8)]
    found = engine_verdict([*spiked, "slurmstepd: error: *** JOB 1809655 ON r6i4n3 CANCELLED AT 2021-05-24T09:50:34 "
                            "DUE TO TIME LIMIT ***", *_LAUNCHERS])
    assert found[0].failure == "loss_spike"


def test_a_time_limit_with_one_rank_behind_the_others_is_that_ranks_hang() -> None:
    # a CPU job under an srun-like wrapper (corpus holdout24 g24-005): ranks 0, 1 and 3 noted "step 18
    # fwd", rank 2 never did; then Slurm's time limit and both launchers' SIGTERM
    lines = []
    for step in range(10, 19):
        for r in (0, 1, 2, 3):
            if step == 18 and r == 2:
                continue
            lines.append(f"{r // 2}: [r{r}/4] step {step:4d} fwd")
            if step < 18:
                lines.append(f"{r // 2}: [r{r}/4] step {step:4d} loss 0.3{r}{step % 10}")
    lines += ["slurmstepd: error: *** STEP 48213.0 ON hostA CANCELLED AT 2026-12-07T02:11:49 DUE TO TIME LIMIT ***",
              "0: W1207 02:11:49.783000 1848 torch/distributed/elastic/agent/server/api.py:753] Received 15 death signal, "
              "shutting down workers",
              "1: W1207 02:11:49.790000 1849 torch/distributed/elastic/agent/server/api.py:753] Received 15 death signal, "
              "shutting down workers"]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("rank_hang", 2)
