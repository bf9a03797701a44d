"""A loss that explodes while the fp16 loss scale still holds, followed by an unbroken run of
overflows down to the scaler's floor: the divergence (an exploding learning rate) overflowed fp16,
so the spike is the cause and the collapse its consequence. A scale that was already falling
before the loss moved stays the cause. (The shape of a GradScaler job whose learning rate was
raised 1000x mid-run, logged by a python logger behind a rank tag.)"""

from __future__ import annotations

import math

from tests.helpers import engine_verdict


def _job(spike_at: int, descent_at: int, steps: int = 60) -> list[str]:
    scale, loss, out = 65536.0, 2.3, []
    for s in range(1, steps + 1):
        loss = 2.3 * math.exp(-s / 50) if s < spike_at else min(loss * 6, 3e4)
        if s >= descent_at:
            scale = max(scale / 2, 1.0)
        out.append(f"2026-12-02 13:15:{s % 60:02d},079 [rank1] INFO train: step {s} | loss {loss:.4f} | scale {scale:.1f}")
    return out


def test_a_spike_before_the_descent_is_the_cause() -> None:
    top = engine_verdict(_job(spike_at=40, descent_at=44))[0]
    assert (top.failure, top.severity, top.rank) == ("loss_spike", "critical", 1)
    assert any(c["failure"] == "loss_scale_collapse" for c in top.collateral)


def test_a_descent_before_the_spike_stays_the_cause() -> None:
    top = engine_verdict(_job(spike_at=52, descent_at=30))[0]
    assert top.failure == "loss_scale_collapse"
