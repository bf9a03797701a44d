"""A bf16 refusal is the job's configuration: when every rank hits it at the same point no rank
started it; one rank alone (a heterogeneous job's older GPU) is still named. torch.fft's
``Unsupported dtype BFloat16`` (no bf16 kernel in cuFFT or pocketfft, quoted in many projects' notes
on bf16-mixed runs) is such a refusal. Lines from real CPU torchrun jobs (torch 2.13)."""

from __future__ import annotations

from tests.helpers import engine_verdict


def _svd(rank: int) -> list[str]:
    return [f"[rank{rank}]: Traceback (most recent call last):",
            f'[rank{rank}]:   File "/home/user/job/train.py", line 18, in <module>',
            f"[rank{rank}]:     s = torch.linalg.svdvals(net[0].weight)",
            f"[rank{rank}]: NotImplementedError: \"linalg_svd_cpu\" not implemented for 'BFloat16'"]


def test_every_rank_refused_names_no_rank() -> None:
    top = engine_verdict(_svd(0) + _svd(1))[0]
    assert (top.failure, top.rank) == ("bf16_unsupported_gpu", None)


def test_one_rank_refused_is_named() -> None:
    top = engine_verdict(["[rank0]: step 20 loss 1.23", "[rank1]: step 20 loss 1.25", *_svd(1)])[0]
    assert (top.failure, top.rank) == ("bf16_unsupported_gpu", 1)


def test_torch_fft_refusing_bf16() -> None:
    lines = ['[rank2]:   File "/home/user/job/train.py", line 41, in forward',
             "[rank2]:     x_ft = torch.fft.rfft(x)",
             "[rank2]: RuntimeError: Unsupported dtype BFloat16"]
    assert [i.failure for i in engine_verdict(lines)][:1] == ["bf16_unsupported_gpu"]
