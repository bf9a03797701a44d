"""YOLACT's iteration line (dbolya/yolact train.py, yolact_edge and the forks that keep its print):
``[%3d] %7d ||`` then each loss part's moving average under its letter (B box, C class, M mask, S
semantic, ...) and ``T: %.3f``, their total, the loss to watch. Healthy rows are real (dbolya/yolact
issues #103 and #164); the exploded and the NaN rows are built on the same print."""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict, fed_state

# dbolya/yolact#103: the first iterations of a run on COCO
_START = [
    "[  0]       0 || B: 7.666 | C: 7.013 | M: 4.458 | S: 1.997 | T: 21.134 || ETA: 0:00:00 || timer: 9.527",
    "[  0]      10 || B: 6.981 | C: 6.276 | M: 5.049 | S: 1.818 | T: 20.124 || ETA: 2 days, 22:15:24 || timer: 0.290",
    "[  0]      20 || B: 6.642 | C: 6.060 | M: 5.533 | S: 1.561 | T: 19.797 || ETA: 2 days, 18:59:09 || timer: 0.286",
    "[  0]      30 || B: 6.168 | C: 5.853 | M: 5.514 | S: 1.350 | T: 18.884 || ETA: 2 days, 18:01:36 || timer: 0.289",
    "[  0]      40 || B: 6.237 | C: 5.683 | M: 5.414 | S: 1.171 | T: 18.505 || ETA: 2 days, 17:24:02 || timer: 0.288",
    "[  0]      50 || B: 6.368 | C: 5.529 | M: 5.313 | S: 1.048 | T: 18.259 || ETA: 2 days, 16:53:43 || timer: 0.281",
    "[  0]      60 || B: 6.233 | C: 5.345 | M: 5.327 | S: 0.946 | T: 17.851 || ETA: 2 days, 16:41:54 || timer: 0.278",
    "[  0]      70 || B: 6.107 | C: 5.201 | M: 5.312 | S: 0.883 | T: 17.503 || ETA: 2 days, 16:43:57 || timer: 0.296",
    "[  0]      80 || B: 6.050 | C: 5.052 | M: 5.274 | S: 0.825 | T: 17.201 || ETA: 2 days, 16:41:50 || timer: 0.294",
    "[  0]      90 || B: 6.250 | C: 4.935 | M: 5.204 | S: 0.767 | T: 17.156 || ETA: 2 days, 16:38:08 || timer: 0.286",
    "[  0]     100 || B: 6.233 | C: 4.789 | M: 5.186 | S: 0.724 | T: 16.933 || ETA: 2 days, 16:35:53 || timer: 0.288",
    "[  0]     110 || B: 6.134 | C: 4.497 | M: 5.170 | S: 0.598 | T: 16.399 || ETA: 2 days, 16:29:10 || timer: 0.288",
]
# dbolya/yolact#164: epoch 17 of a custom-data run, its noise
_LATER = [
    "[ 17]   12430 || B: 4.725 | C: 2.548 | M: 6.641 | S: 0.135 | T: 14.049 || ETA: 3 days, 6:52:38 || timer: 0.356",
    "[ 17]   12440 || B: 4.636 | C: 2.541 | M: 6.520 | S: 0.121 | T: 13.818 || ETA: 3 days, 6:52:41 || timer: 0.357",
    "[ 17]   12450 || B: 4.655 | C: 2.538 | M: 6.710 | S: 0.119 | T: 14.022 || ETA: 3 days, 6:52:40 || timer: 0.357",
    "[ 17]   12460 || B: 4.801 | C: 2.533 | M: 6.707 | S: 0.113 | T: 14.155 || ETA: 3 days, 6:52:29 || timer: 0.359",
    "[ 17]   12470 || B: 4.465 | C: 2.544 | M: 6.497 | S: 0.123 | T: 13.629 || ETA: 3 days, 6:52:34 || timer: 0.357",
    "[ 17]   12480 || B: 4.464 | C: 2.539 | M: 6.670 | S: 0.136 | T: 13.809 || ETA: 3 days, 6:52:32 || timer: 0.356",
]


def test_the_total_is_the_loss_and_the_counters_are_read() -> None:
    st = fed_state(_LATER[:2])
    samples = [s for rs in st.ranks.values() for s in rs.samples]
    assert [(s.step, s.data.get("epoch"), s.data["loss"]) for s in samples] == [(12430, 17.0, 14.049), (12440, 17.0, 13.818)]


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
