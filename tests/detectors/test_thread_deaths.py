"""A thread that died inside a rank: threading.excepthook's ``Exception in thread NAME:`` report.

The process lives on without the thread's work (a prefetch or data thread), so it never reaches
the next collective and its peers time out (a CPU torchrun job with ``--tee 3``, corpus holdout18
g18-039). That rank hung; the thread's exception says why. With nobody waiting on it, the
exception stays what it is.
"""

from __future__ import annotations

from tests.helpers import engine_verdict

_THREAD = [
    "[default1]:Exception in thread Thread-3 (prefetch_val):",
    "[default1]:Traceback (most recent call last):",
    '[default1]:  File "/usr/lib/python3.11/threading.py", line 1045, in _bootstrap_inner',
    "[default1]:    self.run()",
    '[default1]:  File "/home/user/job/train.py", line 13, in prefetch_val',
    '[default1]:    raise RuntimeError("val shard index corrupt")',
    "[default1]:RuntimeError: val shard index corrupt",
]
_TIMEOUTS = [
    f"[default{r}]:[rank{r}]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] "
    f"Timed out waiting 20000ms for recv operation to complete" for r in (0, 2)
]


def test_a_thread_that_died_before_its_peers_timed_out_left_its_rank_hung() -> None:
    top = engine_verdict(["[default0]:validation start", *_THREAD, *_TIMEOUTS])[0]
    assert (top.failure, top.rank) == ("rank_hang", 1)


def test_a_thread_exception_nobody_waited_on_stays_an_exception() -> None:
    top = engine_verdict(_THREAD)[0]
    assert top.failure == "rank_exception"


def test_another_ranks_traceback_below_the_header_is_no_thread_of_it() -> None:
    lines = [_THREAD[0], "[default2]:Traceback (most recent call last):", '[default2]:  File "train.py", line 3, in <module>',
             "[default2]:ValueError: bad config", *_TIMEOUTS[:1]]
    assert engine_verdict(lines)[0].failure != "rank_hang"
