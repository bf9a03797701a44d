"""cuBLAS refusing a bfloat16 GEMM (``CUBLAS_STATUS_NOT_SUPPORTED`` with ``CUDA_R_16BF`` operands)
or PyTorch's cuDNN binding refusing BFloat16 is bf16 asked of a GPU or build that cannot run it;
the same cuBLAS status on fp16 operands is something else."""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict


@pytest.mark.parametrize("line", [
    # https://github.com/billwuhao/ComfyUI_ACE-Step/issues/10
    "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmStridedBatchedEx(handle, opa, "
    "opb, (int)m, (int)n, (int)k, (void*)&falpha, a, CUDA_R_16BF, (int)lda, stridea, b, CUDA_R_16BF, (int)ldb, "
    "strideb, (void*)&fbeta, c, CUDA_R_16BF, (int)ldc, stridec, (int)num_batches, compute_type, "
    "CUBLAS_GEMM_DEFAULT_TENSOR_OP)`",
    # https://github.com/deepspeedai/DeepSpeed/issues/6723 (wrapped in the reporter's inline code marks)
    "```RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmStridedBatchedEx(handle, opa, "
    "opb, (int)m, (int)n, (int)k, (void*)&falpha, a, CUDA_R_16BF, (int)lda, stridea, b, CUDA_R_16BF, (int)ldb, "
    "strideb, (void*)&fbeta, c, CUDA_R_16BF, (int)ldc, stridec, (int)num_batches, compute_type, "
    "CUBLAS_GEMM_DEFAULT_TENSOR_OP)```",
    # https://github.com/pytorch/pytorch/issues/88571 (Conv2d in bf16)
    "RuntimeError: getCudnnDataTypeFromScalarType() not supported for BFloat16",
])
def test_cublas_or_cudnn_refusing_bf16_is_bf16_unsupported(line: str) -> None:
    found = engine_verdict([line])
    assert found and found[0].failure == "bf16_unsupported_gpu"


@pytest.mark.parametrize("line", [
    # https://github.com/buaacyw/GaussianEditor/issues/46 (fp16 operands)
    "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmEx( handle, opa, opb, m, n, k, "
    "&falpha, a, CUDA_R_16F, lda, b, CUDA_R_16F, ldb, &fbeta, c, CUDA_R_16F, ldc, CUDA_R_32F, "
    "CUBLAS_GEMM_DEFAULT_TENSOR_OP)`",
    # https://github.com/JiaquanYe/TableMASTER-mmocr/issues/73 (fp16 operands)
    "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmStridedBatchedExFix( handle, opa, "
    "opb, m, n, k, (void*)(&falpha), a, CUDA_R_16F, lda, stridea, b, CUDA_R_16F, ldb, strideb, (void*)(&fbeta), c, "
    "CUDA_R_16F, ldc, stridec, num_batches, CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`",
])
def test_cublas_refusing_fp16_operands_is_not_a_bf16_problem(line: str) -> None:
    assert all(i.failure != "bf16_unsupported_gpu" for i in engine_verdict([line]))


def test_the_call_without_its_code_marks_is_read_too() -> None:
    # newer torch builds print the call unquoted (a project FAQ about old GPUs such as the M40)
    line = ("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling cublasGemmStridedBatchedEx(handle, opa, "
            "opb, (int)m, (int)n, (int)k, (void*)&falpha, a, CUDA_R_16BF, (int)lda, stridea, b, CUDA_R_16BF, (int)ldb, "
            "strideb, (void*)&fbeta, c, ")
    assert engine_verdict([line])[0].failure == "bf16_unsupported_gpu"

