"""Overflow reports that "reduce" the loss scale to the value it had, well above the framework's
floor, with no descent before them: DeepSpeed's ``OVERFLOW! Rank 3 Skipping step. Attempted
loss scale: 128, reducing to 128`` under a static ``--loss-scale``. Not a scaler pinned at its
floor (``Attempted loss scale: 1, reducing to 1`` after a descent is a collapse), a fixed scale
that keeps overflowing: each report is a step thrown away (``fp16_overflow_skips``).

Format: DeepSpeed's fp16 optimizer's overflow report (deepspeed/runtime/fp16/fused_optimizer.py,
printed by every rank) and its ``log_dist`` step line (``[Rank 0] step=220, skipped=42, ...``)."""

from __future__ import annotations

from tests.helpers import engine_verdict


def _report(scale: str, rank: int, ms: int) -> str:
    return (f"[2026-12-07 22:11:06,{ms:03d}] [INFO] [fused_optimizer.py:391:step] [deepspeed] OVERFLOW! Rank {rank} "
            f"Skipping step. Attempted loss scale: {scale}, reducing to {scale}")


def _job(scale: str, rounds: int) -> list[str]:
    return [_report(scale, r, (40 * i + r) % 1000) for i in range(rounds) for r in range(4)] + [
        "[2026-12-07 22:11:06,439] [INFO] [logging.py:128:log_dist] [Rank 0] step=240, skipped=45, lr=[0.0001], "
        "mom=[(0.9, 0.999)]"]


def test_a_scale_that_never_moves_keeps_skipping_steps() -> None:
    top = engine_verdict(_job("128", 9))[0]
    assert (top.failure, top.severity) == ("fp16_overflow_skips", "warning")
    assert top.data["static_scale"] == 128.0


def test_a_few_such_reports_are_nothing() -> None:
    assert not [i for i in engine_verdict(_job("128", 2)) if i.severity in ("warning", "critical")]


def test_stuck_at_one_is_still_the_floor() -> None:
    top = engine_verdict(_job("1", 9))[0]
    assert top.failure == "loss_scale_collapse"
