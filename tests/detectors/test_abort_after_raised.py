"""A native crash printed right below an error the process had just raised is its teardown.

DeepSpeed's ranks raise ``Current loss scale already at minimum`` and, exiting on it, one dies in
glibc (``double free or corruption (!prev)``) before the launcher kills the rest (corpus holdout28
h28a-007, a Megatron-DeepSpeed run). The raised error is the failure; the crash is collateral. A
glibc abort with no raised error just above it is still the crash (the rank_crash class: glibc
``free(): invalid pointer`` then SIGABRT).
"""

from __future__ import annotations

from tests.helpers import top_verdict

_RAISED = [
    "Traceback (most recent call last):",
    '  File "/home/u/.local/lib/python3.10/site-packages/deepspeed/runtime/zero/stage_1_and_2.py", line 2072, in _update_scale',
    "    self.loss_scaler.update_scale(has_overflow)",
    '  File "/home/u/.local/lib/python3.10/site-packages/deepspeed/runtime/fp16/loss_scaler.py", line 175, in update_scale',
    "    raise Exception(",
    "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.",
]
_ABORT = "double free or corruption (!prev)"
_LAUNCHER = ["[2024-02-18 17:19:23,849] [INFO] [launch.py:316:sigkill_handler] Killing subprocess 381103"]


def test_an_abort_right_below_a_raised_error_is_its_teardown() -> None:
    assert top_verdict([*_RAISED, _ABORT, *_LAUNCHER])[0] == "loss_scale_collapse"


def test_an_abort_with_no_raised_error_above_is_the_crash() -> None:
    assert top_verdict(["[rank1]: step 10 loss 2.31", _ABORT, *_LAUNCHER])[0] == "native_abort"
    # nor does an error raised far above (another moment of the run) explain it
    assert top_verdict(_RAISED + [f"step {s} loss 2.3" for s in range(10)] + [_ABORT])[0] == "native_abort"
