"""glibc's heap checks have more wordings than ``free(): invalid pointer``: every one of them is
the process aborting on a corrupted heap (native_abort). Real pastes: weiliu89/caffe#438 (after
Caffe's solver lines), facebookresearch/Detectron#419 (after a json_stats line),
rbgirshick/py-faster-rcnn#443 (with the script's ``Aborted (core dumped)`` line)."""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict


@pytest.mark.parametrize("lines", [
    ["I0211 06:21:48.374701 26001 solver.cpp:257] Iteration 33520 (2.03259 iter/s, 4.91982s/10 iter), loss = 4.2243",
     "*** Error in `./build/tools/caffe': malloc(): smallbin double linked list corrupted: 0x00007fce87574000 ***",
     "======= Backtrace: ========="],
    ['json_stats: {"accuracy_cls": 1.000000, "eta": "1:43:54", "iter": 19980, "loss": 0.023408, "lr": 0.000100}',
     "*** Error in python': free(): corrupted unsorted chunks: 0x00007f3e9009cdd0 ***"],
    ["I1218 17:06:24.796726 25325 net.cpp:165] Memory required for data: 1298400084",
     "*** Error in `python': corrupted double-linked list: 0x00000000269f9640 ***",
     "./experiments/scripts/faster_rcnn_end2end.sh: line 57: 25325 Aborted                 (core dumped) ./tools/train_net.py --gpu 0"],
    ["malloc(): unsorted double linked list corrupted", "Aborted (core dumped)"],
    ["free(): double free detected in tcache 2"],
])
def test_heap_corruption_wordings(lines: list[str]) -> None:
    assert [i.failure for i in engine_verdict(lines)][:1] == ["native_abort"]


def test_an_untagged_heap_corruption_abort_is_the_worker_torchrun_saw_end_of_sigabrt() -> None:
    # DiffSynth on ZeRO-3 (corpus holdout25 h25c-007): glibc's report names no process; torchrun saw
    # local rank 0 end of SIGABRT and stopped rank 1, whose NCCL service thread lost local rank 0
    lines = ["free(): corrupted unsorted chunks",
             "develop-lmf1sgk5:293010:295025 [1] NCCL INFO [Service thread] Connection closed by localRank 0",
             "W0410 08:46:30.320000 292734 torch/distributed/elastic/multiprocessing/api.py:900] Sending process 293010 "
             "closing signal SIGTERM",
             "E0410 08:46:30.329000 292734 torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: -6) "
             "local_rank: 0 (pid: 293009) of binary: /usr/bin/python"]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("native_abort", 0)
