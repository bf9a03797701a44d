"""A loss that had learned and went back to where it started, and stayed there (a learning rate raised
far too high mid-run puts a classifier back at chance): it climbs there over a few noisy lines, so no
single value jumps and the recent level rises with it. Read as a divergence once six logged values in a
row sit back at the run's first level, the step counter still counting up; a run restarted from scratch
(its counter back at its first step) and a loss that only comes part of the way back are not.
Lines in the shapes of real loops; none from the corpus case that showed the gap."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.helpers import engine_verdict

# a 4-class classifier: ln 4 = 1.386 at chance; learned down to ~0.25, then the LR is raised step by step
_LEARNED = [1.399, 1.325, 1.195, 0.952, 0.798, 0.446, 0.455, 0.363]
_UNLEARNED = [1.131, 0.764, 0.516, 0.239, 1.053, 1.211, 0.830, 1.228, 1.328, 1.373, 1.419, 1.412, 1.420, 1.381,
              1.405, 1.412]

_FORMATS: list[Callable[[int, float], str]] = [
    # a LightningModule's own print in on_train_batch_end ("epoch 0 | step   15 | loss 1.3990 | lr 8.00e-04")
    lambda step, v: f"epoch {step // 60} | step {step:4d} | loss {v:.4f} | lr 1.00e-03",
    # Megatron-LM's training_log line
    lambda step, v: (f" [2024-05-02 10:11:12] iteration {step:8d}/   10000 | consumed samples: {step * 32:10d} | "
                     f"elapsed time per iteration (ms): 412.3 | learning rate: 3.000E-04 | global batch size:    32 | "
                     f"lm loss: {v:.6E} | loss scale: 1.0 | grad norm: 1.234 | number of skipped iterations:   0 | "
                     "number of nan iterations:   0 |"),
    # a hand-written loop's key=value print
    lambda step, v: f"step={step} loss={v:.4f} lr=0.001",
]


def _lines(fmt: Callable[[int, float], str], losses: list[float], first: int = 15) -> list[str]:
    return [fmt(first + 15 * i, v) for i, v in enumerate(losses)]


def _alerts(lines: list[str]) -> list[str]:
    return [i.failure for i in engine_verdict(lines) if i.severity in ("warning", "critical")]


@pytest.mark.parametrize("fmt", _FORMATS)
def test_a_loss_back_at_its_start_and_held_is_a_divergence(fmt: Callable[[int, float], str]) -> None:
    assert _alerts(_lines(fmt, _LEARNED + _UNLEARNED)) == ["loss_spike"]


@pytest.mark.parametrize("fmt", _FORMATS)
def test_a_run_restarted_from_scratch_is_not(fmt: Callable[[int, float], str]) -> None:
    # the same values, but the counter starts again from its first step where the loss is back up
    again = [1.402, 1.371, 1.388, 1.392, 1.380, 1.366, 1.351, 1.322]
    assert _alerts(_lines(fmt, _LEARNED) + _lines(fmt, again)) == []


@pytest.mark.parametrize("fmt", _FORMATS)
def test_a_loss_only_part_of_the_way_back_is_not(fmt: Callable[[int, float], str]) -> None:
    # noisy, and up again to ~0.8 (well below the first level, 1.33): the run's noise, a harder stretch
    partway = [0.41, 0.52, 0.38, 0.70, 0.81, 0.77, 0.84, 0.79, 0.82, 0.80, 0.76, 0.83]
    assert _alerts(_lines(fmt, _LEARNED + partway)) == []
