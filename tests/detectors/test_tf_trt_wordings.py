"""TensorFlow/XLA's BFC allocator and TensorRT report a device OOM in their own words, and
TensorFlow's kernel registry refuses bf16 in its own; the BFC allocator's "not a failure" note
is no OOM. Real lines from the threads named in each test."""

from __future__ import annotations

from detectors.diagnosis import build_report
from tests.helpers import fed_state


def _incidents(lines: list[str]) -> list[dict]:
    return build_report(fed_state(lines, "train.log"))["incidents"]


def test_the_bfc_allocator_failing_a_request_is_an_oom() -> None:
    # https://github.com/tensorflow/tensorflow/issues/47820 (Jetson Nano, TF 2.4)
    lines = ["2021-03-15 17:16:57.309165: W tensorflow/core/common_runtime/bfc_allocator.cc:433] Allocator (GPU_0_bfc) "
             "ran out of memory trying to allocate 18.00MiB (rounded to 18874368)requested by op Mul",
             "If the cause is memory fragmentation maybe the environment variable 'TF_GPU_ALLOCATOR=cuda_malloc_async' "
             "will improve the situation. ",
             "Current allocation summary follows.",
             "Current allocation summary follows.",
             "2021-03-15 17:16:57.311009: I tensorflow/core/common_runtime/bfc_allocator.cc:975] BFCAllocator dump for GPU_0_bfc"]
    assert _incidents(lines)[0]["failure"] == "cuda_oom"


def test_the_bfc_allocator_s_performance_note_is_not_an_oom() -> None:
    # https://github.com/ika-rwth-aachen/Point-Cloud-Compression/issues/2: the warning TF prints when a
    # caller that can do without the memory (cuDNN autotuning) asks for too much
    lines = ["2023-11-06 13:58:30.645317: W tensorflow/core/common_runtime/bfc_allocator.cc:271] Allocator (GPU_0_bfc) ran "
             "out of memory trying to allocate 2.16GiB with freed_by_count=0. The caller indicates that this is not a "
             "failure, but may mean that there could be performance gains if more memory were available.",
             "2023-11-06 13:58:30.661954: W tensorflow/core/common_runtime/bfc_allocator.cc:271] Allocator (GPU_0_bfc) ran "
             "out of memory trying to allocate 52.01MiB with freed_by_count=0. The caller indicates that this is not a "
             "failure, but may mean that there could be performance gains if more memory were available."]
    assert not [i for i in _incidents(lines) if i["failure"] == "cuda_oom"]


def test_tensorrt_out_of_memory() -> None:
    # https://github.com/NVIDIA/TensorRT/issues/4258 (trtexec, TRT 10.3)
    lines = ["[11/22/2024-13:40:08] [I] [TRT] Local timing cache in use. Profiling results in this builder pass will not be stored.",
             "[11/22/2024-13:40:47] [E] Error[1]: [defaultAllocator.cpp::allocate::31] Error Code 1: Cuda Runtime (out of memory)",
             "[11/22/2024-13:40:47] [W] [TRT] Requested amount of GPU memory (15485030400 bytes) could not be allocated. There "
             "may not be enough free memory for allocation to succeed."]
    assert _incidents(lines)[0]["failure"] == "cuda_oom"
    # TensorRT 7's wording (https://github.com/linghu8812/tensorrt_inference/issues/117)
    old = ["[08/03/2022-23:18:05] [E] [TRT] ../rtSafe/safeRuntime.cpp (25) - Cuda Error in allocate: 2 (out of memory)"]
    assert _incidents(old)[0]["failure"] == "cuda_oom"


def test_tensorflow_without_a_bf16_kernel() -> None:
    # https://github.com/tensorflow/tensorflow/issues/50282 (mixed_bfloat16, an LSTM's orthogonal initializer)
    lines = ["InvalidArgumentError: Value for attr 'T' of bfloat16 is not in the list of allowed values: double, float, "
             "half, complex64, complex128",
             "\t; NodeDef: {{node Qr}}; Op<name=Qr; signature=input:T -> q:T, r:T; attr=full_matrices:bool,default=false; "
             "attr=T:type,allowed=[DT_DOUBLE, DT_FLOAT, DT_HALF, DT_COMPLEX64, DT_COMPLEX128]> [Op:Qr]"]
    assert _incidents(lines)[0]["failure"] == "bf16_unsupported_gpu"
