"""apex's overflow message names only the new scale (``Gradient overflow.  Skipping step, loss
scaler 0 reducing loss scale to 262144.0``); a metric table's ``scale`` column right below then
logs 262144 where its row before had 524288: one move, told twice. A run configured to start its
scaler above apex's 2^16 (2^24 here) that halves before its first metric row is searching, not a
scaler that had grown back over good steps; one back-off after a later growth is its cycle.
The shapes are a CPU torchrun job with an apex-style scaler (corpus holdout26 g26c-011)."""

from __future__ import annotations

from tests.helpers import engine_verdict

_OVF = "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {:.1f}"


def _row(it: int, loss: float, scale: int) -> str:
    return f"  {it * 10:5d}    {loss:.4f}  0.500  {scale:9d}    12.0"  # a row every 100 iterations


def _job(mid_run_overflows: int) -> list[str]:
    lines = ["   iter      loss    acc      scale   ms/it", "------------------------------------------"]
    scale = 2 ** 24
    for _ in range(5):  # the search, before the first row
        scale //= 2
        lines.append(_OVF.format(scale))
    lines.append(_row(10, 2.29, scale))
    scale //= 2
    lines.append(_OVF.format(scale))
    loss = 2.0
    for it in range(20, 170, 10):
        if it in (70, 150):
            scale *= 2  # a clean window: the scaler grows
        lines.append(_row(it, loss, scale))
        loss *= 0.85
        if it == 90 or (mid_run_overflows and 100 <= it < 100 + 10 * mid_run_overflows):
            scale //= 2
            lines.append(_OVF.format(scale))
    return lines


def test_a_configured_high_start_then_the_scalers_cycle_is_warm_up() -> None:
    verdict = engine_verdict(_job(0))
    assert not [i for i in verdict if i.severity != "info"], verdict
    assert [i.failure for i in verdict] == ["loss_scale_warmup"]


def test_overflows_that_keep_coming_after_the_search_are_still_reported() -> None:
    verdict = engine_verdict(_job(5))
    assert verdict and verdict[0].failure in ("fp16_overflow_skips", "loss_scale_collapse"), verdict
