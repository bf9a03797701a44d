"""The odd rank at the onset of a failure that shows on every rank.

Gradients are all-reduced, so once one rank's batch makes them non-finite (or overflows fp16)
every rank logs a NaN grad norm, skips the step and, a step later, a NaN loss. The losses are
each rank's own until then: ecmwf/WeatherGenerator#2724 ("the loss value is rank-local. So if a
NaN or a large spike occurs on any of ranks 1..N-1 while rank 0's loss happens to be finite and
normal ... the bad gradients go straight into the all-reduce and contaminate every rank's
update"); kyutai-labs/pocket-tts#262 ("Under torchrun, DDP gradients are identical across ranks,
so every rank stops together": the grad norm every rank prints is the same value). At the step
where the failure begins, the one rank whose own loss stands apart from its peers' (a spike of
its own series, far from the peers' values) is where it came from; a loss every rank prints alike
(reduced), a second odd rank, a peer as far out, or a log only rank 0 writes name no rank.

Line formats: python logging with a rank filter (``%(asctime)s [%(levelname)s] [rank N] name:
msg``, Lightning's ``[rank: N]`` style as users write it; corpus holdout29 g29b-021, generated),
and structlog key=value lines whose overflow events carry each rank's ``local_loss`` next to a
metric line's ``scale`` column (corpus holdout29 g29b-018, generated; the per-rank loss at
skipped steps is the WeatherGenerator#2724 shape).
"""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict, fed_whole_and_chunked

NAN = float("nan")


def _log(rank: int, step: int, loss: float, grad: float) -> str:
    return (f"2026-12-07 18:09:39,{100 + step:03d} [INFO] [rank {rank}] poisson: "
            f"step={step} loss={loss:.4f} grad_norm={grad:.4f}")


def _nan_job(at_onset: dict[int, float], ranks: int = 2) -> list[str]:
    """Ranks log every 4 steps (the grad norm all-reduced: one value on every rank); at step 44
    every rank's grad norm is NaN while the losses are ``at_onset``; from step 45 every loss is NaN."""
    lines: list[str] = []
    for step in range(0, 44, 4):
        g = 0.3 + (step % 7) / 10
        for r in range(ranks):
            lines.append(_log(r, step, -3.0 - r / 10 + (step % 5) / 10 if step else 20.0 + r, g))
    for r in range(ranks):
        lines.append(_log(r, 44, at_onset[r], NAN))
    for step in range(45, 50):
        for r in range(ranks):
            lines.append(_log(r, step, NAN, NAN))
    return lines


def _nonfinite(lines: list[str]) -> tuple[int | None, int | None]:
    top = engine_verdict(lines)[0]
    assert top.failure == "nonfinite_loss"
    return top.rank, top.step


def test_the_rank_whose_own_loss_spiked_where_the_grad_norms_went_nan() -> None:
    assert _nonfinite(_nan_job({0: -2.4163, 1: 35.4032})) == (1, 44)


def test_the_odd_rank_among_four() -> None:
    assert _nonfinite(_nan_job({0: -2.9, 1: -3.1, 2: 41.7, 3: -2.8}, ranks=4)) == (2, 44)


def test_ordinary_losses_at_the_onset_name_no_rank() -> None:
    assert _nonfinite(_nan_job({0: -2.4163, 1: -3.2})) == (None, 44)
    assert _nonfinite(_nan_job({0: -2.4163, 1: 35.4032})) == (1, 44)  # (the contrast)


def test_two_odd_ranks_name_no_rank() -> None:
    assert _nonfinite(_nan_job({0: 30.2, 1: 35.4, 2: -3.0, 3: -2.9}, ranks=4))[0] is None
    assert _nonfinite(_nan_job({0: -3.1, 1: 35.4, 2: -3.0, 3: -2.9}, ranks=4))[0] == 1


