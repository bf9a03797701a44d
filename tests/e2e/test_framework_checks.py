"""The framework cases' log checks (frameworks/checks.py) can fail: each rejects logs without its fault.

``test_golden_logs_show_the_fault`` runs every check over its own recorded case; here each
check meets a recorded run of the same framework that lacks its fault (a healthy run, or
for the healthy check a NaN run), so a check that passes whatever it reads is caught.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from .frameworks.checks import check_case, metrics
from .frameworks.record import JOBS, Job

GOLDEN = Path(__file__).resolve().parent / "golden"
# per-step metrics (HF log dicts, Lightning's TQDM bar, the other jobs' rank-0 lines; Keras per
# epoch), so a step-wise check has steps to read
HEALTHY = {"hf_job.py": "healthy_fp32-hftrainer-logdir", "pl_job.py": "healthy_bf16-pltrainer-console",
           "accelerate_job.py": "healthy-accelerate-logdir", "fabric_job.py": "healthy-fabric-logdir",
           "ignite_job.py": "healthy-ignite-spawn", "keras_job.py": "healthy-keras-console",
           "ray_job.py": "healthy-raytrain-raylaunch", "trl_job.py": "healthy-trl-logdir",
           "skorch_job.py": "healthy-skorch-console", "structlog_job.py": "healthy-structlogfmt-logdir",
           "hydra_job.py": "healthy-hydra-logdir", "mmengine_job.py": "healthy-mmengine-logdir",
           "wandb_job.py": "healthy-wandb-console"}
NAN = {"hf_job.py": "nan-hftrainer-logdir", "pl_job.py": "nan-pltrainer-perrank",
       "accelerate_job.py": "nan-accelerate-logdir", "fabric_job.py": "nan-fabric_noerr-logdir",
       "ignite_job.py": "nan-ignite-spawn", "keras_job.py": "nan-keras-console",
       "ray_job.py": "nan-raytrain-raylaunch", "trl_job.py": "nan-trl-perrank", "skorch_job.py": "nan-skorch-console",
       "structlog_job.py": "nan-structlogfmt-console", "hydra_job.py": "nan-hydra-console",
       "mmengine_job.py": "nan-mmengine-console", "wandb_job.py": "nan-wandb-logdir"}


def job_named(name: str) -> Job:
    return next(job for job in JOBS if job.name == name)


@pytest.mark.parametrize("job", [j for j in JOBS if not j.fault.startswith("healthy")], ids=lambda j: j.name)
def test_fault_check_rejects_a_healthy_run(job: Job) -> None:
    with pytest.raises(AssertionError):
        check_case(GOLDEN / HEALTHY[job.script] / "logs", job)


@pytest.mark.parametrize("job", [j for j in JOBS if j.fault.startswith("healthy")], ids=lambda j: j.name)
def test_healthy_check_rejects_a_nan_run(job: Job) -> None:
    with pytest.raises(AssertionError):
        check_case(GOLDEN / NAN[job.script] / "logs", job)


def test_metrics_readers_read_every_logged_step() -> None:
    """HF and TRL dicts, the TQDM postfix (``nan.0`` included), metrics.csv, the accelerate / Fabric /
    Ignite rank-0 lines and skorch's table give steps 1..20; Keras's training.csv one record per
    5-step epoch; Ray's console what its log folding left."""
    for name in ("nan-hftrainer-logdir", "nan-pltrainer-perrank", "nan-pltrainer_csv-logdir",
                 "healthy-accelerate-acclaunch", "nan-fabric_noerr-logdir", "healthy-ignite-spawn"):
        steps = metrics(GOLDEN / name / "logs", job_named(name))
        assert sorted(steps) == list(range(1, 21)), name
    assert metrics(GOLDEN / "nan-pltrainer-perrank" / "logs", job_named("nan-pltrainer-perrank"))[7] == {
        "loss": pytest.approx(0.310), "grad_norm": pytest.approx(float("nan"), nan_ok=True)}
    assert metrics(GOLDEN / "nan-fabric_noerr-logdir" / "logs", job_named("nan-fabric_noerr-logdir"))[7] == {
        "loss": pytest.approx(0.1830), "grad_norm": pytest.approx(float("nan"), nan_ok=True)}
    assert sorted(metrics(GOLDEN / "healthy-keras-console" / "logs", job_named("healthy-keras-console"))) == [
        5, 10, 15, 20]
    for name in ("healthy-trl-logdir", "healthy-skorch-console", "healthy-structlogfmt-logdir"):
        assert sorted(metrics(GOLDEN / name / "logs", job_named(name))) == list(range(1, 21)), name
    # Ray folds the workers' lines that differ only in their numbers, so some steps never reach the
    # console; rank 2's own first non-finite line survives
    ray_ok = metrics(GOLDEN / "healthy-raytrain-raylaunch" / "logs", job_named("healthy-raytrain-raylaunch"))
    assert {1, 12} <= set(ray_ok) <= set(range(1, 13)) and len(ray_ok) < 12
    ray_nan = metrics(GOLDEN / "nan-raytrain-raylaunch" / "logs", job_named("nan-raytrain-raylaunch"))
    assert math.isnan(ray_nan[7]["loss"]) and all(math.isfinite(rec["loss"]) for k, rec in ray_nan.items() if k < 7)
    assert metrics(GOLDEN / "spike-skorch-console" / "logs", job_named("spike-skorch-console"))[12]["loss"] > 1000
    # Hydra's job logging and MMEngine's LoggerHook give steps 1..20 (MMEngine: grad_norm before loss);
    # wandb's console has only its run summary, the last value of each metric (step 0)
    for name in ("healthy-hydra-logdir", "healthy-mmengine-logdir"):
        assert sorted(metrics(GOLDEN / name / "logs", job_named(name))) == list(range(1, 21)), name
    mm = metrics(GOLDEN / "nan-mmengine-console" / "logs", job_named("nan-mmengine-console"))
    assert math.isnan(mm[7]["grad_norm"]) and math.isfinite(mm[7]["loss"]) and math.isnan(mm[8]["loss"])
    wb = metrics(GOLDEN / "nan-wandb-logdir" / "logs", job_named("nan-wandb-logdir"))
    assert list(wb) == [0] and math.isnan(wb[0]["loss"]) and math.isnan(wb[0]["grad_norm"])
    assert all(math.isfinite(v) for v in metrics(GOLDEN / "healthy-wandb-console" / "logs",
                                                 job_named("healthy-wandb-console"))[0].values())
