"""Errors that say a kernel, operator or quantization method cannot take bfloat16, in the words
of different stacks; warnings that fall back to another dtype are not failures. Real lines from
the threads named."""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict

_ERRORS = [
    # vLLM's AWQ kernels (https://github.com/vllm-project/vllm/issues/1941)
    "ValueError: torch.bfloat16 is not supported for quantization method awq. Supported dtypes: [torch.float16]",
    # the same check behind Ray's worker prefix (https://github.com/hiyouga/LlamaFactory/issues/3674)
    "(RayWorkerVllm pid=6035) ERROR 05-10 03:37:55 ray_utils.py:44] ValueError: torch.bfloat16 is not supported for "
    "quantization method gptq. Supported dtypes: [torch.float16]",
    # Ascend's TBE compiler under torch_npu (vllm-ascend on a 910A; corpus case h12b-019)
    "[rank0]: E90003: [PID: 9038] 2025-09-28-03:43:47.761.546 Compile operator failed, cause: Template constraint, "
    "detailed information: bfloat16 of tbe.dsl.transdata is not supported.",
    # a CUDA extension's dtype dispatch (https://github.com/microsoft/VPTQ/issues/44)
    "RuntimeError: un-supported dtype: bfloat16",
    # the same refusal inside a JSON status dict, its quotes escaped (an agent framework's SFT on a V100,
    # corpus holdout18 h18c-001)
    "`{'status': 'error', 'message': '\u64cd\u4f5c\u5931\u8d25: \"_amp_foreach_non_finite_check_and_unscale_cuda\" "
    "not implemented for \\'BFloat16\\''}`",
]

_FALLBACKS = [
    # a training script choosing fp16 when the GPU has no bf16 (a warning, the run goes on)
    "WARNING:root:bf16 is not supported on this device. Using fp16 instead.",
    "⚠ WARNING: BF16 is not supported on this GPU!",
]


@pytest.mark.parametrize("line", _ERRORS)
def test_bf16_refusals_are_bf16_unsupported(line: str) -> None:
    assert [i.failure for i in engine_verdict([line])][:1] == ["bf16_unsupported_gpu"]


@pytest.mark.parametrize("line", _FALLBACKS)
def test_fallback_warnings_are_quiet(line: str) -> None:
    assert [i for i in engine_verdict([line]) if i.severity in ("warning", "critical")] == []


def test_a_missing_bf16_kernel_inside_a_json_string_is_read() -> None:
    # hello-agents' RL tool returns its error as JSON, the kernel's name in escaped quotes (corpus
    # holdout24 h24f-006): GradScaler's unscale kernel has no bf16 implementation
    lines = ["报错：{", '  "status": "error",',
             '  "message": "操作失败: \\"_amp_foreach_non_finite_check_and_unscale_cuda\\" not implemented for \'BFloat16\'",']
    assert engine_verdict(lines)[0].failure == "bf16_unsupported_gpu"
