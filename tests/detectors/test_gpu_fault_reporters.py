"""A GPU hardware fault reported by something other than the kernel's ``NVRM: Xid`` line: the
NVIDIA driver's own NV_ERR_GPU_IS_LOST status, NVML clients (pynvml, the Kubernetes device
plugin's health check), and AMD's amdgpu RAS / Accelerator Check Architecture lines."""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict


@pytest.mark.parametrize(("line", "failure"), [
    # https://github.com/NVIDIA/open-gpu-kernel-modules/issues/688 (GSP driver on a DGX Station, no Xid line)
    ("Feb 17 08:00:34 abggdna-DGX-Station-A100 kernel: NVRM: nvAssertOkFailedNoLog: Assertion failed: GPU lost "
     "from the bus [NV_ERR_GPU_IS_LOST] (0x0000000F) returned from rmStatus @ kernel_ce_gv100.c:106",
     "gpu_fallen_off_bus"),
    # https://github.com/openwall/john/issues/5835 (the 'Check failed' wording of newer drivers)
    ("[   35.564062] NVRM: nvCheckOkFailedNoLog: Check failed: GPU lost from the bus [NV_ERR_GPU_IS_LOST] "
     "(0x0000000F) returned from nvdEngineDumpCallbackHelper(pGpu, pPrbEnc, pNvDumpState, pEngineCallback) @ "
     "nv_debug_dump.c:274", "gpu_fallen_off_bus"),
    # https://github.com/rossumai/nvgpu/issues/6 (pynvml)
    ("NVMLError_GpuIsLost: GPU is lost", "gpu_fallen_off_bus"),
    # https://github.com/NVIDIA/k8s-device-plugin/issues/189 (Go log, plugin <= 0.7)
    ("2020/08/10 19:09:42 XidCriticalError: Xid=69 on Device=GPU-7540a9b3-eeb9-1214-1526-f93c9ea826a8, the device "
     "will go unhealthy.", "gpu_xid"),
    # https://github.com/akash-network/support/issues/244 (klog, newer plugin, container runtime timestamp)
    ("2024-08-09T13:32:51.874590633Z I0809 13:32:51.873784       1 health.go:185] XidCriticalError: Xid=94 on "
     "Device=GPU-3b6ec030-5adc-1847-e155-79f635584b4e; marking device as unhealthy.", "gpu_xid"),
    # https://github.com/ROCm/legacy-rocm-build/issues/1386 (MI50)
    ("[ 1358.996458] amdgpu 0000:83:00.0: uncorrectable hardware error(ERREVENT_ATHUB_INTERRUPT) detected!",
     "gpu_xid"),
    # https://github.com/ROCm/legacy-rocm-build/issues/1886 (MI50, dmesg -T)
    ("[Sat Jan  7 14:25:56 2023] amdgpu 0000:e3:00.0: amdgpu: uncorrectable hardware error(ERREVENT_ATHUB_INTERRUPT) "
     "detected!", "gpu_xid"),
    # https://github.com/ROCm/legacy-rocm-build/issues/4021 (MI300X, a second reporter)
    ("[13850.912648] amdgpu 0000:1c:00.0: {1}uncorrectable hardware error(ERREVENT_ATHUB_INTERRUPT) detected!",
     "gpu_xid"),
    ("[13850.935971] amdgpu 0000:55:00.0: {1}[Hardware Error]: Accelerator Check Architecture events logged",
     "gpu_xid"),
])
def test_a_gpu_fault_reported_outside_the_xid_line_is_a_hardware_fault(line: str, failure: str) -> None:
    found = engine_verdict([line])
    assert found and found[0].failure == failure and found[0].hardware


def test_a_corrected_platform_error_is_not_a_gpu_fault() -> None:
    # https://github.com/ROCm/legacy-rocm-build/issues/2927: APEI reports a PCIe error the hardware corrected
    lines = [
        "kernel: [ 2484.374025] {359}[Hardware Error]: Hardware error from APEI Generic Hardware Error Source: 512",
        "kernel: [ 2484.374028] {359}[Hardware Error]: It has been corrected by h/w and requires no further action",
        "kernel: [ 2484.374029] {359}[Hardware Error]: event severity: corrected",
        "kernel: [ 2484.374031] {359}[Hardware Error]:   section_type: PCIe error",
    ]
    assert not [i for i in engine_verdict(lines) if i.hardware]


def test_a_device_fault_a_spawned_worker_raised_is_that_workers() -> None:
    """torch.multiprocessing.spawn names the failed process above the traceback it re-raises
    (a 4-process job, corpus holdout18 g18-070): the device fault is that process's."""
    lines = [
        "step   80 | epoch 0 | loss 0.8046",
        "W1206 03:44:33.858000 8994 torch/multiprocessing/spawn.py:165] Terminating process 8996 via signal SIGTERM",
        "W1206 03:44:33.859000 8994 torch/multiprocessing/spawn.py:165] Terminating process 8997 via signal SIGTERM",
        "W1206 03:44:33.859000 8994 torch/multiprocessing/spawn.py:165] Terminating process 8998 via signal SIGTERM",
        "Traceback (most recent call last):",
        '  File "/opt/venv/lib/python3.11/site-packages/torch/multiprocessing/spawn.py", line 211, in join',
        "    raise ProcessRaisedException(msg, error_index, failed_process.pid)",
        "torch.multiprocessing.spawn.ProcessRaisedException: ",
        "",
        "-- Process 3 terminated with the following error:",
        "Traceback (most recent call last):",
        '  File "/home/user/job/train.py", line 20, in worker',
        "    x = p2p_copy(x, rank, step)",
        "torch.AcceleratorError: CUDA error: uncorrectable NVLink error detected during the execution",
    ]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("gpu_xid", 3)
