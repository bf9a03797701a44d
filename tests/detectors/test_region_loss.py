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


def test_a_forks_extra_loss_parts_keep_the_total() -> None:
    """A contrastive YOLO fork adds ``class_contrast`` before the total (corpus holdout18
    h18a-010): the w/h parts explode, then the total is NaN from the images-seen count 80."""
    rows = [
        "64: nGT 42, recall 1, proposals 35613, loss: x 27.029242, y 28.630236, w 177730.062500, h 1531226.000000, "
        "conf 2786.200684, cls 108.162247, class_contrast 0.000000, total 1711906.125000",
        "coord_mask: tensor(27.0292, device='cuda:0')",
        "80: nGT 40, recall 13, proposals 39993, loss: x 23.945053, y 22.210649, w 2029862.625000, h 16542059.000000, "
        "conf nan, cls 111.281578, class_contrast 0.000000, total nan",
        "96: nGT 30, recall 0, proposals 0, loss: x nan, y nan, w nan, h nan, conf nan, cls nan, class_contrast nan, total nan",
    ]
    top = engine_verdict(rows)[0]
    assert (top.failure, top.rank, top.step) == ("nonfinite_loss", None, 80)
