"""A device-side assert below lines where the loss had already gone non-finite is the NaN's
consequence (NaN features turned into an out-of-range index), not a kernel fault of its own.

Source: a hierarchical-clustering (FGDCC) run's log committed to its repository (corpus holdout24
h24a-014): every loss term ``nan`` for an epoch, then the k-means update's ``Indexing.cu``
assertion and ``RuntimeError: CUDA error: device-side assert triggered``."""

from __future__ import annotations

from tests.helpers import engine_verdict

_ASSERT = ["/opt/conda/conda-bld/pytorch_1716905969118/work/aten/src/ATen/native/cuda/Indexing.cu:805: "
           "indexFuncLargeIndex: block: [3,0,0], thread: [94,0,0] Assertion `dstIndex < dstAddDimSize` failed.",
           "Traceback (most recent call last):", '  File "main.py", line 120, in <module>', "    update_centroids(feats)",
           "RuntimeError: CUDA error: device-side assert triggered",
           "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect."]


def _losses(nan_from: int | None) -> list[str]:
    lines = []
    for i in range(1, 40):
        bad = nan_from is not None and i >= nan_from
        v = "nan" if bad else f"{6.9 - i / 100:.4f}"
        lines += [f"INFO:root:[1, {i:5d}/ 2562] - train_losses - Parent Class: {v} - Children class: {v} -Autoencoder "
                  f"Loss (total): {v} - Reconstruction/K-Means Loss: [{v} / 38275925.0000] - Consistency Loss: [0.0000] - VICReg Loss: [0.0000][wd: 5.00e-02] [lr: 8.50e-05]",
                  f"INFO:root:[1, {i:5d}] grad_stats: [{'nan nan' if bad else '0.51 0.48'}] ({'nan, nan' if bad else '0.5, 0.4'})"]
    return lines


def test_a_device_assert_after_the_loss_went_nan_is_its_consequence() -> None:
    top = engine_verdict([*_losses(nan_from=10), *_ASSERT])[0]
    assert top.failure == "nonfinite_loss"


def test_a_device_assert_with_no_nan_before_it_is_the_cause() -> None:
    top = engine_verdict([*_losses(nan_from=None), *_ASSERT])[0]
    assert top.failure == "cuda_illegal_memory_access"
