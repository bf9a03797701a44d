"""YOLACT's iteration line (dbolya/yolact train.py, yolact_edge and the forks that keep its print):
``[%3d] %7d ||`` then each loss part's moving average under its letter (B box, C class, M mask, S
semantic, ...) and ``T: %.3f``, their total, the loss to watch. Rows built on that print, in the
shapes of the logs of dbolya/yolact issues #103 (a start) and #164 (a later epoch)."""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict, fed_state


def _line(epoch: int, it: int, parts: tuple[float, ...], eta: str, timer: float) -> str:
    """YOLACT's print: ('[%3d] %7d ||' + (' %s: %.3f |' * len(losses)) + ' T: %.3f || ETA: %s || timer: %.3f')."""
    cells = "".join(f" {k}: {v:.3f} |" for k, v in zip("BCMS", parts, strict=True))
    return f"[{epoch:3d}] {it:7d} ||{cells} T: {sum(parts):.3f} || ETA: {eta} || timer: {timer:.3f}"


# the first iterations of a COCO run (the shape of dbolya/yolact#103's log): every part falling
_START = [_line(0, 10 * i, (7.6 - 0.14 * i, 7.0 - 0.21 * i, 4.5 + 0.05 * (i % 3), 2.0 - 0.12 * i),
                f"2 days, {22 - i // 4}:15:24", 0.29) for i in range(12)]
# epoch 17 of a custom-data run (the shape of dbolya/yolact#164's log): its noise around T ~ 14
_LATER = [_line(17, 12430 + 10 * i, (4.7 + w, 2.54, 6.6 + 2 * w, 0.13), "3 days, 6:52:38", 0.356)
          for i, w in enumerate((0.02, -0.09, 0.05, 0.11, -0.12, 0.0))]


def test_the_total_is_the_loss_and_the_counters_are_read() -> None:
    st = fed_state(_LATER[:2])
    samples = [s for rs in st.ranks.values() for s in rs.samples]
    assert [(s.step, s.data.get("epoch"), s.data["loss"]) for s in samples] == [(12430, 17.0, 14.030), (12440, 17.0, 13.7)]


def test_the_two_epoch_form_of_the_forks() -> None:
    # print(('[%3d|%3d] %7d ||' + ...): the epoch and the unlabelled-data epoch of a semi-supervised fork
    st = fed_state(["[  3|  1]     420 || B: 3.233 | C: 2.508 | M: 4.462 | S: 0.910 | T: 11.113 || ETA: 1 day, 17:55:18 || timer: 1.783"])
    samples = [s for rs in st.ranks.values() for s in rs.samples]
    assert [(s.step, s.data.get("epoch"), s.data["loss"]) for s in samples] == [(420, 3.0, 11.113)]


@pytest.mark.parametrize("lines", [_START, _LATER])
def test_healthy_runs_raise_nothing(lines: list[str]) -> None:
    assert not [i for i in engine_verdict(lines) if i.severity in ("warning", "critical")]


def test_a_total_exploded_past_any_objective_is_a_loss_spike() -> None:
    blown = ("[  0]     120 || B: 142067011493706768318464.000 | C: 411155835426957667860480.000 | M: 6.972 | "
             "S: 2418920325.888 | T: 553222846920666835320832.000 || ETA: 2 days, 16:29:10 || timer: 0.181")
    found = [i for i in engine_verdict([*_START, blown]) if i.severity in ("warning", "critical")]
    assert found and found[0].failure == "loss_spike" and found[0].step == 120


def test_a_nan_total_is_a_nan_loss() -> None:
    bad = "[  0]     120 || B: nan | C: nan | M: 5.102 | S: nan | T: nan || ETA: 2 days, 16:29:10 || timer: 0.281"
    found = engine_verdict([*_START, bad])
    assert found and found[0].failure == "nonfinite_loss" and found[0].step == 120
