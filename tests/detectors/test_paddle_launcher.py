"""PaddlePaddle's launcher (paddle.distributed.launch) names the trainer that ended with a non-zero
code by its global rank, then terminates the others: ``ABORT!!! Out of all 4 trainers, the trainer
process with rank=[2] was aborted. Please check its log.`` Real pastes:
PaddlePaddle/PaddleDetection#4496 (rank=[2], no traceback in the paste) and PaddlePaddle/models#4064
(rank=[0, 2]: two trainers in the same poll, so neither is known to be first)."""

from __future__ import annotations

from tests.helpers import engine_verdict

_DETECTION = [
    "[11/06 16:03:07] ppdet.utils.checkpoint INFO: Save checkpoint: output/yolov3_mobilenet_v1_270e_coco_ppk",
    "INFO 2021-11-06 16:03:27,655 launch_utils.py:327] terminate all the procs",
    "ERROR 2021-11-06 16:03:27,656 launch_utils.py:584] ABORT!!! Out of all 4 trainers, the trainer process with"
    " rank=[2] was aborted. Please check its log.",
    "INFO 2021-11-06 16:03:30,659 launch_utils.py:327] terminate all the procs",
]


def test_the_aborted_trainer_is_the_rank_that_crashed() -> None:
    top = engine_verdict(_DETECTION)[0]
    assert (top.failure, top.rank) == ("rank_exception", 2)


def test_two_trainers_in_one_report_name_no_rank() -> None:
    lines = ["ERROR 2019-12-12 04:02:41,061 launch.py:269] ABORT!!! Out of all 4 trainers, the trainer process with"
             " rank=[0, 2] was aborted. Please check its log."]
    top = engine_verdict(lines)[0]
    assert top.rank is None
