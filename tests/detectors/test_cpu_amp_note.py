"""Autocast or GradScaler turning itself off because there is no GPU at all, in a job whose logs
show no GPU, no GPU framework and no configured precision, is a CPU run (a test, a laptop, a CI
job): a note, not an alert. The same warning under a bf16/fp16 config is a GPU job that lost its
GPUs and stays a warning (tests/detectors/test_symptoms.py). Lines of a real 2-process
mp.spawn CPU job (torch 2.13)."""

from __future__ import annotations

from tests.helpers import engine_verdict

_CPU = [
    "/home/user/exp/train.py:10: UserWarning: torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
    "  warnings.warn(",
    "/home/user/exp/train.py:10: UserWarning: torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
    "[rank 0] step 50 loss 2.0213",
    "[rank 0] step 100 loss 1.7422",
    "[rank 0] step 150 loss 1.5107",
    "done: 150 steps",
]


def test_amp_off_on_a_cpu_run_is_a_note() -> None:
    found = engine_verdict(_CPU)
    assert [(i.failure, i.severity) for i in found] == [("amp_no_speedup", "info")]
