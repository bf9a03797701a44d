"""Overflow reports that carry the step they skipped, with no metric line that counts steps (a
paste of ``grep overflow train.log``, or metric lines in a shape not read): the back-offs' own
steps span the run, and overflows that keep coming after the scale grew back, at a high rate,
are skips the run pays for (correlate ``_overflow_rate_high``).

Wording: fairseq's dynamic loss scaler (``overflow detected, setting loss scale to: 64.0``,
fairseq#512) and the hand-written scalers that copy it with the step they skipped
(``overflow detected at step 4, skipping update, setting loss scale to: 65536.0``)."""

from __future__ import annotations

from tests.helpers import engine_verdict, fed_state


def _bouncing(first: int = 4, last: int = 400, every: int = 5) -> list[str]:
    out = []
    scale = 65536.0
    for i, step in enumerate(range(first, last, every)):
        scale = min(scale * 2, 262144.0) if i % 2 else max(scale / 2, 16384.0)
        out.append(f"WARNING fp16_optimizer: overflow detected at step {step}, skipping update, "
                   f"setting loss scale to: {scale}")
    return out


def test_the_fairseq_copy_with_its_step_is_a_scale_move_at_that_step() -> None:
    state = fed_state(_bouncing()[:2], "train.log")
    assert [(m.step, m.to_scale) for m in state.scale_moves] == [(4, 32768.0), (9, 65536.0)]


def test_overflows_alone_all_through_a_run_are_skips() -> None:
    top = engine_verdict(_bouncing())[0]
    assert top.failure == "fp16_overflow_skips"
    assert top.severity == "warning"


def test_a_start_up_descent_alone_is_not() -> None:
    # eight halvings in the first eight steps, then nothing: the scaler searching for its scale
    lines = [f"WARNING fp16_optimizer: overflow detected at step {s}, skipping update, setting loss scale to: "
             f"{65536.0 / 2 ** s}" for s in range(1, 9)]
    assert not [i for i in engine_verdict(lines) if i.failure == "fp16_overflow_skips" and i.severity != "info"]
