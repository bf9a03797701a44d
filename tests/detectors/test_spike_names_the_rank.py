"""A grad norm that explodes on every rank at once is the all-reduced norm; when one rank's own
loss spiked at that step, alone, its batch is where the explosion came from and it names the rank.
(structlog key=value lines of a real 6-process CPU torchrun job, torch 2.13, one bad shard on rank 4.)"""

from __future__ import annotations

from tests.helpers import engine_verdict


def _line(rank: int, it: int, loss: float, gnorm: float) -> str:
    return (f"timestamp='2026-12-06 02:00:25' level='info' event='train' rank={rank} iteration={it} loss={loss}"
            f" grad_norm={gnorm}")


def _job(bad_rank: int | None) -> list[str]:
    out = []
    for it in range(15, 210, 15):
        out += [_line(r, it, round(2.0 * 0.8 ** (it / 15) + 0.01 * r, 4), round(1.0 * 0.9 ** (it / 15), 3)) for r in range(6)]
    out += [_line(r, 210, 2672333.25 if r == bad_rank else 0.05, 1996.537) for r in range(6)]
    out += [_line(r, 225, 14.0 + r, 812.4) for r in range(6)]
    return out


def test_the_rank_whose_loss_spiked_is_named() -> None:
    top = engine_verdict(_job(4))[0]
    assert (top.failure, top.rank) == ("loss_spike", 4)


def test_without_a_lone_spike_the_explosion_names_no_rank() -> None:
    top = engine_verdict(_job(None))[0]
    assert (top.failure, top.rank) == ("grad_norm_explosion", None)
