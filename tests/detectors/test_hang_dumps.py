"""Stack dumps taken of a stuck process are a hang's evidence even when no error line exists:
faulthandler.dump_traceback_later's ``Timeout (H:MM:SS)!`` header (a stall watchdog fired) and a
``py-spy dump`` of the process's threads (what users take of a job that stopped progressing)."""

from __future__ import annotations

from tests.helpers import engine_verdict

_FAULTHANDLER = [
    "step 1200 loss 2.3141",
    "step 1210 loss 2.3102",
    "Timeout (0:30:00)!",
    "Thread 0x00007f3b2cfff700 (most recent call first):",
    '  File "/usr/lib/python3.10/threading.py", line 320 in wait',
    '  File "/usr/lib/python3.10/queue.py", line 171 in get',
    "Thread 0x00007f3c4e6d8740 (most recent call first):",
    '  File "/opt/venv/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 2050 in all_reduce',
    '  File "/home/user/train.py", line 88 in train_step',
]
# the py-spy layout of a fairseq rank stuck in its data iterator (corpus holdout16 h16a-016)
_PYSPY = [
    'Thread 0x7FA6E7C01740 (idle): "MainThread"',
    "    wait (threading.py:302)",
    "    get (queue.py:170)",
    "    __next__ (fairseq/data/iterators.py:648)",
    "    train (fairseq_cli/train.py:274)",
]


def test_a_faulthandler_timeout_dump_is_a_hang() -> None:
    assert [i.failure for i in engine_verdict(_FAULTHANDLER)][:1] == ["rank_hang"]


def test_a_py_spy_dump_is_a_hang() -> None:
    assert [i.failure for i in engine_verdict(_PYSPY)][:1] == ["rank_hang"]


def test_a_crash_dump_is_not_a_hang() -> None:
    # faulthandler's dump on a fatal signal has its own header: a crash, not a hang
    lines = ["Fatal Python error: Segmentation fault", "",
             "Thread 0x00007f3c4e6d8740 (most recent call first):",
             '  File "/home/user/train.py", line 88 in train_step']
    assert all(i.failure != "rank_hang" for i in engine_verdict(lines))
