"""A running count of the steps whose gradients the scaler found inf in (``found_inf_steps: 28``,
torch's and Paddle's GradScaler call the flag ``found_inf``) is a skipped-step counter like
DeepSpeed's ``skipped=``; and one rank's own note that its fp16 forward output held inf/NaN is
a local overflow (no reduction touches the forward pass): that rank's batch overflowed.

Formats: PaddleNLP's trainer log line (``[2026-12-07 22:26:31,092] [    INFO] - loss: 1.79373,
learning_rate: 0.0001, global_step: 25, ...``) behind torchrun's ``[defaultN]:`` tee prefix, and
a hand-written loop's warning in the same logger (corpus holdout31 g31-026)."""

from __future__ import annotations

from tests.helpers import engine_verdict


def _line(step: int, found: int, scale: float) -> str:
    return (f"[default0]:[2026-12-07 22:26:31,092] [    INFO] - loss: 1.{80 - step // 25:02d}, learning_rate: 0.0001, "
            f"global_step: {step}, loss_scaling: {scale}, found_inf_steps: {found}, interval_runtime: 0.3813")


def _warn(rank: int, step: int) -> str:
    return (f"[default{rank}]:[2026-12-07 22:26:32,133] [ WARNING] - rank {rank}: fp16 forward output contains inf/nan "
            f"at global_step {step} (loss_scaling=16384.0), found_inf will be set and this step skipped")


def _job(warner: int | None) -> list[str]:
    out: list[str] = []
    found = 0
    for step in range(25, 325, 25):
        for s in range(step - 24, step + 1):
            if step > 75 and s % 9 == 0:
                found += 1
                if warner is not None:
                    out.append(_warn(warner, s))
        out.append(_line(step, found, 32768.0 if step <= 75 else 16384.0))
    return out


def test_a_found_inf_count_growing_fast_is_skipped_steps() -> None:
    top = engine_verdict(_job(None))[0]
    assert (top.failure, top.rank) == ("fp16_overflow_skips", None)


def test_one_rank_noting_its_own_forward_overflow_is_named() -> None:
    top = engine_verdict(_job(3))[0]
    assert (top.failure, top.rank) == ("fp16_overflow_skips", 3)
    assert top.data.get("rank_from") == "local_overflow"


def test_a_slow_count_is_nothing() -> None:
    lines = [_line(step, step // 300, 32768.0) for step in range(25, 1000, 25)]
    assert not [i for i in engine_verdict(lines) if i.severity in ("warning", "critical")]
