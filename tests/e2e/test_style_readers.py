"""Each logging style added for issue #12 is read back by its reader in ``metrics.py``.

The golden cases prove the readers on real torchrun output; this drives each reporter of
``scenarios/styles.py`` directly (no torch) over a short fp16 run with an overflow, so a
change to a reporter or a reader that breaks the other shows here, with the exact values.
"""

from __future__ import annotations

import contextlib
import io
import logging
import math
from collections.abc import Iterator

import pytest

from .metrics import LAST_RANK_STYLES, PARSERS, RANK_ZERO_STYLES, REDUCED_STYLES
from .scenarios.styles import STYLES, StepRecord

NEW_STYLES = ("absl", "titan", "structlog", "megatron", "deepspeed", "keras", "table", "bracket")
WORLD = 4
OVERFLOW_STEP = 3  # grad_norm is inf there and the scale halves


@pytest.fixture(autouse=True)
def _keep_logging() -> Iterator[None]:
    """Reporters install handlers (torchtitan's on the root logger); put them back after."""
    loggers = [logging.getLogger(), logging.getLogger("train")]
    saved = [(lg, lg.handlers[:], lg.level, lg.propagate) for lg in loggers]
    yield
    for lg, handlers, level, propagate in saved:
        lg.handlers[:] = handlers
        lg.setLevel(level)
        lg.propagate = propagate


def record(rank: int, step: int) -> StepRecord:
    overflow = step == OVERFLOW_STEP
    return StepRecord(step=step, max_steps=6, loss=0.25 * step + 0.5 * rank,
                      grad_norm=math.inf if overflow else 0.125 * step,
                      loss_scale=32768.0 if step >= OVERFLOW_STEP else 65536.0, lr=0.05)


def run(style: str, rank: int) -> str:
    """Everything one rank's reporter prints (stdout and stderr) over steps 1..6."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        reporter = STYLES[style](rank, WORLD)
        reporter.config(f"config: precision=fp16 loss_scaling=true world_size={WORLD} backend=gloo rank={rank}")
        for step in range(1, 7):
            recs = [record(r, step) for r in range(WORLD)]
            mean = sum(r.loss for r in recs) / WORLD if reporter.contribution(recs[rank]) is not None else None
            reporter.step(recs[rank], mean)
        reporter.end()
    return out.getvalue()


@pytest.mark.parametrize("style", NEW_STYLES)
def test_reader_reads_what_the_reporter_prints(style: str) -> None:
    one_rank = style in RANK_ZERO_STYLES
    printer = WORLD - 1 if style in LAST_RANK_STYLES else 0
    for rank in range(WORLD):
        got = dict(PARSERS[style](run(style, rank)))
        if one_rank and rank != printer:
            assert got == {}, f"rank {rank} is not the printing rank, yet printed {got}"
            continue
        assert sorted(got) == list(range(1, 7)), f"rank {rank}: steps {sorted(got)}"
        seen = 0.0
        for step, rec in got.items():
            local = record(rank, step).loss
            seen += local
            want = (sum(record(r, step).loss for r in range(WORLD)) / WORLD if style in REDUCED_STYLES
                    else seen / step if style == "keras"  # Progbar shows the epoch's running mean
                    else local)
            if style == "megatron" and step == OVERFLOW_STEP:  # a skipped iteration: no loss, no norm
                assert "loss" not in rec and "grad_norm" not in rec, rec
            else:
                assert rec["loss"] == pytest.approx(want, abs=1e-4), f"step {step}: {rec}"
                assert math.isinf(rec["grad_norm"]) == (step == OVERFLOW_STEP), f"step {step}: {rec}"
            if "loss_scale" in rec:
                assert rec["loss_scale"] == (32768.0 if step >= OVERFLOW_STEP else 65536.0), rec
        scaled = [s for s, rec in got.items() if "loss_scale" in rec]
        assert scaled == ([] if style == "titan" else list(range(1, 7))), f"loss_scale read at {scaled}"
