"""Lines printed after a run finished, and exception names with a leading underscore.

- MLPerf's logging library closes a run that reached its target with ``run_stop`` and
  ``"status": "success"`` (mlcommons/logging): the framework's own end of training. NCCL WARNs that
  all come after it are the communicators' teardown on the way out (corpus holdout28 h28b-011: 512
  ranks' proxies, ``Failed to execute operation Close from rank N``).
- A traceback whose outermost frame is multiprocessing's ``_run_finalizers`` (or atexit's) was
  printed by a clean-up at interpreter exit, which goes on exiting (h28b-009: ``sem_unlink`` →
  ``FileNotFoundError`` after an MLPerf SSD run's success).
- ``torch._C._LinAlgError`` (``torch.linalg`` failures) is an exception type: its short name starts
  with an underscore (h28b-006).
"""

from __future__ import annotations

from detectors.model import EventKind
from tests.helpers import engine_events, engine_verdict

_RUN_STOP = (':::MLLOG {"namespace": "", "time_ms": 1728624600438, "event_type": "INTERVAL_END", "key": "run_stop", '
             '"value": 0.924, "metadata": {"file": "/workspace/ft-llm/custom_callbacks.py", "lineno": 321, '
             '"samples_count": 9600, "status": "success"}}')
_WARNS = [f"  1: GPU-94:3057067:3059504 [1] proxy.cc:1521 NCCL WARN [Proxy Service 1] Failed to execute operation Close "
          f"from rank {r}, retcode 3" for r in (1, 3, 5)]
_FINALIZER = [
    "Traceback (most recent call last):",
    '  File "/usr/lib/python3.10/multiprocessing/util.py", line 300, in _run_finalizers',
    "    finalizer()",
    '  File "/usr/lib/python3.10/multiprocessing/util.py", line 224, in __call__',
    "    res = self._callback(*self._args, **self._kwargs)",
    '  File "/usr/lib/python3.10/multiprocessing/synchronize.py", line 87, in _cleanup',
    "    sem_unlink(name)",
    "FileNotFoundError: [Errno 2] No such file or directory",
]


def _alerts(lines: list[str]) -> list[tuple[str, str]]:
    return [(i.failure, i.severity) for i in engine_verdict(lines) if i.severity in ("warning", "critical")]


def test_nccl_warns_after_a_successful_run_stop_are_its_teardown() -> None:
    assert _alerts(["  0: " + _RUN_STOP, *_WARNS]) == []
    # (before it too: the run went on to its end, as after any framework's end-of-training line)
    assert _alerts([*_WARNS, "  0: " + _RUN_STOP]) == []
    # a run that stopped without reaching its target did not end well: they stay an error
    assert _alerts(["  0: " + _RUN_STOP.replace('"success"', '"aborted"'), *_WARNS])[:1] == [("nccl_error", "critical")]


def test_an_exception_in_an_exit_finalizer_ends_nothing() -> None:
    assert _alerts(_FINALIZER) == []
    # the same exception raised from the program's own code is a crash
    own = [_FINALIZER[0], '  File "train.py", line 12, in <module>', "    os.remove(path)", _FINALIZER[-1]]
    assert _alerts(own)[:1] == [("rank_exception", "critical")]


def test_an_exception_type_may_start_with_an_underscore() -> None:
    line = ("[rank0]: torch._C._LinAlgError: linalg.cholesky: The factorization could not be completed because the "
            "input is not positive-definite (the leading minor of order 155 is not positive-definite).")
    [ev] = [e for e in engine_events([line]) if e.kind is EventKind.MATCH]
    assert ev.data["exc_type"] == "torch._C._LinAlgError" and ev.failure == "rank_exception"
