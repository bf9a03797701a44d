"""One unbroken descent of the loss scale, every halving of it before the run's first metric line,
then the scale it reached held through every metric line with no more overflow: the scaler
finding its scale at the start (a run configured to start high, right after apex amp's banner),
never a page, even though it began above apex's usual 2^16 (correlate ``_held_after``). The same
halvings after metric lines had logged a steady scale are new overflows mid-run.

Formats: apex amp's banner and its dynamic scaler's ``Gradient overflow.  Skipping step, loss
scaler 0 reducing loss scale to X`` (apex/amp/scaler.py), and timm's train line shape
(``Train: [  20/200]  Time ...  Loss ...``) with a scale column."""

from __future__ import annotations

from tests.helpers import engine_verdict

_BANNER = ["Selected optimization level O2:  FP16 training with FP32 batchnorm and FP32 master weights.", "",
           "Defaults for this optimization level are:", "enabled                : True", "opt_level              : O2",
           "loss_scale             : dynamic"]
_DESCENT = [f"Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {2.0 ** p}" for p in range(23, 15, -1)]


def _train(first: int, n: int, scale: int) -> list[str]:
    return [f"Train: [{i * 20:4d}/400]  Time 0.015  Loss {0.86 - i * 0.01:.4f}  Scale {scale}  GradNorm 0.4{i % 10}"
            for i in range(first, first + n)]


def test_a_descent_before_any_metric_line_then_held_is_no_page() -> None:
    alerts = [i for i in engine_verdict(_BANNER + _DESCENT + _train(1, 10, 65536)) if i.severity in ("warning", "critical")]
    assert alerts == []


def test_the_same_descent_after_a_steady_scale_is_still_reported() -> None:
    lines = _BANNER + _train(1, 8, 8388608 * 2) + _DESCENT + _train(9, 10, 65536)
    assert [i.failure for i in engine_verdict(lines) if i.severity in ("warning", "critical")][:1] == ["fp16_overflow_skips"]