def test_a_loss_every_rank_prints_alike_names_no_rank() -> None:
    # a reduced loss: the same value on every rank, so every rank "spiked" at once
    assert _nonfinite(_nan_job({0: 35.4032, 1: 35.4032}))[0] is None
    assert _nonfinite(_nan_job({0: 35.4032, 1: -3.1}))[0] == 0


def test_rank_zero_only_logging_names_no_rank() -> None:
    # one rank prints metrics in a job of two (torchrun's banner says so): its loss is no comparison
    lines = ["W1207 17:48:32.428000 26329 torch/distributed/run.py:874] Setting OMP_NUM_THREADS environment "
             "variable for each process to be 1 in default, to avoid your system being overloaded, please further "
             "tune the variable for optimal performance in your application as needed."]
    both = _nan_job({0: 35.4, 1: -3.0})
    assert _nonfinite(lines + [ln for ln in both if "[rank 0]" in ln])[0] is None
    assert _nonfinite(lines + both)[0] == 0


# ------------------------------------------------------------------ fp16: every rank skips
def _train(rank: int, step: int, loss: float, scale: float) -> str:
    return f"timestamp='2026-12-07T18:08:18.{step:06d}Z' level='info' event='train' rank={rank} step={step} loss={loss} scale={scale}"


def _skip(rank: int, step: int, loss: float, before: float, total: int) -> str:
    return (f"timestamp='2026-12-07T18:08:19.{step:06d}Z' level='warning' event='grad_overflow_skip_step' rank={rank} "
            f"step={step} local_loss={loss} scale_before={before} scale_after={before / 2} skipped_total={total}")


def _fp16_job(odd_loss: float, odd_at_first_skip: bool = True) -> list[str]:
    """Three ranks log a scale column every 10 steps; from step 70 every rank logs an overflow
    event on 2 of every 3 steps (the flag is all-reduced), each with its own ``local_loss``:
    rank 2's is ``odd_loss``, the others' ~2.1. The scale column shows the drop at step 90."""
    lines = ["timestamp='2026-12-07T18:08:18.000000Z' level='info' event='config' precision='16-mixed'"]
    scale = 65536.0
    for step in range(10, 70, 10):
        scale = min(scale * 2, 131072.0)
        lines += [_train(r, step, round(2.09 - step / 10000 + r / 1000, 4), scale) for r in (2, 0, 1)]
    total = 0
    for step in range(70, 86):
        if step % 3 == 2:
            continue
        total += 1
        for r in (0, 1, 2):
            odd = r == 2 and (odd_at_first_skip or step > 70)
            lines.append(_skip(r, step, odd_loss if odd else round(2.09 + r / 1000, 4), scale, total))
        scale /= 2
    lines += [_train(r, 90, round(2.07 + r / 1000, 4), scale) for r in (2, 1, 0)]
    return lines


def _overflow_rank(lines: list[str]) -> int | None:
    inc = next(i for i in engine_verdict(lines) if i.failure in ("fp16_overflow_skips", "loss_scale_collapse"))
    return inc.rank


def test_the_rank_whose_own_loss_stood_apart_in_the_first_overflow_lines() -> None:
    assert _overflow_rank(_fp16_job(583.689)) == 2


def test_overflow_lines_with_ordinary_losses_name_no_rank() -> None:
    assert _overflow_rank(_fp16_job(2.1)) is None
    assert _overflow_rank(_fp16_job(640.2)) == 2


def test_an_odd_loss_after_the_first_overflow_is_no_onset() -> None:
    # rank 2's loss stands apart only from the second skipped step on: at the first one every
    # rank's loss was ordinary, so the overflows did not begin with its batch as far as the logs say
    assert _overflow_rank(_fp16_job(583.689, odd_at_first_skip=False)) is None
    assert _overflow_rank(_fp16_job(583.689)) == 2


