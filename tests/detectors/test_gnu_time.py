"""GNU time (``/usr/bin/time python train.py``) reports how the command it ran ended: "Command
terminated by signal 11" is a segfault with no Python traceback, "Command exited with non-zero
status 1" an exit with an error. (A mask-faster-rcnn training script run under `time`, 2020.)"""

from __future__ import annotations

from tests.helpers import engine_verdict

_SEGV = [
    "+ CUDA_VISIBLE_DEVICES=1",
    "+ time python ./tools/trainval_net.py --weight data/imagenet_weights/res101.pth --iters 1250000",
    "Command terminated by signal 11",
    "3.11user 2.63system 0:01.03elapsed 553%CPU (0avgtext+0avgdata 209312maxresident)k",
    "0inputs+16outputs (0major+31535minor)pagefaults 0swaps",
]


def test_a_command_time_saw_killed_by_sigsegv_is_a_segfault() -> None:
    assert [i.failure for i in engine_verdict(_SEGV)][:1] == ["rank_segfault"]


def test_sigkill_under_time_is_a_killed_process() -> None:
    lines = [_SEGV[1], "Command terminated by signal 9", _SEGV[3]]
    assert [i.failure for i in engine_verdict(lines)][:1] == ["rank_killed"]
