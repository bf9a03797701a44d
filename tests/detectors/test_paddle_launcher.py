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


def test_a_report_cut_after_its_rank_still_names_it_when_no_longer_number_fits() -> None:
    # PaddlePaddle/PaddleOCR#3737 (corpus holdout22 h22c-006): the paste ends at "rank=[1"; of two
    # trainers the rank cannot have gone on as "1x"
    cut = ["INFO 2021-08-14 02:14:55,411 launch_utils.py:307] terminate all the procs",
           "ERROR 2021-08-14 02:14:55,420 launch_utils.py:545] ABORT!!! Out of all 2 trainers, the trainer process "
           "with rank=[1"]
    top = engine_verdict(cut)[0]
    assert (top.failure, top.rank) == ("rank_exception", 1)
    # of 16 trainers "rank=[1" may have been 1 or 10-15: no rank
    assert engine_verdict([cut[0], cut[1].replace("all 2 trainers", "all 16 trainers")])[0].rank is None


# Paddle >= 2.3's launcher (launch/job/container.py): "Container failed !!!" and then each failed
# container by its rank, command, exit code and log file (PaddlePaddle/PaddleSeg#3494,
# 2023, six trainers; the command list is cut here)
_CONTAINER = [
    "I0911 14:55:19.550719 2059877 gloo_wrapper.cc:355] gloo initialized done, rank=0, size=6, store_type=1",
    "LAUNCH INFO 2023-09-11 14:55:20,499 Pod failed",
    "LAUNCH ERROR 2023-09-11 14:55:20,499 Container failed !!!",
    "Container rank 1 status failed cmd ['/home/jh/.virtualenvs/ppaddle/bin/python3', '-u', 'tools/train.py', "
    "'--config', 'configs/quick_start/pp_liteseg_optic_disc_512x512_1k.yml'] code 1 log log/workerlog.1",
]


def test_the_failed_container_is_the_rank_that_crashed() -> None:
    top = engine_verdict(_CONTAINER)[0]
    assert (top.failure, top.rank) == ("rank_exception", 1)


def test_a_completed_container_is_no_failure() -> None:
    line = _CONTAINER[3].replace("status failed", "status completed").replace("code 1 ", "code 0 ")
    assert not [i for i in engine_verdict([line]) if i.severity == "critical"]