def _column_job(odd_at: int) -> list[str]:
    """Two ranks log a loss and a scale column every 5 steps, and a loss alone at step 43; the
    column falls between steps 40 and 45 (an overflow's back-off); rank 1's loss is 633 at
    ``odd_at`` (43 or 45), ordinary elsewhere."""
    lines = [f"level=INFO rank={r} step={s} loss={2.08 + r / 100 - s / 1000:.4f} scale={2 ** (12 + s // 5)}"
             for s in range(5, 45, 5) for r in (0, 1)]
    lines += [f"level=INFO rank={r} step=43 loss={633.4972 if r == 1 and odd_at == 43 else 2.04 + r / 100}" for r in (0, 1)]
    lines += [f"level=INFO rank={r} step=45 loss={633.4972 if r == 1 and odd_at == 45 else 2.1 + r / 100} scale=65536"
              for r in (1, 0)]
    lines += [f"level=INFO rank={r} step={s} loss={2.07 + r / 100:.4f} scale={65536 // 2 ** ((s - 45) // 5)}"
              for s in range(50, 90, 5) for r in (0, 1)]
    return lines


def test_an_odd_loss_on_the_line_that_shows_the_lower_scale_is_no_onset() -> None:
    # the scale column fell between steps 40 and 45: the overflow was before the line that shows
    # the lower scale (a warning rank 0 alone printed at step 41 there, corpus holdout25 g25-014,
    # generated), so rank 1's loss beside the lower scale is no onset; the losses logged between
    # the two column lines are
    assert _overflow_rank(_column_job(45)) is None
    assert _overflow_rank(_column_job(43)) == 1


@pytest.mark.parametrize("size", [1, 2, 5, 64])
def test_chunking_does_not_change_the_onset_rank(size: int) -> None:
    for lines, rank in ((_nan_job({0: -2.4163, 1: 35.4032}), 1), (_fp16_job(583.689), 2)):
        whole, live = fed_whole_and_chunked(lines, size)
        assert [(i.failure, i.rank, i.step) for i in whole.verdict()] == [(i.failure, i.rank, i.step) for i in live.verdict()]
        assert whole.verdict()[0].rank == rank


# ------------------------------------------------------------------ a rank's own grad norm
def _adapter(rank: int, step: int, loss: float, grad: float) -> str:
    # python logging with a LoggerAdapter's rank field (corpus holdout25 g25d-028, generated)
    return f"2026-12-07 05:05:26,{step * 7 % 1000:03d} [INFO] train (rank={rank}): step={step} loss={loss:.5f} grad_norm={grad:.4f}"


def _own_norm_job(reduced: bool) -> list[str]:
    """Two ranks log every 10 steps; rank 1 alone logs step 58, a finite loss and a NaN grad norm
    (its guard prints the odd step); from step 59 both log NaN. With ``reduced`` both ranks' norms
    are one value at every step (all-reduced), else each rank's own (they differ)."""
    lines: list[str] = []
    for step in range(10, 60, 10):
        for r in (0, 1):
            lines.append(_adapter(r, step, 0.6 - step / 500 + r / 50, 0.3 + step / 1000 + (0 if reduced else r / 37)))
    lines.append(_adapter(1, 58, 0.49053, NAN))
    for step in range(59, 64):
        lines += [_adapter(r, step, NAN, NAN) for r in (0, 1)]
    return lines


def test_a_rank_whose_own_norm_went_nan_first_leads_where_no_peer_logged_that_step() -> None:
    # Megatron's "Rank 11: found NaN in local grad norm in backward pass before data-parallel
    # communication collective" (alibaba/Pai-Megatron-Patch#366) is a rank's own norm before the
    # reduction; norms that differ across ranks at the steps they share are such own norms
    # (NVIDIA-NeMo/Automodel#825: "local norms ... before all reduce")
    assert _nonfinite(_own_norm_job(reduced=False)) == (1, 58)


def test_norms_every_rank_logs_alike_are_reduced_and_name_no_rank() -> None:
    assert _nonfinite(_own_norm_job(reduced=True))[0] is None
    assert _nonfinite(_own_norm_job(reduced=False))[0] == 1  # (the contrast)
