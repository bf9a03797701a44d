"""Device out-of-memory as other accelerators and frameworks word it: torch_npu (Ascend NPU),
Intel XPU and Apple MPS builds of PyTorch, PaddlePaddle, MindSpore and TensorFlow 2's eager ops. Each is a rank out of
its device's memory, the same failure as a CUDA OOM (``cuda_oom``)."""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict


@pytest.mark.parametrize("line", [
    # https://github.com/xingchensong/TouchNet/issues/100 (torchrun, 4 NPUs)
    "RuntimeError: NPU out of memory. Tried to allocate 5.03 GiB (NPU 3; 60.96 GiB total capacity; 49.47 GiB "
    "already allocated; 49.47 GiB current active; 1.32 GiB free; 57.55 GiB reserved in total by PyTorch) If "
    "reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.",
    # https://github.com/vllm-project/vllm-ascend/issues/19 (quoted in a comment)
    "RuntimeError: NPU out of memory. Tried to allocate 22.00 MiB (NPU 0; 60.97 GiB total capacity; 10.24 GiB "
    "already allocated; 10.24 GiB current active; 19.52 MiB free; 10.65 GiB reserved in total by PyTorch) If "
    "reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.",
    # https://github.com/intel/intel-extension-for-pytorch/issues/629
    "RuntimeError: XPU out of memory. Tried to allocate 1.71 GiB (GPU 0; 15.56 GiB total capacity; 176.00 MiB "
    "already allocated; 176.00 MiB reserved in total by PyTorch)",
    # https://github.com/intel/torch-xpu-ops/issues/3011 (the torch >= 2.5 wording)
    "torch.OutOfMemoryError: XPU out of memory. Tried to allocate 4.66 GiB. GPU 0 has a total capacity of 5.65 GiB "
    "of which 5.65 GiB is free. Of the allocated memory 195.50 KiB is allocated by PyTorch, and 1.81 MiB is "
    "reserved by PyTorch but unallocated. Please use `empty_cache` to release all unoccupied cached memory.",
    # https://github.com/Comfy-Org/ComfyUI/issues/7372
    "MPS backend out of memory (MPS allocated: 17.68 GB, other allocations: 3.95 MB, max allowed: 18.13 GB). Tried "
    "to allocate 1024.00 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for "
    "memory allocations (may cause system failure).",
    # https://github.com/gensyn-ai/rl-swarm/issues/355
    "RuntimeError: MPS backend out of memory (MPS allocated: 12.74 GB, other allocations: 4.39 GB, max allowed: "
    "18.13 GB). Tried to allocate 1.02 GB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable "
    "upper limit for memory allocations (may cause system failure).",
    # https://github.com/PaddlePaddle/PaddleOCR/issues/645 (Paddle 1.8, no 'has been allocated' clause)
    "Out of memory error on GPU 0. Cannot allocate 3.125000GB memory on GPU 0, available memory is only 117.750000MB.",
    # https://github.com/PaddlePaddle/Paddle/issues/42228 (Paddle 2.x)
    "Out of memory error on GPU 0. Cannot allocate 98.000244MB memory on GPU 0, 6.000000GB memory has been "
    "allocated and available memory is only 0.000000B.",
    # https://github.com/PaddlePaddle/PaddleGAN/issues/587 (the reporter's inline code marks kept)
    "``Out of memory error on GPU 0. Cannot allocate 3.621826GB memory on GPU 0, 21.184814GB memory has been "
    "allocated and available memory is only 2.814575GB. Please check whether there is any other process using "
    "GPU 0. 1. If yes, please stop them, or start PaddlePaddle on another GPU. 2. If no, please decrease the "
    "batch size of your model.``",
    # https://github.com/candle-org/MindAct/issues/1761 (MindSpore on an Ascend NPU)
    "[ERROR] PRE_ACT(54175,fffdbcff91e0,python):2024-10-22-11:24:55.301.443 [mindspore/ccsrc/backend/common/"
    "mem_reuse/mem_dynamic_allocator.cc:392] AddMemBlockAndMemBufByEagerFree] TotalUsedMemStatistics : "
    "29356337664 plus TotalUsedByEventMemStatistics : 0 and plus alloc size : 301990400 is more than total mem "
    "size : 29464985600.",
    # TensorFlow 2's eager op naming its function and device first (a Flower simulation's server-side
    # evaluation, corpus holdout23 h23d-009)
    "tensorflow.python.framework.errors_impl.ResourceExhaustedError: {{function_node "
    "__wrapped__Mul_device_/job:localhost/replica:0/task:0/device:GPU:0}} failed to allocate memory [Op:Mul]",
])
def test_another_accelerators_oom_is_a_device_oom(line: str) -> None:
    found = engine_verdict([line])
    assert found and found[0].failure == "cuda_oom"


def test_mindspore_pool_exhaustion_outranks_the_traceback_that_follows() -> None:
    # https://github.com/mindspore-lab/mindone/issues/465: the pool's warning, the kernel's failed output
    # allocation, then the script's traceback; the OOM is the cause, not the exception
    lines = [
        "[WARNING] PRE_ACT(70996,7f8ce37fe700,python):2024-04-26-00:50:19.865.072 [mindspore/ccsrc/backend/common/"
        "mem_reuse/mem_dynamic_allocator.cc:303] CalMemBlockAllocSize] Memory not enough: current free memory "
        "size[0] is smaller than required size[29491200].",
        "[ERROR] DEVICE(70996,7f8ce37fe700,python):2024-04-26-00:50:19.865.578 [mindspore/ccsrc/runtime/pynative/"
        "run_op_helper.cc:383] MallocForKernelOutput] Allocate output memory failed, node:Default/Cast-op446",
        "Traceback (most recent call last):",
        '  File "/root/mindone/examples/stable_diffusion_v2/train_text_to_image.py", line 463, in <module>',
        "    main(args)",
        "RuntimeError: Allocate output memory failed",
    ]
    found = engine_verdict(lines)
    assert found and found[0].failure == "cuda_oom"


def test_a_host_allocator_failure_is_not_a_device_oom() -> None:
    # https://github.com/xinntao/Real-ESRGAN/issues/298: PyTorch's CPU allocator, host RAM
    line = ("Error [enforce fail at C:\\actions-runner\\_work\\pytorch\\pytorch\\builder\\windows\\pytorch\\c10\\core"
            "\\impl\\alloc_cpu.cpp:81] data. DefaultCPUAllocator: not enough memory: you tried to allocate 1069551616 bytes.")
    assert all(i.failure != "cuda_oom" for i in engine_verdict([line]))
