"""Older CUDA error wordings: the driver API's bare codes (older TensorFlow builds print
``CUDA_ERROR_LAUNCH_FAILED`` without its message), a kernel fault like the runtime API's
``unspecified launch failure``; PyTorch < 1.5's ``cuda runtime error (2) : out of memory``, an OOM.
Every line is a real one."""

from __future__ import annotations

import pytest

from detectors.model import EventKind
from detectors.parse import default_parser
from detectors.parsers.base import FileState


def _failures(line: str) -> list[str | None]:
    events = default_parser().parse_line(line, 1, FileState("x.log"))
    return [ev.failure for ev in events if ev.kind is EventKind.MATCH]


@pytest.mark.parametrize("line", [
    # from https://github.com/tensorflow/models/issues/5328 (corpus h6b-023)
    r"2018-09-18 15:21:34.702531: E T:\src\github\tensorflow\tensorflow\stream_executor\cuda\cuda_driver.cc:1108]"
    r" could not synchronize on CUDA context: CUDA_ERROR_LAUNCH_FAILED ::",
    # from https://github.com/tensorflow/models/issues/4227
    "2018-05-09 09:37:18.401486: E tensorflow/stream_executor/cuda/cuda_event.cc:49] Error polling for event status:"
    " failed to query event: CUDA_ERROR_LAUNCH_FAILED",
    # from https://github.com/openai/baselines/issues/621
    "2018-09-27 09:41:31.439167: E tensorflow/stream_executor/cuda/cuda_driver.cc:1078] failed to synchronize the stop"
    " event: CUDA_ERROR_LAUNCH_FAILED",
    # the newer wording with the message (corpus crash-027)
    "2019-02-19 13:19:11.936586: E tensorflow/stream_executor/cuda/cuda_driver.cc:1011] could not synchronize on CUDA"
    " context: CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure ::",
])
def test_bare_launch_failed_code_is_a_kernel_fault(line: str) -> None:
    assert _failures(line) == ["cuda_illegal_memory_access"]


def test_other_driver_codes_are_not_launch_failures() -> None:
    # end-of-run teardown (tensorflow/tensorflow#8483): no kernel fault
    line = ("E tensorflow/stream_executor/cuda/cuda_event.cc:49] Error polling for event status: failed to query event:"
            " CUDA_ERROR_DEINITIALIZED")
    assert "cuda_illegal_memory_access" not in _failures(line)


@pytest.mark.parametrize("line", [
    # from https://github.com/MVIG-SJTU/AlphaPose/issues/154 (corpus h6a-044)
    "RuntimeError: cuda runtime error (2) : out of memory at /opt/conda/conda-bld/pytorch_1524584710464/work/aten/src/THC/"
    "generic/THCStorage.cu:58",
    # from https://github.com/rowanz/neural-motifs/issues/58
    "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/THCTensorRandom.cu:25",
    # from https://github.com/chenyuntc/pytorch-best-practice/issues/3 (no spaces)
    "RuntimeError:cuda runtime error(2):out of memory",
])
def test_legacy_thc_error_2_is_an_oom(line: str) -> None:
    assert _failures(line) == ["cuda_oom"]


def test_other_legacy_runtime_errors_are_not_ooms() -> None:
    # error 4 is a launch failure (pytorch/pytorch#2567)
    line = "RuntimeError: cuda runtime error (4) : unspecified launch failure at /home/ubuntu/pytorch/torch/lib/THC/THCTensorCopy.cu:85"
    assert _failures(line) == ["cuda_illegal_memory_access"]
