"""The NCCL library that cannot be loaded is an NCCL error (``nccl_error``), the rank that said so
its initiator; a framework's warning that it goes on without NCCL is nothing.

Lines as users pasted them: PyTorch's import (pinokiocomputer/pinokio#193), mxnet's ctypes load
(YimianDai/open-alcnet#13), a linked binary (NVIDIA/nccl#96), PaddlePaddle's dynamic loader in
``dist.init_parallel_env()`` (corpus holdout26 h26a-007/016); TensorFlow's dso_loader warning
and caffe2's CPU-mode debug message are the benign forms.
"""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict

_TORCH = ["Traceback (most recent call last):",
          '  File "/home/usr/app/env/lib/python3.10/site-packages/torch/__init__.py", line 290, in <module>',
          "    from torch._C import *  # noqa: F403",
          "ImportError: libnccl.so.2: cannot open shared object file: No such file or directory"]
_MXNET = ["OSError: libnccl.so.2: cannot open shared object file: No such file or directory"]
_BINARY = ["./build/tools/caffe: error while loading shared libraries: libnccl.so.1: cannot open shared object file: "
           "No such file or directory"]
_PADDLE = ["I0617 16:07:55.770500 2871871 nccl_context.cc:74] init nccl context nranks: 2 local rank: 0 gpu id: 0 ring id: 0",
           "W0617 16:07:55.770917 2871871 dynamic_loader.cc:238] You may need to install 'nccl2' from NVIDIA official "
           "website: https://developer.nvidia.com/nccl/nccl-downloadbefore install PaddlePaddle.",
           "RuntimeError: (PreconditionNotMet) The third-party dynamic library (libnccl.so) that Paddle depends on is not "
           "configured correctly. (error code is libnccl.so: cannot open shared object file: No such file or directory)"]


@pytest.mark.parametrize("lines", [_TORCH, _MXNET, _BINARY, _PADDLE], ids=["torch-import", "mxnet", "binary", "paddle"])
def test_a_missing_nccl_library_is_an_nccl_error(lines: list[str]) -> None:
    verdict = engine_verdict(lines)
    assert verdict and verdict[0].failure == "nccl_error" and verdict[0].severity == "critical", verdict


@pytest.mark.parametrize("line", [
    "2021-03-02 10:00:00.123456: W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic "
    "library 'libnccl.so.2'; dlerror: libnccl.so.2: cannot open shared object file: No such file or directory",
    "WARNING:root:Debug message: libnccl.so.2: cannot open shared object file: No such file or directory",
], ids=["tensorflow-dso-loader", "caffe2-cpu-mode"])
def test_a_framework_going_on_without_nccl_is_nothing(line: str) -> None:
    lines = [line, *(f"Epoch 1/3 - step {i} - loss: {2.0 - i / 10:.2f}" for i in range(5))]
    assert not [i for i in engine_verdict(lines) if i.severity != "info"]


# a framework build with no NCCL at all: PyTorch's _new_process_group_helper on Windows
# (jaywalnut310/vits#202, verbatim frames) and PaddlePaddle's init_parallel_env on a Windows build
# (hyang1985/UIE-for-FundManager log/workerlog.0, corpus holdout29 h29a-013)
_TORCH_NO_NCCL = ["Traceback (most recent call last):",
                  '  File "E:\\\\train.py", line 62, in run',
                  "    dist.init_process_group(backend='nccl', init_method='env://', world_size=n_gpus, rank=rank)",
                  '  File "C:\\\\Python38\\\\lib\\\\site-packages\\\\torch\\\\distributed\\\\distributed_c10d.py", line 1268, in '
                  "_new_process_group_helper",
                  '    raise RuntimeError("Distributed package doesn\'t have NCCL built in")',
                  "RuntimeError: Distributed package doesn't have NCCL built in"]
_PADDLE_NO_NCCL = ["Traceback (most recent call last):",
                   '  File "C:\\\\Users\\\\u\\\\anaconda3\\\\lib\\\\site-packages\\\\paddle\\\\distributed\\\\parallel.py", line 300, '
                   "in init_parallel_env",
                   "    parallel_helper._init_parallel_ctx()",
                   "AttributeError: module 'paddle.fluid.core_avx' has no attribute 'NCCLParallelContext'"]


@pytest.mark.parametrize("lines", [_TORCH_NO_NCCL, _PADDLE_NO_NCCL], ids=["torch-windows", "paddle-windows"])
def test_a_build_without_nccl_is_an_nccl_error(lines: list[str]) -> None:
    verdict = engine_verdict(lines)
    assert verdict and verdict[0].failure == "nccl_error" and verdict[0].severity == "critical", verdict
