"""pytorch-yolo2's RegionLoss print, kept by singleshotpose and the many YOLOv2/v3 forks:
"371: nGT 19, recall 13, proposals 0, loss: x 3.11, y 3.10, w nan, h nan, conf 164.8, cls 83.2,
total nan". The leading number is the images seen so far (not a Slurm task label) and "total" is
the loss. (A pytorch-yolov3 fork's log, 2019; one fork adds "AP 68.42%" before "proposals".)"""

from __future__ import annotations

from tests.helpers import engine_verdict

_ROWS = [
    "370: nGT 12, recall 9, proposals 0, loss: x 2.118402, y 2.105752, w 0.911, h 0.842, conf 64.831421, cls 43.258507,"
    " total 114.067",
    "371: nGT 19, recall 13, AP 68.42% proposals 0, loss: x 3.118402, y 3.105752, w nan, h nan, conf 164.831421,"
    " cls 83.258507, total nan",
    "372: nGT 42, recall 11, AP 26.19% proposals 0, loss: x 3.763822, y 4.745901, w nan, h nan, conf 174.948318,"
    " cls 122.696747, total nan",
]


def test_a_nan_total_is_a_nan_loss_with_no_rank() -> None:
    top = engine_verdict(_ROWS)[0]
    assert (top.failure, top.rank) == ("nonfinite_loss", None)


def test_finite_rows_raise_nothing() -> None:
    assert engine_verdict(_ROWS[:1] * 3) == []
