"""A gradient norm that climbs steadily, a tenth or so per logged step, 8 → 381 over 200 steps: no
single value is ten times the running median and no five in a row grow geometrically, yet no
healthy run settles at 15 times its first norms or more (corpus holdout33 g33c-011: an absl-logged CPU
torchrun job whose flipped L2 penalty rewards growing weights; its total loss falls while the mse
and the norm climb). A norm that rises early and settles, or one clipped spike, is no climb."""

from __future__ import annotations

from tests.helpers import engine_verdict

_NORMS = [8.426, 12.274, 16.937, 21.808, 27.515, 34.534, 38.194, 42.953, 48.824, 49.585, 56.117, 61.990, 193.706,
          192.843, 231.971, 234.362, 271.901, 273.861, 315.347, 381.118]


def _lines(norms: list[float]) -> list[str]:
    return [f"I1208 02:50:28.866400 139638033312640 train.py:41] step {10 * (i + 1)} mse={0.5 + i / 10:.4f} "
            f"loss={-35 - 110 * i:.4f} grad_norm={g:.3f} clipped=True param_norm={8 + 3 * i:.2f}" for i, g in enumerate(norms)]


def test_a_steady_climb_to_thirty_times_its_start_is_an_explosion() -> None:
    found = [i for i in engine_verdict(_lines(_NORMS)) if i.failure == "grad_norm_explosion"]
    assert found and found[0].severity in ("warning", "critical")


def test_a_norm_that_rises_early_and_settles_is_no_climb() -> None:
    settled = [*_NORMS[:8], *[45.0 + (i % 3) for i in range(12)]]
    assert not [i for i in engine_verdict(_lines(settled)) if i.failure == "grad_norm_explosion"]



def test_a_norm_still_under_one_after_its_rise_is_no_explosion() -> None:
    """TRL's GRPO logs a norm of 1e-5 for a batch whose rewards all tie (no advantage) beside 0.2 for
    the others (a committed nohup.out, corpus holdout33 h33b-004, healthy): a thousandfold rise
    that ends under one is no explosion. The same rise to 200 is."""
    def dicts(high: float) -> list[str]:
        norms = [0.00018, high, high * 1.04, 1.66e-05, high * 0.9, 3.4e-05, high * 0.94, high * 0.75, 1.8e-05, high]
        return [f"{{'loss': 0.0, 'grad_norm': {g}, 'learning_rate': 1e-06, 'epoch': {0.01 * (i + 1):.2f}}}"
                for i, g in enumerate(norms)]
    assert not [i for i in engine_verdict(dicts(0.206)) if i.failure == "grad_norm_explosion"]
    assert [i for i in engine_verdict(dicts(206.0)) if i.failure == "grad_norm_explosion"]


def test_a_climb_is_no_model_leaving_a_plateau_while_its_clipped_loss_creeps_down() -> None:
    """The norm before clipping climbs 7 → 143 over 650 steps while the clipped loss creeps from 15
    to 10 (corpus holdout33 g33e-013): a loss that fell does not make this climb a model leaving a
    plateau (a norm that rises once as the loss drops is)."""
    norms = [8.474, 6.737, 7.199, 7.63, 8.103, 10.297, 15.818, 18.362, 20.14, 30.425, 28.607, 31.706, 32.492, 45.238,
             52.055, 52.155, 71.866, 70.869, 76.459, 93.159, 94.839, 93.679, 120.588, 103.913, 127.922, 143.582]
    lines = [f"step {25 * (i + 1):4d} | loss {14.97 - i / 5:7.4f} | grad_norm (pre-clip) {g:12.3f}" for i, g in enumerate(norms)]
    assert [i for i in engine_verdict(lines) if i.failure == "grad_norm_explosion"]
