"""ROCm's HIP runtime reports a failed allocation as ``hipErrorOutOfMemory`` (TensorFlow-ROCm's
stream executor spells it ``HIP_ERROR_OutOfMemory``; PyTorch-ROCm says ``HIP error: out of
memory``). Real pastes: keras-team/keras#13889 (TF 2.12, ROCm 5.6), ROCm/hip#2132 (a HIP
program's own check), vladmandic/sdnext#4801 (PyTorch-ROCm's hint line)."""

from __future__ import annotations

from tests.helpers import engine_verdict

_TF_ROCM = [
    "cdipietrantonio@nid002070:/scratch/pawsey0001/cdipietrantonio/models> python3 01_horovod_mnist.py",
    "2023-11-01 16:19:17.812101: E tensorflow/compiler/xla/stream_executor/rocm/rocm_driver.cc:606] failed to allocate"
    " 127.99TiB (140729850295296 bytes) from device: HIP_ERROR_OutOfMemory",
    "2023-11-01 16:19:17.812133: E tensorflow/compiler/xla/stream_executor/rocm/rocm_driver.cc:606] failed to allocate"
    " 115.19TiB (126656857505792 bytes) from device: HIP_ERROR_OutOfMemory",
]
_HIP_CHECK = ["error: 'hipErrorOutOfMemory'(2) at square.cpp:76"]
_TORCH_ROCM = [
    "Traceback (most recent call last):",
    '  File "train.py", line 40, in <module>',
    "    out = model(x)",
    "torch.AcceleratorError: HIP error: out of memory",
    "Search for `hipErrorOutOfMemory' in https://rocm.docs.amd.com/projects/HIP/en/latest/index.html for more information.",
    "HIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
    "For debugging consider passing AMD_SERIALIZE_KERNEL=3",
]


def test_hip_out_of_memory_is_a_device_oom() -> None:
    for lines in (_TF_ROCM, _HIP_CHECK, _TORCH_ROCM):
        assert [i.failure for i in engine_verdict(lines)][:1] == ["cuda_oom"], lines[0]


def test_another_hip_error_is_not_an_oom() -> None:
    lines = ["Traceback (most recent call last):", '  File "train.py", line 40, in <module>',
             "RuntimeError: HIP error: no kernel image is available for execution on the device"]
    assert all(i.failure != "cuda_oom" for i in engine_verdict(lines))
