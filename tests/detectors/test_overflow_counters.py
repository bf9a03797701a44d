"""A running count of the steps the loss scaler threw away, under any of its usual names, is read
like DeepSpeed's ``skipped=4``: when it climbs on most steps the run pays for fp16 overflows
(``fp16_overflow_skips``); a count that stays put, or climbs once in hundreds of steps (the
dynamic scaler's cycle), is nothing. Shapes: a hand-written loop's ``overflows = 3/33  skipped =
yes`` (corpus holdout26 g26-003), ``num_overflows: 12`` and ``skipped_steps=5`` key-value lines."""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict

_FORMS = {
    "ratio": lambda step, n, loss: f"step = {step:3d}  loss = {loss:.4f}  overflows = {n}/{step}  skipped = {'yes' if n else 'no'}",
    "colon": lambda step, n, loss: f"[train] step: {step} | loss: {loss:.4f} | num_overflows: {n} | lr: 0.0001",
    "equals": lambda step, n, loss: f"it={step} loss={loss:.4f} skipped_steps={n} scale=512.0",
}
_HEAD = "fp16 = True  loss_scale = 512.0 (static)  world_size = 2"


def _run(form: str, skips: list[int]) -> list[str]:
    out = [_HEAD]
    for i, n in enumerate(skips):
        out.append(_FORMS[form](3 * (i + 1), n, 3.0 - 0.01 * i))
    return out


@pytest.mark.parametrize("form", sorted(_FORMS))
def test_a_count_that_climbs_every_step_is_overflow_skips(form: str) -> None:
    skips = [0] * 10 + [3 * k for k in range(1, 21)]  # from step 33 on, every step overflows
    verdict = engine_verdict(_run(form, skips))
    assert verdict and verdict[0].failure == "fp16_overflow_skips", verdict


@pytest.mark.parametrize("form", sorted(_FORMS))
def test_a_count_that_stays_put_is_nothing(form: str) -> None:
    assert not [i for i in engine_verdict(_run(form, [0] * 30)) if i.severity != "info"]
