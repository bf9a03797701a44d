"""Where a metric line says whose value it is. A per-rank CSV or table with a ``rank`` column
(``rank,step,loss,valid_tokens,grad_norm``) names each row's process. A rank tag glued to its number
(``INFO rank2 step21: ...``) is a rank named in the message. A loop that logs its own gradient norm
before the all-reduce (``local_grad_norm``) and the reduced one (``global grad_norm=inf at step 31``,
rank 0's guard) shows whose gradients went non-finite: the own one; the reduced one (and the guard
that raised on it steps later) is every rank's view. A monitored metric Lightning's EarlyStopping
finds non-finite is the job's (the stop decision is reduced over ranks; each rank that logs prints
it). A loss that spikes on every rank that logged after the first spike is a job-wide cause (a
learning rate raised), no one rank's. Shapes from CPU torchrun / Lightning jobs with one injected
fault (corpus holdout20 g20, g20b)."""

from __future__ import annotations

from tests.helpers import engine_verdict


def test_a_csv_rank_column_names_the_row_whose_loss_went_nan() -> None:
    lines = ["rank,step,loss,valid_tokens,grad_norm"]
    for step in range(1, 29):
        lines += [f"{r},{step},{1.4 - step * 0.005 + r * 0.01:.5f},32,0.4" for r in range(4)]
    lines += ["0,29,1.23503,32,nan", "3,29,nan,0,nan"]
    lines += [f"{r},{s},nan,32,nan" for s in range(30, 34) for r in range(4)]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("nonfinite_loss", 3)


def test_a_csv_logs_error_row_is_the_text_of_its_rank_column() -> None:
    """A script's CSV log (``time,rank,epoch,step,loss,...``) that writes an exception as a row
    (``18:03:40,2,0,26,ERROR,RuntimeError: ... Timed out waiting 25000ms``): the row's rank cell names
    the process that timed out, and the one rank with no such row, its log stopped a step earlier, is
    the stalled one (corpus holdout29 g29b-015, mp.spawn with gloo)."""
    lines = ["time,rank,epoch,step,loss,grad_norm,samples_per_s"]
    for step in range(0, 30, 5):
        lines += [f"18:03:15,{r},0,{step},{1.1 + r * 0.01:.4f},0.31,3400.0" for r in range(4)]
    lines += [f"18:03:40,{r},0,26,ERROR,RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] "
              "Timed out waiting 25000ms for recv operation to complete" for r in (0, 2, 1)]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("rank_hang", 3)
    # a text row whose lead cells are not the row's shape names no rank
    odd = [*lines[:-3], *[f"18:03:40,r{r},0,26,ERROR,RuntimeError: Timed out waiting 25000ms for recv operation to complete"
                          for r in (0, 2, 1)]]
    assert all(i.rank != 3 for i in engine_verdict(odd))


def test_two_rank_columns_are_no_rank_column() -> None:
    lines = ["rank,rank,step,loss", "0,1,1,1.2", "1,0,1,nan"]
    assert all(i.rank is None for i in engine_verdict(lines))


def test_a_rank_tag_glued_to_its_number_is_the_messages_rank() -> None:
    lines = [f"INFO rank0 step{s}: loss 1.3 scale 4096 skipped 0/{s} (0%)" for s in range(5, 25, 5)]
    lines += ["INFO rank1 step25: loss nan"]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("nonfinite_loss", 1)


def test_the_ranks_own_grad_norm_beside_the_reduced_one_names_it() -> None:
    lines = []
    for step in range(1, 31):
        lines += [f"2026-12-06 09:12:36.{step:03d} | INFO | rank={r} | step {step} loss 1.3 local_grad_norm 0.6"
                  for r in range(4)]
    for step in range(31, 37):
        lines += [f"2026-12-06 09:12:37.{step:03d} | INFO | rank={r} | step {step} loss 1.2 local_grad_norm "
                  + ("inf" if r == 3 else "0.6") for r in range(4)]
        lines.append(f"2026-12-06 09:12:37.{step:03d} | WARNING | rank=0 | global grad_norm=inf at step {step}; "
                     "skipping optimizer step")
    lines += ["[rank0]:     raise RuntimeError(f\"Non-finite gradient norm for {skipped} consecutive steps\")",
              "[rank0]: RuntimeError: Non-finite gradient norm for 6 consecutive steps (last step 36)"]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank, top.step) == ("nonfinite_loss", 3, 31)


def test_early_stopping_on_a_non_finite_monitored_metric_names_no_rank() -> None:
    lines = ["[rank: 1] Monitored metric val_loss = nan is not finite. Previous best value was 0.290. Signaling Trainer to stop.",
             "[rank: 0] Monitored metric val_loss = nan is not finite. Previous best value was 0.290. Signaling Trainer to stop."]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("nonfinite_loss", None)


def _cadenced(spike_on_one: bool) -> list[str]:
    lines = []
    for step in range(1, 50):
        v0 = 1.3 if step < 36 else 10.0 * (step - 34)
        lines.append(f"INFO     [rank 0] step {step:3d} loss={v0:.4f} grad_norm=0.5")
        if step % 10 == 0:
            v1 = 1.3 if step < 36 or spike_on_one else 9.0 * (step - 34)
            lines.append(f"INFO     [rank 1] step {step:3d} loss={v1:.4f} grad_norm=0.5")
    return lines


def test_a_spike_every_logging_rank_shows_names_no_rank() -> None:
    top = engine_verdict(_cadenced(spike_on_one=False))[0]
    assert (top.failure, top.rank) == ("loss_spike", None)


def test_a_spike_on_one_rank_while_another_stays_calm_names_it() -> None:
    top = engine_verdict(_cadenced(spike_on_one=True))[0]
    assert (top.failure, top.rank) == ("loss_spike", 0)


def _csv_rows(rows: list[tuple[int, int, float]]) -> list[str]:
    return ["rank,step,loss,running_loss,lr"] + [f"{r},{s},{v:.5f},{v:.5f},0.02" for r, s, v in rows]


def test_a_rank_that_logged_an_ordinary_loss_after_the_first_spike_shows_it_came_first() -> None:
    # per-rank CSV rows (corpus holdout25 g25-011): rank 2 spikes at step 47; rank 0 logs an
    # ordinary loss at 47 and spikes at 48; rank 1's row at 47 was lost to interleaved output
    rows = [(r, s, 1.2 - s / 100 + r / 50) for s in range(3, 46, 3) for r in range(3)]
    rows += [(2, 47, 297110.1), (0, 47, 0.288), (2, 48, 275113.0), (0, 48, 1767.2), (1, 48, 1158.8)]
    rows += [(r, s, 2.0e5 + r) for s in (49, 51) for r in range(3)]
    top = engine_verdict(_csv_rows(rows))[0]
    assert (top.failure, top.rank) == ("loss_spike", 2)
    # no rank shows an ordinary loss between: every rank that could show it spiked at once
    rows = [row for row in rows if row[:2] != (0, 47)]
    top = engine_verdict(_csv_rows(rows))[0]
    assert (top.failure, top.rank) == ("loss_spike", None)
