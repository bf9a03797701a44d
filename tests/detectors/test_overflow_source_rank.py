"""A loss scale that collapses is the job's (the overflow flag is all-reduced: every rank skips the
step), but when at the step the overflows began exactly one rank logged a non-finite loss of its own
while another rank logged a finite one, the overflowing gradients came from that rank's batch. (The
shape of an fp16 optimizer that logs each rank's own loss beside the shared scale.)"""

from __future__ import annotations

from tests.helpers import engine_verdict


def _job(inf_ranks: set[int], bad: str = "inf") -> list[str]:
    out, scale = [], 65536
    for step in range(10, 37, 10):
        for r in (0, 1):
            out.append(f"2026-12-06 01:30:08,680 [INFO] fp16_optimizer (rank {r}): step={step} loss=2.1188 loss_scale={scale}")
    for step in range(37, 54):
        for r in (0, 1):
            out.append(f"2026-12-06 01:30:08,777 [WARNING] fp16_optimizer (rank {r}): [step {step}] OVERFLOW! Skipping step."
                       f" Attempted loss scale: {scale}, reducing to {scale // 2}")
            loss = bad if r in inf_ranks else "2.1060"
            out.append(f"2026-12-06 01:30:08,777 [INFO] fp16_optimizer (rank {r}): step={step} loss={loss} loss_scale={scale // 2}")
        scale = max(scale // 2, 1)
    # DeepSpeed's / fairseq's wording when the scaler is at its floor: the run stops itself
    for r in (0, 1):
        out.append(f"2026-12-06 01:30:08,824 [ERROR] fp16_optimizer (rank {r}): Current loss scale already at minimum"
                   " - cannot decrease scale anymore. Exiting run.")
    return out


def test_the_one_rank_whose_loss_overflowed_is_named() -> None:
    top = engine_verdict(_job({1}))[0]
    assert (top.failure, top.rank) == ("loss_scale_collapse", 1)


def test_every_rank_overflowing_names_none() -> None:
    top = engine_verdict(_job({0, 1}))[0]
    assert (top.failure, top.rank) == ("loss_scale_collapse", None)
    top = engine_verdict(_job(set()))[0]
    assert (top.failure, top.rank) == ("loss_scale_collapse", None)


def test_a_nan_loss_of_that_rank_is_the_same_event() -> None:
    # the rank's own loss is NaN (not inf) on the steps the scaler skips: the collapse, named by
    # that rank, not a NaN of its own
    top = engine_verdict(_job({1}, bad="nan"))[0]
    assert (top.failure, top.rank) == ("loss_scale_collapse", 1)
