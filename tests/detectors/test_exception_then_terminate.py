"""An exception whose process then dies in std::terminate ("terminate called without an active
exception", then the framework's SIGABRT report) failed with that exception: the terminate line is
the process dying of it, not the rest of its message (the line that explains a bare exception).
The lines are PaddlePaddle's DataParallel raising on unused outputs in a 2-GPU job's
``log/workerlog.1`` (corpus holdout26 h26a-014, PaddlePaddle/PaddleSeg's RITM training)."""

from __future__ import annotations

from tests.helpers import engine_verdict

_PADDLE = [
    "I0418 20:23:44.619268 40170 nccl_context.cc:189] init nccl context nranks: 2 local rank: 1 gpu id: 1 ring id: 0",
    "Traceback (most recent call last):",
    '  File "ritm_train.py", line 283, in batch_forward',
    "    prev_output = model(net_input, points)['instances']",
    '  File "/opt/conda/lib/python3.7/site-packages/paddle/fluid/dygraph/parallel.py", line 492, in forward',
    "    list(self._find_varbase(outputs)))",
    "RuntimeError: (PreconditionNotMet) Please note that all ``forward`` outputs derived from the module parameters "
    "must participate in the calculation of losses and subsequent gradient calculations.",
    "  [Hint: Expected all_group_ready_ == false, but received all_group_ready_:1 != false:0.] "
    "(at /paddle/paddle/fluid/imperative/reducer.cc:312)",
    "",
    "terminate called without an active exception",
    "",
    "--------------------------------------",
    "C++ Traceback (most recent call last):",
    "--------------------------------------",
    "0   paddle::framework::SignalHandle(char const*, int)",
    "----------------------",
    "Error Message Summary:",
    "----------------------",
    "FatalError: `Process abort signal` is detected by the operating system.",
    "  [SignalInfo: *** SIGABRT (@0x3f600009cea) received by PID 40170 (TID 0x7f847d235700) from PID 40170 ***]",
]


def test_the_exception_is_the_cause_and_the_terminate_line_its_consequence() -> None:
    verdict = engine_verdict(_PADDLE, path="log/workerlog.1")
    assert verdict and verdict[0].failure == "rank_exception" and verdict[0].severity == "critical", verdict
    assert "PreconditionNotMet" in verdict[0].evidence[0].text
