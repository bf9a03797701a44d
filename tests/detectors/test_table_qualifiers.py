"""A plain table's header cell may carry a qualifier in parentheses (how the value was averaged,
its unit: ``loss(ema50)``, ``loss(avg)``, ``time(s)``), and a row may hold a short flag in a
column the table does not read (``clip  yes``). The column is still the named metric and the row
still a row of numbers.

Source of the shape: a CPU ``torchrun`` job of the round-19 gatherers (holdout23 g23d-008, a
rank-0 fixed-width table ``step  lr  loss(ema50)  grad_norm  clip  tok/s``), whose lr-schedule bug
shows only as a grad-norm column growing tenfold with clipping on every row."""

from __future__ import annotations

import pytest

from detectors.parsers.metrics import _plain_header_cols
from tests.helpers import engine_verdict


@pytest.mark.parametrize(("header", "cols"), [
    ("  step         lr  loss(ema50)   grad_norm  clip    tok/s", ("step", "lr", "loss", "grad_norm", None, None)),
    ("epoch  loss(avg)  time(s)", ("epoch", "loss", None)),
    ("iter  train_loss(mean)  grad_norm(L2)", ("step", "loss", "grad_norm")),
])
def test_a_qualified_header_cell_names_its_metric(header: str, cols: tuple[str | None, ...]) -> None:
    assert _plain_header_cols(header) == cols


def _table(jump_at: int | None) -> list[str]:
    lines = ["  step         lr  loss(ema50)   grad_norm  clip    tok/s",
             "----------------------------------------------------------"]
    loss = 0.85
    for step in range(10, 250, 10):
        hot = jump_at is not None and step >= jump_at
        loss = loss + 0.03 if hot else loss * 0.97
        norm = 5.0 + (step % 30) / 10 if hot else 0.45 + (step % 40) / 400
        lines.append(f"{step:6d}   {2.0 if hot else 0.01:8.2e}   {loss:10.4f}   {norm:9.3f}   {'yes' if hot else 'no':>3}    31000")
    return lines


def test_a_grad_norm_column_that_grows_tenfold_is_read_through_the_flag_column() -> None:
    top = engine_verdict(_table(150))[0]
    assert top.failure in ("grad_norm_explosion", "loss_spike")
    assert top.severity == "warning" and top.step is not None and 150 <= top.step <= 190


def test_the_same_table_without_the_jump_is_quiet() -> None:
    assert [i for i in engine_verdict(_table(None)) if i.severity in ("critical", "warning")] == []
