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
