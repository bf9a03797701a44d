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


# gdb attached to an MXNet dist_device_sync worker stuck at the end of an epoch (corpus holdout18 h18b-012)
_GDB = [
    "INFO:root:Epoch[0] Batch [20]\tSpeed: 33.72 samples/sec\tTrain-accuracy=0.515625",
    "INFO:root:Epoch[0] Resetting Data Iterator",
    "INFO:root:Epoch[0] Time cost=35.018",
    "#0  0x00003fffb410dd30 in pthread_cond_wait@@GLIBC_2.17 () from /usr/lib64/power8/libpthread.so.0",
    "#1  0x00003fffb3965f6c in std::condition_variable::wait(std::unique_lock<std::mutex>&) () from /usr/lib64/libstdc++.so.6",
    "#2  0x00003fffa6d2a3e8 in mxnet::engine::ThreadedEngine::WaitForVar(mxnet::engine::Var*) () from libmxnet.so",
]


def test_a_gdb_backtrace_blocked_in_a_wait_is_a_hang() -> None:
    top = engine_verdict(_GDB)[0]
    assert (top.failure, top.rank) == ("rank_hang", None)


def test_a_crash_with_waiting_threads_in_its_dump_stays_the_crash() -> None:
    """A segfault's full thread dump holds threads parked in waits: the signal is the failure."""
    lines = ["W1212 04:02:33.403934 24044 init.cc:205] *** SIGSEGV (@0x0) received by PID 24044 (TID 0x7f6406bd7740) "
             "from PID 0; stack trace: ***", "Segmentation fault (core dumped)", *_GDB[3:]]
    assert engine_verdict(lines)[0].failure == "rank_segfault"
