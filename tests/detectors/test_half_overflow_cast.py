"""A value beyond fp16's range cast to half (a mask filled with -1e9 under fp16) raises
``RuntimeError: value cannot be converted to type at::Half without overflow`` (torch 1.x, as in
InternLM/lmdeploy#3152) or ``... type c10::Half ...`` (torch 2.x: CPU torchrun and Fabric jobs,
corpus holdout24 g24-015, g24b-015): an fp16 range overflow on the rank that raised it, not a
plain exception."""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict


@pytest.mark.parametrize("typ", ["at::Half", "c10::Half"])
def test_a_cast_beyond_fp16s_range_is_the_ranks_fp16_overflow(typ: str) -> None:
    lines = ["[rank3]: Traceback (most recent call last):", '[rank3]:   File "/home/user/job/train.py", line 61, in <module>',
             "[rank3]:     scores = scores.masked_fill(mask, -1e9)",
             f"[rank3]: RuntimeError: value cannot be converted to type {typ} without overflow",
             "[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed "
             "by peer [127.0.0.1]:28589. This is typically caused by a remote worker crashing."]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("amp_bf16_vs_fp16", 3)


def test_a_loops_own_fp16_overflow_guard_is_the_overflow() -> None:
    # hand-written guards raising on fp16's range (corpus holdout25 g25d-024): rank 3's activations
    # passed 65504; its peers only lost it
    lines = ["[rank3]: Traceback (most recent call last):",
             '[rank3]:   File "/home/user/job/train.py", line 15, in forward',
             "[rank3]: FloatingPointError: fp16 overflow in activations of blocks.0: max|x|=7.176e+04 > 65504.0 (rank 3)",
             "[rank0]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer "
             "[127.0.0.1]:32670"]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("amp_bf16_vs_fp16", 3)


def test_every_rank_stopping_on_the_same_overflow_names_the_rank_whose_gradients_overflowed() -> None:
    # a structlog loop (corpus holdout25 g25c-028): only rank 3 notes its own gradients overflowed,
    # then every rank's guard aborts on the skip count
    notes = [f"timestamp='2026-12-07 04:37:4{s % 10}' level='warning' event='local_grad_overflow' rank=3 step={s}"
             for s in range(32, 52, 2)]
    guard = [f"[rank{r}]: RuntimeError: fp16 gradient overflow on 10 of the last 20 steps (loss scale 512); aborting"
             for r in (1, 2, 0, 3)]
    top = engine_verdict([*notes, *guard])[0]
    assert (top.failure, top.rank) == ("amp_bf16_vs_fp16", 3)
    top = engine_verdict(guard)[0]
    assert (top.failure, top.rank) == ("amp_bf16_vs_fp16", None)  # the job's precision, no rank's
