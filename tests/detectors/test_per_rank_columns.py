"""A table with a column per rank ("step  loss[r0]  loss[r1]  loss[r2]  loss[r3]  mean", a job
that gathers every rank's loss and rank 0 prints them side by side): each such column is that
rank's own metric, so the rank whose column went non-finite first is named."""

from __future__ import annotations

import pytest

from detectors.parsers.metrics import _plain_header_cols
from tests.helpers import engine_verdict


@pytest.mark.parametrize(("header", "cols"), [
    (" step    loss[r0]    loss[r1]       mean", ("step", "loss@0", "loss@1", None)),
    ("step loss_rank0 loss_rank1", ("step", "loss@0", "loss@1")),
    ("iter r0/loss r1/loss", ("step", "loss@0", "loss@1")),
])
def test_per_rank_column_names(header: str, cols: tuple[str | None, ...]) -> None:
    assert _plain_header_cols(header) == cols


def _table(bad_from: dict[int, int]) -> list[str]:
    lines = [" step    loss[r0]    loss[r1]    loss[r2]    loss[r3]       mean"]
    for s in range(10, 50, 2):
        vals = [float("nan") if s >= bad_from.get(r, 10**9) else 3.0 - s / 30 + r / 10 for r in range(4)]
        mean = sum(vals) / 4
        lines.append(f"{s:5d}" + "".join(f"{v:12.4f}" for v in vals) + f"{mean:11.4f}")
    return lines


def test_the_rank_whose_column_went_nan_first_is_named() -> None:
    top = engine_verdict(_table({3: 44, 0: 46, 1: 46, 2: 46}))[0]
    assert (top.failure, top.rank, top.step) == ("nonfinite_loss", 3, 44)


def test_every_column_at_once_names_no_rank() -> None:
    top = engine_verdict(_table({0: 44, 1: 44, 2: 44, 3: 44}))[0]
    assert (top.failure, top.rank) == ("nonfinite_loss", None)
