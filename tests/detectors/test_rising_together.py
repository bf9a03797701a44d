"""Two ranks diverge together under a learning-rate ramp; one rank's spike detector fires a few
lines before the other's, whose losses in between were already several times their own level
(0.065 → 0.24 → 0.36 → 0.93). Those losses were no ordinary ones: every rank was diverging, a
job-wide cause, and no rank is named (correlate ``_spiked_everywhere``, ``RISING_FACTOR``). A
rank whose loss alone jumps while its peer's stays at its level is still named.

Format: a script's own ``rank R | it N | loss X | lr Y`` lines (the pipe-separated style many
training loops print), two ranks interleaved as their shared pipe gives them."""

from __future__ import annotations

from tests.helpers import engine_verdict

_BASE = [0.34, 0.58, 0.45, 0.18, 0.13, 0.12, 0.10, 0.097, 0.067, 0.057, 0.047, 0.104, 0.108]
_RISE0 = [0.40, 0.36, 1.27, 1.62, 15.3, 162.5, 1275.8]
_RISE1 = [0.24, 0.355, 0.93, 2.03, 18.9, 105.5, 1217.5]


def _lines(loss0: list[float], loss1: list[float]) -> list[str]:
    out = []
    for i, (a, b) in enumerate(zip(loss0, loss1, strict=True)):
        it = 8 * (i + 1)
        lr = 0.02 + 0.0064 * it
        out += [f"rank 0 | it {it:4d} | loss {a:.4f} | lr {lr:.3f}", f"rank 1 | it {it:4d} | loss {b:.4f} | lr {lr:.3f}"]
    return out


def test_ranks_rising_together_name_no_rank() -> None:
    base1 = [v * 1.1 for v in _BASE]
    spikes = [i for i in engine_verdict(_lines(_BASE + _RISE0, base1 + _RISE1)) if i.failure == "loss_spike"]
    assert spikes
    assert spikes[0].rank is None


def test_one_rank_alone_jumping_is_still_named() -> None:
    flat = [0.1 + 0.002 * (i % 3) for i in range(7)]
    base1 = [v * 1.1 for v in _BASE]
    spikes = [i for i in engine_verdict(_lines(_BASE + flat, [*base1, 0.11, 0.1, 3.5, 4.2, 12.0, 150.0, 900.0]))
              if i.failure == "loss_spike"]
    assert spikes
    assert spikes[0].rank == 1
