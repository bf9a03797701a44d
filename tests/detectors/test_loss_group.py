"""A bracketed group of loss parts on a YOLOv3 trainer's line: DeNA/PyTorch_YOLOv3's train.py
(``'[Iter %d/%d] [lr %f] [Losses: xy %f, wh %f, conf %f, cls %f, total %f, imgsize %d]'``) and
the forks that kept its print (ruinmessi/ASFF: ``[Epoch 0/300][Iter 340/51][lr 0.002370][Loss:
anchor 6.53, iou 7.29, l1 24.28, conf 20.55, cls 31.43, imgsize 320, time: 10.53]``, corpus
holdout30 h30a-012, its NaN during warm-up). The group's total is the loss, or the sum of its
parts when it prints none (a NaN in any part is a NaN total); the image size and the timer are
no parts."""

from __future__ import annotations

import math

from tests.helpers import engine_events, top_verdict


def _samples(lines: list[str]) -> list[tuple[int | None, float]]:
    return [(ev.step, ev.data["loss"]) for ev in engine_events(lines) if ev.kind.value == "sample"]


def test_the_groups_total_is_the_loss() -> None:
    got = _samples(["[Iter 100/500000] [lr 0.000100] [Losses: xy 8.245621, wh 3.118844, conf 22.385620, cls 40.119980, "
                    "total 36.861366, imgsize 608]"])
    assert got == [(100, 36.861366)]


def test_without_a_total_the_parts_sum_and_a_nan_part_is_a_nan_loss() -> None:
    got = _samples(["[Epoch 0/300][Iter 340/51][lr 0.002370][Loss: anchor 6.53, iou 7.29, l1 24.28, conf 20.55, cls 31.43, "
                    "imgsize 320, time: 10.53]",
                    "[Epoch 0/300][Iter 390/51][lr 0.003577][Loss: anchor nan, iou nan, l1 nan, conf nan, cls nan, "
                    "imgsize 320, time: 10.32]"])
    assert got[0] == (340, 90.08) and got[1][0] == 390 and math.isnan(got[1][1])


def test_a_run_of_them_going_nan_is_a_nan_loss() -> None:
    lines = [f"[Epoch 0/300][Iter {it}/51][lr 0.0024][Loss: anchor {a}, iou 7.29, l1 24.28, conf 20.55, cls 31.43, "
             "imgsize 320, time: 10.53]" for it, a in ((340, "6.53"), (350, "5.88"), (360, "5.69"), (370, "nan"), (380, "nan"))]
    assert top_verdict(lines)[0] == "nonfinite_loss"


def test_a_group_of_one_part_or_of_no_numbers_is_no_sample() -> None:
    assert _samples(["[Loss: total 2.5]", "[Losses: see below]", "[Loss: imgsize 320, time: 10.5]"]) == []
