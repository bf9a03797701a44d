"""A rank that caught an error, skipped its batch and went on left out that step's collectives
while its peers ran them: from then on the ranks wait in different collectives, and the job ends
in collective timeouts on every rank. When every rank timed out and one rank alone had noted such
a skip before the first timeout, that rank is the one that desynchronised the job (``rank_hang``),
though it runs AHEAD of its peers, not behind them.

Sources of the shape: pytorch/pytorch#44353 (an OOM caught on one DDP rank, "| WARNING: ran out of
memory, skipping this batch.", the other ranks blocked; the maintainer: skipping comm after an error
"will lead to collective communication desync, which leads to the hang"), Lightning-AI/pytorch-
lightning#5243 ("Ran out of memory in the backward pass. Skipping batch due to: {e}" printed by one
rank right before the job froze), NVIDIA-NeMo/Automodel#2468 (a per-rank ``continue`` on an error
desynchronising DDP's all-reduces into a watchdog hang); the lines below are those of a torchrun
gloo job with loguru whose rank 1 swallowed a batch-size mismatch (corpus holdout19 g19-015)."""

from __future__ import annotations

from tests.helpers import engine_verdict


def _note(rank: int, second: str, text: str, level: str = "INFO    ") -> str:
    return f"2026-12-06 05:18:{second} | {level} | rank{rank} | __main__:<module>:27 - {text}"


_STEPS = [_note(r, f"33.{240 + 10 * s + r}", f"step {s} loss 1.4{s}91") for s in (10, 20, 30) for r in (1, 0)]
_SKIP = _note(1, "33.698", "skipping bad batch at step 33: Expected input batch_size (8) to match target batch_size (7).",
              "WARNING ")
_AHEAD = [_note(1, "34.113", "step 60 loss 1.3917"), _note(1, "34.113", "epoch done, syncing before eval"),
          _note(0, "33.982", "step 50 loss 1.3482")]


def _timeouts() -> list[str]:
    lines = []
    for r, why in ((1, "[/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out "
                       "waiting 25000ms for recv operation to complete"), (0, "Application timeout caused pair closure")):
        lines += [f"[rank{r}]: Traceback (most recent call last):",
                  f'[rank{r}]:   File "/job/train.py", line 29, in <module>',
                  f"[rank{r}]:     dist.barrier()",
                  f'[rank{r}]:   File "/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 5356, in barrier',
                  f"[rank{r}]:     work.wait()",
                  f"[rank{r}]: RuntimeError: {why}"]
    return lines


def test_the_one_rank_that_skipped_a_batch_before_the_timeouts_desynchronised_the_job() -> None:
    top = engine_verdict([*_STEPS, _SKIP, *_AHEAD, *_timeouts()])[0]
    assert (top.failure, top.rank) == ("rank_hang", 1)
    assert "skipped a batch" in " ".join(top.narrative)


def test_a_skip_on_every_rank_names_nobody() -> None:
    both = [*_STEPS, _SKIP, _SKIP.replace("rank1", "rank0"), *_AHEAD, *_timeouts()]
    assert all(i.failure != "rank_hang" or i.rank is None for i in engine_verdict(both))


def test_a_swallowed_timeout_or_a_loss_scalers_skip_is_no_skip_of_its_own() -> None:
    swallowed = _note(0, "59.121", "skipping bad batch at step 60: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/"
                      "tcp/unbound_buffer.cc:78] Timed out waiting 25000ms for recv operation to complete", "WARNING ")
    scaler = _note(1, "33.698", "[deepspeed] OVERFLOW! Rank 1 Skipping step. Attempted loss scale: 65536, reducing to 32768")
    for note in (swallowed, scaler):
        lines = [*_STEPS, note, *_AHEAD, *_timeouts()]
        assert all(i.failure != "rank_hang" or i.rank is None for i in engine_verdict(lines))
