"""A paste that cut one line in the middle of a failure's message (no fixed width: not a
terminal's hard wrap) is rejoined where, and only where, the joined line is a fingerprint's."""

from __future__ import annotations

import io
from collections.abc import Sequence

import pytest

from detectors.parse import default_parser
from detectors.unwrap import rejoin_cut
from monitor.diagnose import diagnose_stream

# TuSimple/mx-maskrcnn#98 (corpus crash-081): MXNet's C++ abort, cut mid-word
_MXNET = (
    "INFO:root:Epoch[0] Batch [2260] Speed: 0.34 samples/sec Train-RCNNAcc=0.795092, RCNNLogLoss=0.639085,   "
    "RCNNL1Loss=1.497108,\n"
    "MaskACC=0.914390,       MaskLogLoss=0.150871,\n"
    "terminate called after throwing an instance of 'dmlc::Error'\n"
    "  what():  [10:44:35] src/engine/./threaded_engine.h:359: [10:44:35] src/storage/./pooled_storage_manager.h:107: "
    "cudaMalloc fail\n"
    "ed: out of memory\n"
)
# jax-ml/jax#788 (corpus h2-077): XLA's local client, cut between two words
_XLA = (
    "[1] 2019-06-13 01:17:08.886805: E external/org_tensorflow/tensorflow/compiler/xla/python/local_client.cc:672] "
    "Execution of replica 0 failed: Resource exhausted: Out \n"
    "of memory while trying to allocate 5520758552 bytes.\n"
)

# nshepperd/gpt-2#69: TensorFlow's BFC allocator line word-wrapped by the paste, the space kept
# at the start of the continuation
_BFC = (
    "2021-01-31 21:52:28.744480: W tensorflow/core/common_runtime/bfc_allocator.cc:419] Allocator (GPU_0_bfc) "
    "ran out of memory\n"
    " trying to allocate 4.00MiB (rounded to 4194304).  Current allocation summary follows.\n"
)


def fingerprints(lines: Sequence[bytes]) -> list[frozenset[int]]:
    return default_parser().fingerprint_ids(lines)


@pytest.mark.parametrize(("text", "joined"), [
    (_MXNET, "pooled_storage_manager.h:107: cudaMalloc failed: out of memory"),
    (_XLA, "Resource exhausted: Out of memory while trying to allocate 5520758552 bytes."),
    (_BFC, "ran out of memory trying to allocate 4.00MiB (rounded to 4194304)"),
])
def test_a_message_cut_by_the_paste_is_rejoined_and_keeps_line_numbers(text: str, joined: str) -> None:
    data = text.encode()
    out = rejoin_cut(data, fingerprints)
    before, after = data.split(b"\n"), out.split(b"\n")
    assert len(after) == len(before)
    i = next(k for k, ln in enumerate(after) if joined.encode() in ln)
    assert after[i].startswith(before[i]) and after[i + 1] == b""
    # everything else is as it was
    assert [ln for k, ln in enumerate(after) if k not in (i, i + 1)] == [ln for k, ln in enumerate(before) if k not in (i, i + 1)]


@pytest.mark.parametrize("text", [_MXNET, _XLA, _BFC])
def test_the_rejoined_oom_is_diagnosed(text: str) -> None:
    top = diagnose_stream(io.BytesIO(text.encode())).report["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"]) == ("cuda_oom", None)


def test_lines_that_read_on_their_own_are_left_alone() -> None:
    # a complete OOM line, then the C++ frames that follow it (lower-case starts); and a
    # lower-case line after a long one that makes no fingerprint when joined
    text = (
        b"[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 3 has a total capacity "
        b"of 79.10 GiB of which 6.00 MiB is free.\n"
        b"frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7861000c31b6 in libc10.so)\n"
        b"Detected kernel version 4.18.0, which is below the recommended minimum of 5.5.0; this can cause the process to hang.\n"
        b"it is recommended to upgrade the kernel to the minimum version or higher.\n"
    )
    assert rejoin_cut(text, fingerprints) == text


def test_only_the_phrase_a_fingerprint_needs_counts() -> None:
    # joined by a fake matcher that sees a fingerprint in one half already: not joined
    data = b"x" * 50 + b" cudaMalloc failed: out of memory\nand more text\n"
    assert rejoin_cut(data, lambda lines: [frozenset({1}) if b"cudaMalloc" in ln else frozenset() for ln in lines]) == data


def test_an_indented_line_is_no_continuation() -> None:
    # a traceback frame (two or more spaces) below a long line is never joined to it
    data = b"x" * 50 + b" Allocator (GPU_0_bfc) ran out of memory\n  trying to allocate 4.00MiB (rounded to 4194304).\n"
    assert rejoin_cut(data, fingerprints) == data


# a P100 user's paste (2024) broke cuBLAS's call after "opb," and again before CUDA_R_16BF's last use
_CUBLAS = (
    "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmStridedBatchedExFix(handle, opa, opb,\n"
    "(int)m, (int)n, (int)k, (void*)&falpha, a, CUDA_R_16BF, (int)lda, stridea, b, CUDA_R_16BF, (int)ldb, strideb,"
    " (void*)&fbeta, c,\n"
    "CUDA_R_16BF, (int)ldc, stridec, (int)num_batches, CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP)\n"
)


def test_a_call_wrapped_after_a_comma_is_rejoined() -> None:
    lines = _CUBLAS.encode().split(b"\n")
    # the continuation alone is no fingerprint's, though a buffer scan runs a negated class across the newline
    assert fingerprints(lines[:2]) == [frozenset(), frozenset()]
    out = rejoin_cut(_CUBLAS.encode(), fingerprints).split(b"\n")
    assert out[0] == lines[0] + lines[1] and out[1] == b""
    top = diagnose_stream(io.BytesIO(_CUBLAS.encode())).report["incidents"][0]
    assert top["failure"] == "bf16_unsupported_gpu"
