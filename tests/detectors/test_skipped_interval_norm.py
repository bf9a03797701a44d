"""A metric line whose logging interval skipped steps on overflow carries a gradient norm that may
be an overflowed step's, still scaled: no explosion by itself (the loss-scale rules judge those
overflows). The rows are Megatron-LM's ``training_log`` format (megatron/training/training.py:
``iteration N/ M | ... | lm loss: ... | loss scale: ... | grad norm: ... | number of skipped
iterations: K | number of nan iterations: 0 |``), as a CPU fp16 run with a 2^32 initial scale
printed them (corpus holdout26 g26-005)."""

from __future__ import annotations

from tests.helpers import engine_verdict


def _row(it: int, loss: str, scale: float, norm: str, skipped: int) -> str:
    return (f" iteration {it:8d}/     200 | consumed samples: {it * 32:10d} | elapsed time per iteration (ms): 9.3 | "
            f"learning rate: 2.000E-03 | global batch size:    32 | lm loss: {loss} | loss scale: {scale} | "
            f"grad norm: {norm} | number of skipped iterations: {skipped:3d} | number of nan iterations:   0 |")


def _rows(first_norm: str, first_skipped: int) -> list[str]:
    rows = [_row(10, "0.000000E+00", 4194304.0, first_norm, first_skipped),
            _row(20, "3.848666E+00", 524288.0, "0.790", 3)]
    loss = 2.93
    for it in range(30, 210, 10):
        rows.append(_row(it, f"{loss:.6E}", 524288.0, f"{0.8 * loss / 2.93:.3f}", 0))
        loss *= 0.7
    return rows


def test_a_huge_norm_in_an_interval_of_skipped_steps_is_no_explosion() -> None:
    failures = {i.failure for i in engine_verdict(_rows("6414935.500", 10)) if i.severity != "info"}
    assert "grad_norm_explosion" not in failures


def test_the_same_norm_with_no_step_skipped_is_an_explosion() -> None:
    failures = {i.failure for i in engine_verdict(_rows("6414935.500", 0))}
    assert "grad_norm_explosion" in failures
