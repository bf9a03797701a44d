"""A shell's job-control report of a child killed by a signal (``script: line N: PID Segmentation
fault   (core dumped) command``), also behind Open MPI's ``--timestamp-output`` + ``--tag-output``
prefix, whose ``[1,N]`` names the rank."""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict


@pytest.mark.parametrize("line", [
    # https://github.com/pengfei-luo/MIMIC/issues/4
    'run.sh: line 3:  1544 Segmentation fault      (core dumped) CUDA_VISIBLE_DEVICES=${1} python -u ./codes/main.py '
    '--config "./config/${2}.yaml"',
    # https://github.com/datong-new/Point-GNN.pytorch/issues/12
    "train.sh: line 2: 48996 Segmentation fault      (core dumped) python3 mytrain.py "
    "configs/car_auto_T3_train_train_config configs/car_auto_T3_train_config --dataset_root_dir data",
    # https://github.com/CSAILVision/semantic-segmentation-pytorch/issues/31 (indented in the paste)
    " ./demo_test.sh: line 30: 27040 Segmentation fault      (core dumped) python3 -u test.py --model_path "
    "$MODEL_PATH --test_img $TEST_IMG --arch_encoder resnet50_dilated8 --arch_decoder ppm_bilinear_deepsup "
    "--fc_dim 2048 --result $RESULT_PATH",
])
def test_bash_reporting_a_segfaulted_child_is_a_segfault(line: str) -> None:
    found = engine_verdict([line])
    assert found and found[0].failure == "rank_segfault"


def test_the_open_mpi_tag_after_a_timestamp_names_the_segfaulted_rank() -> None:
    # https://github.com/PaddlePaddle/Paddle/issues/4328 (mpirun --timestamp-output --tag-output)
    lines = [
        "Fri Sep 22 11:52:15 2017[1,7]<stderr>:./train.sh: line 207: 10558 Segmentation fault      "
        "PYTHONPATH=./paddle:$PYTHONPATH GLOG_logtostderr=0 ./paddle_trainer --trainer_id=${OMPI_COMM_WORLD_RANK}",
        "Fri Sep 22 11:52:15 2017[1,7]<stderr>:+ '[' 139 -ne 0 ']'",
        "Fri Sep 22 11:52:15 2017[1,7]<stderr>:+ kill_pserver2_exit",
    ]
    found = engine_verdict(lines)
    assert found and (found[0].failure, found[0].rank) == ("rank_segfault", 7)


def test_a_killed_child_stays_a_kill() -> None:
    # https://github.com/OpenNMT/OpenNMT-py/issues/1824 (corpus dev crash-056): SIGKILL, not a segfault
    found = engine_verdict(["run.sh: line 66: 777016 Killed                  python -u train.py -data data/demo"])
    assert found and found[0].failure == "rank_killed"
