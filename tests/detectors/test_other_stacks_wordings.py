"""Crash, fault and communication wordings of stacks other than PyTorch-on-CUDA, each read as
the failure it is, and the near-miss wordings that are something else. Real lines from the
sources named (users' logs and notes found with the code search)."""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict

_CASES = [
    # ROCm's GPU page fault, with the agent handle (ROCm/pytorch#797) and without it: older runtimes
    # (ROCm 1.7, an OpenCL kernel on an RX 470, https://github.com/ROCm/ROCm/issues/383), an unset address
    ("Memory access fault by GPU node-2 (Agent handle: 0x56468ab3bb50) on address 0x7fe55fb03000. "
     "Reason: Page not present or supervisor privilege.", "cuda_illegal_memory_access"),
    ("Memory access fault by GPU node-1 on address 0x901b09000. Reason: Page not present or supervisor privilege.",
     "cuda_illegal_memory_access"),
    ("Memory access fault by GPU node-1 on address (nil). Reason: Page not present or supervisor privilege.",
     "cuda_illegal_memory_access"),
    # ROCm's HSA runtime aborting a queue (a user's RDNA1 notes; a custom all-reduce on ROCm 6.3.3)
    (":0:rocdevice.cpp            :2875: 1219582337 us: [pid:31497 tid:0x7f5b8effd640] Callback: Queue "
     "0x7f5a84200000 aborting with error : HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to "
     "access memory beyond the largest legal address. code: 0x29", "cuda_illegal_memory_access"),
    # gloo's mesh never formed (vLLM on Ray across nodes; a two-node H100 run's notes)
    ("(RayWorkerWrapper pid=1890, ip=10.41.0.8) [rank8]:[E ProcessGroupGloo.cpp:144] Gloo connectFullMesh failed "
     "with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error", "nccl_error"),
    ("[E ProcessGroupGloo.cpp:138] Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] "
     "no error", "nccl_error"),
    # the same words after a peer died 30 minutes earlier: the peer went away, not this failure
    ("[E ProcessGroupGloo.cpp:138] Gloo connectFullMesh failed with Connection reset by peer", "peer_connection_lost"),
    # the shell's SIGBUS, SIGFPE and SIGILL reports
    ("Bus error (core dumped)", "rank_segfault"),
    ("Floating point exception (core dumped)", "rank_segfault"),
    ("Illegal instruction (core dumped)", "rank_segfault"),
    # exception classes whose name ends in a capital before "Error" are exceptions too
    ("OSError: [Errno 28] No space left on device", "rank_exception"),
    ("EOFError: Ran out of input", "rank_exception"),
    # the OOM exception with its message cut
    ("torch.cuda.OutOfMemoryError: CUDA out of memory.", "cuda_oom"),
    # Intel Gaudi's device memory (HabanaAI/vllm-fork README)
    ("RuntimeError: [Rank:0] FATAL ERROR :: MODULE:PT_DEVMEM Allocation failed for size::939524096 (896)MB", "cuda_oom"),
    # Intel XPU through Level Zero (a SYCL program's memcpy)
    ("strata/sycl: memcpy failed: level_zero backend failed with error: 39 (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)",
     "cuda_oom"),
    # PyTorch's allocator against a per-process memory fraction (ComfyUI)
    ("torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)", "cuda_oom"),
    # MXNet (efficientdet-mxnet)
    ("MXNetError: cudaMalloc retry failed: out of memory", "cuda_oom"),
    # CuPy
    ("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,610,612,736 bytes", "cuda_oom"),
]


@pytest.mark.parametrize(("line", "failure"), _CASES)
def test_wording_reads_as_its_failure(line: str, failure: str) -> None:
    assert [i.failure for i in engine_verdict([line])][:1] == [failure]


def test_prose_about_a_fault_is_not_one() -> None:
    assert engine_verdict(["the run hit a Memory access fault by GPU node-1 earlier, see above"]) == []
