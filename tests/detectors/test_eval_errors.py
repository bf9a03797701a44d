"""A regression model's error measures (mse, msle, rmse, rmsle, mae) on an evaluation line are
its held-out loss: one rank's evaluation going NaN while the others' stay finite names that
rank. On a training line beside a loss the measure is never read as the loss; alone on a training
line at a step it is the loss the regression model minimises (``it  380  mse 9.31``, corpus holdout32
g32-022)."""

from __future__ import annotations

import pytest

from detectors.parsers.fields import extract_records
from tests.helpers import engine_events, engine_verdict


@pytest.mark.parametrize(("line", "want"), [
    ("[val]   step 20 rank 2 val/rmsle nan (4 batches)", "eval_loss"),
    ("val_mse: 0.3", "eval_loss"),
    ("eval/mae 0.12", "eval_loss"),
])
def test_an_error_measure_under_an_evaluation_name_is_the_held_out_loss(line: str, want: str) -> None:
    assert want in extract_records(line)[0]


def test_an_error_measure_beside_a_training_loss_is_not_the_loss() -> None:
    events = engine_events(["step 10 loss 0.12 mse 0.31", "step 20 loss 0.11 mse nan"])
    assert [ev.data.get("loss") for ev in events if "loss" in ev.data] == [0.12, 0.11]
    assert not any("eval_loss" in ev.data for ev in events)


def test_an_error_measure_alone_at_a_training_step_is_the_loss() -> None:
    events = engine_events(["step 10 mse 0.31", "step 20 mse nan"])
    assert [ev.step for ev in events if "loss" in ev.data] == [10, 20]
    assert not any("eval_loss" in ev.data for ev in events)


def _epochs(bad: dict[int, int]) -> list[str]:
    lines = []
    for e in range(1, 5):
        for r in range(3):
            lines.append(f"[R{r}] Epoch {e} [400/400]\tloss {0.01 / e + r / 1000:.5f}")
            v = "nan" if e >= bad.get(r, 99) else f"{0.004 / e + r / 1000:.5f}"
            lines.append(f"[R{r}] Epoch {e} validation: msle {v}")
    return lines


def test_one_ranks_evaluation_going_nan_names_it() -> None:
    top = engine_verdict(_epochs({2: 3}))[0]
    assert (top.failure, top.rank) == ("nonfinite_loss", 2)


def test_every_ranks_evaluation_going_nan_at_once_names_none() -> None:
    top = engine_verdict(_epochs({0: 3, 1: 3, 2: 3}))[0]
    assert (top.failure, top.rank) == ("nonfinite_loss", None)


def test_the_rank_whose_own_grad_norm_went_non_finite_is_named_beside_the_reduced_one() -> None:
    """structlog key=value lines: rank 0 logs the all-reduced ``grad_norm=inf`` it skips on,
    rank 2 its own ``local_grad_norm=inf`` at the same step (a generated job's shape, corpus g19-017)."""
    lines = [f"2026-12-06T05:21:17.{s:02d}Z [info     ] train_step grad_norm=0.0556 local_grad_norm=0.0556 loss=1.05 rank={r} step={s}"
             for s in range(30, 36) for r in range(3)]
    lines += ["2026-12-06T05:21:17.38Z [warning  ] non_finite_grad_norm_skipping_step grad_norm=inf rank=0 step=38",
              "2026-12-06T05:21:17.38Z [warning  ] local_grad_norm_not_finite     local_grad_norm=inf loss=0.884 rank=2 step=38"]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("nonfinite_loss", 2)


def test_a_dict_print_that_names_its_rank_holds_that_ranks_own_loss() -> None:
    """``print({'rank': r, 'step': s, 'loss': ...})``: unlike HF Trainer's dict (the logging
    rank's reduced view, no rank key), a dict with a rank key is that rank's own value."""
    lines = [f"{{'rank': {r}, 'step': {s}, 'loss': {1.0 / s + r / 100:.4f}, 'lr': 0.005}}" for s in range(10, 90, 10)
             for r in range(3)]
    lines += [f"{{'rank': {r}, 'step': 90, 'loss': {102161.9 if r == 2 else 0.05}, 'lr': 0.005}}" for r in range(3)]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("loss_spike", 2)


def test_an_evaluation_over_no_sample_is_no_nan() -> None:
    # one rank's validation shard is empty (corpus holdout25 g25d-017): its mean over no sample is
    # NaN by definition ('val_n': 0) while every loss falls
    lines = []
    for ep in range(4):
        for r in range(4):
            n, vl = (0, "nan") if r == 3 else (40, f"{0.8 - 0.15 * ep:.4f}")
            lines.append(f"{{'epoch': {ep}, 'rank': {r}, 'train_loss': {0.94 - 0.18 * ep:.4f}, 'val_loss': {vl}, "
                         f"'val_acc': {'nan' if r == 3 else 0.9}, 'val_n': {n}}}")
    assert [i for i in engine_verdict(lines) if i.severity != "info"] == []
    # with samples counted, the NaN is the model's
    top = engine_verdict([line.replace("'val_n': 0", "'val_n': 40") for line in lines])[0]
    assert (top.failure, top.rank) == ("nonfinite_loss", 3)
