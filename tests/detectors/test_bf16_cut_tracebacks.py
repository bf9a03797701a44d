"""bf16 refused on a GPU that cannot do it, when the paste cuts the message off.

The class: a traceback that stops inside the check itself — vLLM's
``_check_if_gpu_supports_dtype`` frame, or a frame stopped on the line that creates a bf16
``autocast`` — names the failure even without the final ``... does not support bfloat16`` line.
"""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict

# corpus holdout6 h6a-039 (QAnything's docker-compose and FastChat prefixes, the message cut)
VLLM_CUT = [
    "qanything-container-local  | 2024-02-20 21:46:23 | ERROR | stderr |   File "
    '"/usr/local/lib/python3.10/dist-packages/vllm/worker/worker.py", line 71, in init_model',
    "qanything-container-local  | 2024-02-20 21:46:23 | ERROR | stderr |     "
    "_check_if_gpu_supports_dtype(self.model_config.dtype)",
    "qanything-container-local  | 2024-02-20 21:46:23 | ERROR | stderr |   File "
    '"/usr/local/lib/python3.10/dist-packages/vllm/worker/worker.py", line 231, in _check_if_gpu_supports_dtype',
]
# https://github.com/isi-nlp/rtg/issues/20, cut before the RuntimeError line
RTG_CUT = [
    "Traceback (most recent call last):",
    '  File "/usr/local/lib/python3.7/dist-packages/rtg/module/tfmnmt.py", line 787, in train',
    "    with autocast(enabled=dtorch.fp16, dtype=torch.bfloat16):",
    '  File "/usr/local/lib/python3.7/dist-packages/torch/cuda/amp/autocast_mode.py", line 25, in __init__',
]
# https://github.com/pytorch/pytorch/issues/115900, cut the same way
TORCH_CUT = [
    "Traceback (most recent call last):",
    '  File "examples/autocast.py", line 5, in <module>',
    '    with autocast("cuda", dtype=torch.bfloat16):',
    '  File "torch/amp/autocast_mode.py", line 306, in __init__',
    "    raise RuntimeError(",
]
# https://github.com/tianweiy/DMD2/issues/14 (corpus holdout6 h6b-016): two processes interleaved
DMD2_CUT = [
    "Traceback (most recent call last):",
    "Traceback (most recent call last):",
    '  File "/home/nas01/panjiahao1/DMD2-main/main/sd_guidance.py", line 143, in __init__',
    "Traceback (most recent call last):",
    '    self.network_context_manager = torch.autocast(device_type="cuda", dtype=torch.bfloat16) '
    "if self.use_fp16 else NoOpContext()",
    '  File "/home/work/miniconda3/envs/dmd2/lib/python3.10/site-packages/torch/amp/autocast_mode.py", '
    "line 234, in __init__",
]




def test_a_traceback_cut_in_the_bf16_check_is_bf16_unsupported() -> None:
    for lines in (VLLM_CUT, RTG_CUT, TORCH_CUT, DMD2_CUT):
        top = engine_verdict(lines)[0]
        assert top.failure == "bf16_unsupported_gpu", lines
        assert top.rank is None


def test_a_tensor_repr_in_bf16_is_not_an_autocast() -> None:
    # corpus num-024: a bf16 tensor printed in a message
    lines = ["Traceback (most recent call last):",
             '  File "train.py", line 9, in <module>',
             "          -4.0978e-08, -1.0477e-08]]], device='cuda:1', dtype=torch.bfloat16,",
             "RuntimeError: shape mismatch"]
    assert all(i.failure != "bf16_unsupported_gpu" for i in engine_verdict(lines))


def test_a_fp16_autocast_frame_is_not_bf16() -> None:
    lines = ["Traceback (most recent call last):",
             '  File "train.py", line 9, in <module>',
             '    with torch.autocast("cuda", dtype=torch.float16):',
             "RuntimeError: boom"]
    assert all(i.failure != "bf16_unsupported_gpu" for i in engine_verdict(lines))


# bf16 on a stack too old for it (round 6): a torch build without the op's bf16 CUDA kernel, NCCL < 2.10.3
@pytest.mark.parametrize("line", [
    'RuntimeError: "copy_" not implemented for \'BFloat16\'',  # https://github.com/pytorch/pytorch/issues/23149
    'RuntimeError: "triu_tril_cuda_template" not implemented for \'BFloat16\'',  # deepseek-ai/DeepSeek-VL#52
    'RuntimeError: "_thnn_fused_gru_cell_cuda" not implemented for \'BFloat16\'',  # pytorch/pytorch#116763
    "RuntimeError: Input tensor data type is not supported for NCCL process group: BFloat16",  # pytorch/pytorch#53439
    "[1,1]<stderr>:RuntimeError: Unconvertible NCCL type BFloat16",  # NVIDIA/nccl#677 (Open MPI tags)
])
def test_a_stack_without_bf16_is_bf16_unsupported(line: str) -> None:
    top = engine_verdict(["Traceback (most recent call last):", '  File "train.py", line 9, in <module>', line])[0]
    assert top.failure == "bf16_unsupported_gpu", line


def test_fp16_kernels_missing_are_not_bf16() -> None:
    # the same wording for fp16 (a CPU op without a half kernel) is another matter
    top = engine_verdict(['RuntimeError: "addmm_impl_cpu_" not implemented for \'Half\''])
    assert all(i.failure != "bf16_unsupported_gpu" for i in top)
