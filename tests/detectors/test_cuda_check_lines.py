"""A CUDA check that prints its error string on the line below its header: llm.c's ``cudaCheck``
(``printf("[CUDA ERROR] at file %s:%d:\\n%s\\n", file, line, cudaGetErrorString(error))``, its
committed run logs: ``[CUDA ERROR] at file train_gpt2.cu:265:`` then ``out of memory``, corpus
holdout30 h30c-012) and the SGEMM-tutorial lineage's ``"[CUDA ERROR] at file %s(line %d):\\n%s\\n"``,
some forks printing the error's name first (``cudaErrorMemoryAllocation: out of memory``). The
two lines are one error: an out-of-memory is ``cuda_oom``, an illegal address or a launch failure
``cuda_illegal_memory_access``. The string alone, with no such header right above it, is nothing."""

from __future__ import annotations

from detectors.engine import Engine
from tests.helpers import engine_verdict


def test_the_header_and_the_string_below_it_are_one_error() -> None:
    lines = ["allocating 237 MiB for parameter gradients", "allocating 39612 MiB for activations",
             "[CUDA ERROR] at file train_gpt2.cu:265:", "out of memory"]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("cuda_oom", None)
    for head, text in (("[CUDA ERROR] at file sgemm.cu(line 42):", "an illegal memory access was encountered"),
                       ("[CUDA ERROR] at file gemm.cu:88:", "cudaErrorIllegalAddress: an illegal memory access was encountered")):
        assert engine_verdict([head, text])[0].failure == "cuda_illegal_memory_access"


def test_the_same_whatever_the_chunks() -> None:
    eng = Engine("t")
    fs = eng.open_file("train.log")
    eng.feed(b"[CUDA ERROR] at file train_gpt2.cu:265:\n", 1, fs)
    eng.feed(b"out of memory\n", 2, fs)
    assert eng.verdict()[0].failure == "cuda_oom"


def test_the_string_alone_or_far_below_is_nothing() -> None:
    assert engine_verdict(["out of memory"]) == []
    assert engine_verdict(["[CUDA ERROR] at file train_gpt2.cu:265:", "step 1 loss 2.3", "out of memory"])[:1] == []
