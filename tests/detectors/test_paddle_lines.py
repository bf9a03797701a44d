"""PaddlePaddle's own words: an NCCL failure is an ``OSError: (External) ... Nccl error`` (or ``NCCL
error(N)``), and its signal handler reports SIGABRT/SIGSEGV as ``FatalError: `<signal>` is detected
by the operating system.`` The abort after an error is that error's teardown; a segfault is one."""

from __future__ import annotations

from detectors.diagnosis import build_report
from tests.helpers import fed_state


def _top(lines: list[str]) -> str:
    return build_report(fed_state(lines, "workerlog.0"))["incidents"][0]["failure"]


def test_paddle_2_0_nccl_error() -> None:
    # https://github.com/PaddlePaddle/PaddleDetection/issues/4139 (8 GPUs, Paddle 2.x)
    assert _top(["OSError: (External)  Nccl error, unhandled cuda error  (at /paddle/paddle/fluid/platform/collective_helper.cc:100)"]) == "nccl_error"


def test_paddle_2_4_nccl_error_then_the_abort() -> None:
    # https://github.com/PaddlePaddle/PaddleDetection/issues/7380 (its barrier's error); the handler's
    # abort line below it is the form Paddle prints on SIGABRT (as in PaddlePaddle/PaddleSeg#939)
    lines = ['  File "/usr/local/lib/python3.8/dist-packages/paddle/distributed/collective.py", line 328, in barrier',
             "    task = group.process_group.barrier()",
             "OSError: (External) NCCL error(2), unhandled system error.",
             "  [Hint: Please search for the error code(2) on website (https://docs.nvidia.com/deeplearning/nccl/user-guide/"
             "docs/api/types.html#ncclresult-t) to get Nvidia's official solution and advice about NCCL Error.] (at "
             "/paddle/paddle/fluid/distributed/collective/ProcessGroupNCCL.cc:236)",
             "terminate called without an active exception",
             "FatalError: `Process abort signal` is detected by the operating system."]
    assert _top(lines) == "nccl_error"


def test_paddle_segfault() -> None:
    # a PaddleOCR deployment's log quoted in its notes: a library not found, then the handler's line
    lines = ["W1111 17:02:31.435693    46 dynamic_loader.cc:314] The third-party dynamic library (libcudnn.so) that Paddle "
             "depends on is not configured correctly.",
             "FatalError: `Segmentation fault` is detected by the operating system."]
    assert _top(lines) == "rank_segfault"
