"""Whose batch overflowed, when every rank reports the same skipped steps.

The overflow flag of a dynamic loss scaler is all-reduced: every rank skips the step and every
rank's "gradient overflow in 8 of the last 20 steps" tally says the same. When the ranks log
their own (local) losses, the one rank whose loss left fp16's range (above 65504, or not
finite) while its peers' stayed ordinary at the same step is whose batch overflowed (corpus
holdout16 g16-032: rank 2's local_loss 4.6e30 beside 1.8 on ranks 0 and 1; holdout17 g17-019:
rank 3's local_loss nan while the scale halves to its floor). Several such ranks, or a rank
with no peer logged at that step (rank-zero logging), name nobody.

The same tally line is a skip rate, not one rank's note of inf in its own gradients: the
parameter a note names (`fp16 grad overflow in 2.weight`, corpus holdout19 g19-004) starts with
a name, not a count.
"""

from __future__ import annotations

from tests.helpers import engine_events, engine_verdict


def _step(rank: int, step: int, loss: str, scale: str = "4.1943e+06") -> str:
    return f"2026-12-06 01:35:45,192 | INFO    | rank={rank} | step {step} local_loss {loss} scale {scale}"


def _tally(rank: int, n: int) -> str:
    return (f"2026-12-06 01:35:45,424 | WARNING | rank={rank} | gradient overflow in {n} of the last 20 steps "
            "(optimizer step skipped); loss scale oscillating around 4.1943e+06")


def _job(losses: dict[int, list[str]]) -> list[str]:
    lines: list[str] = []
    for i, step in enumerate((20, 40, 60, 80, 100)):
        for rank, series in losses.items():
            lines.append(_step(rank, step, series[i]))
        if step >= 60:
            lines += [_tally(rank, 8 if step == 60 else 5) for rank in losses]
    return lines


def _skips(lines: list[str]) -> list[tuple[str, int | None, object]]:
    return [(i.failure, i.rank, i.data.get("rank_from")) for i in engine_verdict(lines)
            if i.failure == "fp16_overflow_skips"]


def test_a_tally_of_skipped_steps_is_a_rate_not_a_local_note() -> None:
    [tally] = [e for e in engine_events([_tally(1, 8)]) if e.failure == "fp16_overflow_skips"]
    assert tally.data.get("skip_window") and not tally.data.get("local_overflow")
    [note] = [e for e in engine_events(["[rank1] fp16 grad overflow in 2.weight (max|g|=1.833e+00) at step 1"])
              if e.failure == "fp16_overflow_skips"]
    assert note.data.get("local_overflow")


def test_the_one_rank_whose_loss_left_fp16s_range_is_named() -> None:
    ordinary = ["1.78", "1.83", "1.79", "1.80", "1.81"]
    lines = _job({0: ordinary, 1: ordinary, 2: ["1.82", "1.79", "4.605e+30", "1.981e+30", "1.989e+31"]})
    assert engine_verdict(lines)[0].failure == "fp16_overflow_skips"
    assert _skips(lines) == [("fp16_overflow_skips", 2, "out_of_range_loss")]


def test_two_such_ranks_or_no_peer_at_that_step_name_nobody() -> None:
    ordinary = ["1.78", "1.83", "1.79", "1.80", "1.81"]
    wild = ["1.82", "1.79", "4.605e+30", "1.981e+30", "1.989e+31"]
    assert _skips(_job({0: ordinary, 1: wild, 2: wild})) == [("fp16_overflow_skips", None, None)]
    # rank-zero logging: the wild loss has no peer's loss beside it
    assert _skips(_job({0: wild})) == [("fp16_overflow_skips", None, None)]


def test_a_loss_inside_fp16s_range_names_nobody() -> None:
    ordinary = ["1.78", "1.83", "1.79", "1.80", "1.81"]
    high = ["1.82", "1.79", "60000", "51000", "42000"]
    assert _skips(_job({0: ordinary, 1: ordinary, 2: high})) == [("fp16_overflow_skips", None, None)]
