"""A metrics table printed by pandas (Lightning's CSVLogger ``metrics.csv`` read back with
``pd.read_csv`` and printed, as users paste it): the row index comes first, and a metric not
logged in that row is printed ``NaN`` — Lightning writes one row per logging call, so training
rows have no validation loss and validation rows no training loss. Those NaN cells are missing
values, not a non-finite loss; a row whose every metric cell is NaN still is one."""

from __future__ import annotations

from detectors.correlate import incidents
from tests.helpers import engine_verdict, fed_state

_HEAD = "    epoch  step  train_loss  val_loss"


def _rows(train: list[float], val: list[float]) -> list[str]:
    rows, i = [], 0
    for e, (a, b, v) in enumerate(zip(train[::2], train[1::2], val, strict=True)):
        for step, cell, vcell in ((8 * e + 7, a, "NaN"), (8 * e + 15, b, "NaN"), (8 * e + 15, "NaN", v)):
            rows.append(f"{i:<3}{e:>6}{step:>6}{cell if isinstance(cell, str) else f'{cell:.6f}':>12}"
                        f"{vcell if isinstance(vcell, str) else f'{vcell:.6f}':>10}")
            i += 1
    return rows


def test_the_nan_cells_of_a_sparse_pandas_table_are_missing_values() -> None:
    lines = [_HEAD, *_rows([1.03, 2.27, 0.74, 0.82, 0.40, 0.10, 0.18, 0.11], [1.01, 0.41, 0.18, 0.14])]
    assert [i.failure for i in engine_verdict(lines) if i.severity in ("warning", "critical")] == []


def test_a_row_with_no_number_but_nan_is_still_a_nan_loss() -> None:
    lines = [_HEAD, *_rows([1.03, 2.27, 0.74, 0.82], [1.01, 0.41])]
    lines.append(f"{6:<3}{2:>6}{39:>6}{'NaN':>12}{'NaN':>10}")
    found = [i.failure for i in incidents(fed_state(lines, "train.log"))]
    assert "nonfinite_loss" in found
