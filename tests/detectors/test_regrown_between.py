"""A metric line that logs a loss scale above the last back-off's new scale says the scaler grew
back since: the next back-off to that scale is a new overflow, not another rank's copy of the
last one, even where two ranks' reports come glued on one line (detect ``_sample``,
``scale_regrown``). So a run that skips every other step at a scale it regrows to at once is
skipping steps, however alike its back-off lines read.

Format: DeepSpeed's fp16 optimizer's overflow report, printed by every rank (deepspeed/runtime/
fp16/fused_optimizer.py), two ranks writing one stream (glued lines), and a loop's own step line
with its loss scale (corpus holdout31 g31d-011, as a GitHub Actions log)."""

from __future__ import annotations

from tests.helpers import engine_verdict

_OVF = "[deepspeed] OVERFLOW! Rank {r} Skipping step. Attempted loss scale: 65536, reducing to 32768"


def _step(s: int) -> str:
    return (f"2026-12-07 22:51:21,{s:03d} [rank0] INFO train: step {s}/70 | loss {45 + s % 7}.33 | lr 1.00e-03 | "
            f"grad_norm 14.6 | loss scale 65536.0")


def _job(with_metric_lines: bool) -> list[str]:
    out = [_step(s) for s in (5, 10, 15, 20, 25)]
    for s in range(30, 71, 5):
        out += [_OVF.format(r=0), _OVF.format(r=1), _OVF.format(r=0) + _OVF.format(r=1), _OVF.format(r=1)]
        if with_metric_lines:
            out.append(_step(s))
    return out


def test_back_offs_between_lines_that_show_the_scale_regrown_are_skipped_steps() -> None:
    top = engine_verdict(_job(True))[0]
    assert (top.failure, top.severity) == ("fp16_overflow_skips", "warning")


def test_without_such_lines_the_glued_copies_stay_one_move() -> None:
    assert not [i for i in engine_verdict(_job(False)) if i.failure == "fp16_overflow_skips" and i.severity != "info"]
