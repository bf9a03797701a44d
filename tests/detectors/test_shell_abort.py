"""The shell's ``Aborted (core dumped)`` (bash, or ``line N: PID Aborted (core dumped) CMD`` from a
script) is a process that died of SIGABRT: alone, the only sign a process crashed; below the
error the process printed, only how it ended (pmsosa/CS291K#2, MarvinTeichmann/KittiBox#29)."""

from __future__ import annotations

from tests.helpers import engine_verdict

_STEPS = [f"Epoch 1 Step {s}: loss={2.1 - 0.02 * s:.3f}" for s in range(1, 12)]


def test_an_abort_alone_is_a_crash() -> None:
    for line in ("Aborted (core dumped)", "./train.sh: line 26:  6499 Aborted                 (core dumped) python train.py"):
        found = engine_verdict([*_STEPS, line])
        assert [(i.failure, i.severity) for i in found][:1] == [("launcher_teardown", "critical")]


def test_the_error_above_the_abort_is_the_cause() -> None:
    lines = [*_STEPS, "terminate called after throwing an instance of 'c10::Error'",
             "  what():  CUDA error: an illegal memory access was encountered", "Aborted (core dumped)"]
    assert [i.failure for i in engine_verdict(lines)][:1] == ["cuda_illegal_memory_access"]


def test_the_word_in_a_sentence_is_quiet() -> None:
    assert engine_verdict([*_STEPS, "INFO: retry policy: Aborted runs are rescheduled (core dumped files are kept)"]) == []


def test_glogs_fatal_handler_is_the_process_aborting() -> None:
    # PaddlePaddle/PaddleDetection#1509 (corpus holdout22 h22c-004): a CUDA kernel launch fails in
    # Paddle's C++ core, its F-level record, then glog's fatal handler aborts the process
    lines = [*_STEPS,
             "W0925 18:05:47.226415 29387 operator.cc:187] elementwise_add raises an exception "
             "thrust::system::system_error, parallel_for failed: invalid configuration argument",
             "F0925 18:05:47.226567 29387 exception_holder.h:37] std::exception caught, parallel_for failed: invalid "
             "configuration argument",
             "*** Check failure stack trace: ***"]
    found = engine_verdict(lines)
    assert [(i.failure, i.severity) for i in found][:1] == [("native_abort", "critical")]
