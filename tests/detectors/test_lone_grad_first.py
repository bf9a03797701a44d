"""The one rank whose own grad norm went non-finite a step before every rank's loss did.

A structlog JSON job (corpus holdout28 g28-023, sealed, generated): each rank logs its own
``grad_norm`` (the values differ across ranks: not a reduced norm); at step 48 only rank 1's is
NaN while its loss is still finite, and at step 49, after the all-reduce, every rank's loss is
NaN and every rank's guard prints ``non-finite loss, stopping``. Rank 1 is the initiator: the
peers' finite norms at step 48 show the NaN was its own; the guards at step 49 (rank 1's own
included) report what the metric lines already showed.
"""

from __future__ import annotations

import json

from tests.helpers import engine_verdict


def _line(rank: int, step: int, loss: float, grad: float) -> str:
    return json.dumps({"rank": rank, "step": step, "loss": loss, "grad_norm": grad, "event": "step", "level": "info"})


def _job(*bad_grad_ranks: int) -> list[str]:
    lines: list[str] = []
    for step in range(6, 49, 6):
        for r in (3, 1, 2, 0):
            lines.append(_line(r, step, 1.5 + r / 10 - step / 100, 1.0 + r / 7 + step / 100))
    for r in (0, 2, 3, 1):
        lines.append(_line(r, 48, 0.8 + r / 10, float("nan") if r in bad_grad_ranks else 1.9 + r / 10))
    lines += [_line(r, 49, float("nan"), float("nan")) for r in (0, 1, 3, 2)]
    lines += [json.dumps({"rank": r, "step": 49, "event": "non-finite loss, stopping", "level": "error"}) for r in (0, 3, 1, 2)]
    return lines


def test_the_rank_whose_own_norm_went_nan_first_leads() -> None:
    top = engine_verdict(_job(1))[0]
    assert (top.failure, top.rank, top.step) == ("nonfinite_loss", 1, 48)


def test_two_ranks_first_at_once_lead_nothing_from_their_norms() -> None:
    # ranks 1 and 2 at step 48: no one rank's norm went first, so the grad norms lead nothing
    top = engine_verdict(_job(1, 2))[0]
    assert top.failure == "nonfinite_loss" and top.step == 49
