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
