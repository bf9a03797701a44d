"""libstdc++'s ``terminate called without an active exception`` (a std::thread destroyed while
joinable, a bare rethrow) and ``terminate called recursively`` abort the process (SIGABRT). On
their own they are that process's crash (facebookresearch/Detectron#815: NUM_GPUS above the GPUs
there are; NKI-AI/direct#238: multi-GPU runs ending); below an error they follow from, that error
is the cause (PaddleSeg's NCCL error, corpus h13b-016)."""

from __future__ import annotations

from tests.helpers import engine_verdict

_DETECTRON = [
    "WARNING memonger.py:  55: NOTE: Executing memonger to optimize gradient memory",
    "[I memonger.cc:236] Remapping 59 using 9 shared blobs.",
    "INFO memonger.py:  97: Memonger memory optimization took 0.0228309631348 secs",
    "terminate called without an active exception",
    "Aborted",
]


def test_terminate_alone_is_a_native_abort() -> None:
    assert [i.failure for i in engine_verdict(_DETECTRON)][:1] == ["native_abort"]
    assert [i.failure for i in engine_verdict(["terminate called recursively", "Aborted (core dumped)"])][:1] == ["native_abort"]


def test_an_error_above_it_is_the_cause() -> None:
    lines = [
        "OSError: (External)  Nccl error, invalid data type, detail: Resource temporarily unavailable",
        "  (at /paddle/paddle/fluid/operators/collective/broadcast_op.cu.cc:65)",
        "terminate called without an active exception",
    ]
    assert [i.failure for i in engine_verdict(lines)][:1] == ["nccl_error"]
