"""A traceback under Python's ``Exception ignored in: ...`` header (``sys.unraisablehook``: an
exception in a finaliser, ``__del__`` or an atexit callback) is printed and then the interpreter
goes on: it is no crash of the rank.

Real shapes: the DataLoader iterator's ``__del__`` at shutdown (pytorch/pytorch#48709:
``AssertionError: can only test a child process``), math_verify's timeout handler firing inside
a finaliser during GRPO training (huggingface/open-r1), tqdm's ``__del__``.
"""

from __future__ import annotations

from tests.helpers import engine_verdict

_DATALOADER_DEL = [
    "Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f7c4a1b5e50>",
    "Traceback (most recent call last):",
    '  File "/opt/conda/lib/python3.8/site-packages/torch/utils/data/dataloader.py", line 1328, in __del__',
    "    self._shutdown_workers()",
    '  File "/opt/conda/lib/python3.8/multiprocessing/process.py", line 160, in is_alive',
    "    assert self._parent_pid == os.getpid(), 'can only test a child process'",
    "AssertionError: can only test a child process",
]
_MATH_VERIFY = [
    "Exception ignored in: <finalize object at 0x7f7d7b9bc920; dead>",
    "Traceback (most recent call last):",
    '  File "/root/miniconda3/envs/open-r1/lib/python3.12/weakref.py", line 585, in __call__',
    "    def __call__(self, _=None):",
    "",
    '  File "/root/miniconda3/envs/open-r1/lib/python3.12/site-packages/math_verify/utils.py", line 43, in handler',
    '    raise TimeoutError("Operation timed out!")',
    "TimeoutError: Operation timed out!",
]
_TRAINING = [f"step {s} | loss {2.3 - 0.01 * s:.4f} | grad_norm 0.41" for s in range(1, 21)]


def test_an_ignored_exception_is_no_crash() -> None:
    for block in (_DATALOADER_DEL, _MATH_VERIFY):
        assert not [i for i in engine_verdict([*_TRAINING[:10], *block, *_TRAINING[10:]]) if i.severity == "critical"]


def test_the_same_traceback_without_the_header_is_a_crash() -> None:
    assert [i.failure for i in engine_verdict([*_TRAINING[:10], *_MATH_VERIFY[1:]])][:1] == ["rank_exception"]


def test_a_crash_after_an_ignored_exception_is_still_a_crash() -> None:
    crash = ["Traceback (most recent call last):", '  File "train.py", line 88, in <module>',
             "KeyError: 'input_ids'"]
    assert [i.failure for i in engine_verdict([*_TRAINING[:10], *_DATALOADER_DEL, *_TRAINING[10:12], *crash])][:1] \
        == ["rank_exception"]


def test_a_header_far_above_does_not_hide_a_later_crash() -> None:
    lines = [_DATALOADER_DEL[0], *(_TRAINING * 5), "ValueError: corrupt sample in shard 3"]
    assert [i.failure for i in engine_verdict(lines)][:1] == ["rank_exception"]


def test_the_last_ignored_exception_of_a_finished_run_leaves_no_unfinished_traceback() -> None:
    """Three ranks' ``__del__`` raising at exit after ``final model saved`` (corpus holdout33
    g33f-016, healthy): the last one's traceback ends the file, and Python went on from it; it is
    no traceback cut before its exception line."""
    lines = ["2026-12-08 03:49:19,514 INFO rank0 train.py:34] training done",
             "2026-12-08 03:49:19,522 INFO rank0 train.py:43] final model saved"]
    for addr in ("0x7fb8a06858a0", "0x7face7b818a0", "0x7f6fb4c918a0"):
        lines += [f"Exception ignored in: <function AsyncMetricWriter.__del__ at {addr}>",
                  "Traceback (most recent call last):", '  File "/work/proj/train.py", line 14, in __del__',
                  '    self.f.write("flush\\n")', "ValueError: I/O operation on closed file"]
    assert [i for i in engine_verdict(lines) if i.severity in ("warning", "critical")] == []
