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
