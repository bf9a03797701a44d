"""A dynamic loss scale that dipped low mid-run and climbed back by two growth windows (x4) with
the loss finite, overflowing once every few hundred updates after: the scaler riding a rough
patch out, not a collapse and nothing to page about. The lines are fairseq's hydra logging
(``[fairseq.trainer][INFO] - NOTE: gradient overflow detected, ignoring gradient, setting loss
scale to: 0.5`` and ``[train_inner][INFO] - {"epoch": 27, ..., "num_updates": "13800", ...,
"loss_scale": "0.5", ...}``), the shape of a committed HuBERT pre-training log (corpus holdout26
h26a-004, shanguanma/fairseq_speechtext)."""

from __future__ import annotations

from tests.helpers import engine_verdict


def _inner(update: int, loss: float, scale: str) -> str:
    return (f'[2023-11-22 20:20:59,918][train_inner][INFO] - {{"epoch": 27, "update": {update / 524:.3f}, '
            f'"loss": "{loss:.3f}", "ppl": "16.63", "wps": "10305.7", "ups": "0.16", "num_updates": "{update}", '
            f'"lr": "0.000215625", "gnorm": "0.55", "clip": "0", "loss_scale": "{scale}", "train_wall": "1255"}}')


def _note(scale: str) -> str:
    return ("[2023-11-22 20:13:24,493][fairseq.trainer][INFO] - NOTE: gradient overflow detected, ignoring "
            f"gradient, setting loss scale to: {scale}")


def _run(scales: list[str]) -> list[str]:
    lines: list[str] = []
    loss, prev = 4.2, scales[0]
    for i, scale in enumerate(scales):
        if float(scale) < float(prev):
            s = float(prev)
            while s > float(scale):
                s /= 2
                lines.append(_note(f"{s:g}" if s < 1 else f"{s:.1f}"))
        lines.append(_inner(13000 + 200 * i, loss, scale))
        loss -= 0.03
        prev = scale
    return lines


def test_a_scale_that_climbed_back_from_its_dip_is_not_paged() -> None:
    lines = _run(["2", "2", "2", "0.5", "0.5", "0.5", "1", "1", "2", "2", "1", "1", "1"])
    assert not [i.failure for i in engine_verdict(lines) if i.severity != "info"]


def test_a_scale_that_kept_falling_is_still_a_collapse() -> None:
    lines = _run(["2", "2", "1", "0.5", "0.25", "0.125", "0.0625", "0.0312", "0.0156", "0.0078"])
    assert "loss_scale_collapse" in {i.failure for i in engine_verdict(lines)}
