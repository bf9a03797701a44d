"""Two shapes of metric lines from multi-process jobs.

1. Two processes' lines glued into one, with no newline between two writes to one pipe:
   ``rank=0 step=5 loss=6.2964rank=1 step=5 loss=6.2964`` (a torch.multiprocessing.spawn job
   printing from every process, corpus holdout19 g19b-002). Each is its own line, or rank 1's
   step 5 is lost and rank 1 looks behind the others. A logger that puts a bracketed time stamp
   before the rank tag glues the same way (``... lr 0.01[2026-12-07 23:23:33][rank3] step 30``,
   corpus holdout31 g31e-006): each rank's last own note is then its own, not a mix of two.
2. A rank's own loss beside its all-reduce (``local_loss 0.07504 | global_loss nan``, corpus
   holdout19 g19b-001): the local one is the rank's loss, not one term of a sum.
"""

from __future__ import annotations

import pytest

from detectors.model import EventKind
from detectors.oddrank import last_own_lines
from tests.helpers import engine_events, engine_verdict


def _samples(lines: list[str]) -> list[tuple[int | None, int | None, float]]:
    """(rank, or local rank where only that is known; step; loss) of each metric line read."""
    events = engine_events(lines)
    return [(e.rank if e.rank is not None else e.local_rank, e.step, round(e.data["loss"], 5))
            for e in events if e.kind is EventKind.SAMPLE]


def test_a_line_glued_to_another_ranks_line_is_two_lines() -> None:
    assert _samples(["rank=0 step=5 loss=6.2964rank=1 step=5 loss=6.2965"]) == [(0, 5, 6.2964), (1, 5, 6.2965)]


def test_a_spaced_rank_column_glued_after_a_value_starts_a_line() -> None:
    # "rank N | epoch E | train loss X" printed by four torchrun workers (corpus holdout22 g22-023): rank
    # 3's first NaN is glued to rank 0's finite loss of the same epoch
    lines = ["rank 0 | epoch 1 | train loss 3.8123rank 3 | epoch 1 | train loss nan",
             "rank 2 | epoch 1 | train loss 4.0456", "rank 1 | epoch 1 | train loss 3.4548",
             "rank 0 | epoch 2 | train loss nan", "rank 2 | epoch 2 | train loss nan"]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("nonfinite_loss", 3)


def test_a_launcher_tag_glued_after_a_value_starts_a_line() -> None:
    assert _samples(["[default0]:step 5 loss 0.51[default1]:step 5 loss 0.52"]) == [(0, 5, 0.51), (1, 5, 0.52)]


@pytest.mark.parametrize("stamp", ["[2026-12-07 23:23:33]", "[2026-12-07T23:23:33.125]", "[2026-12-07 23:23:33,125] "])
def test_a_timed_record_glued_after_a_value_starts_a_line(stamp: str) -> None:
    line = f"{stamp}[rank0] step 30/200 | loss 1.0856 | lr 0.01{stamp}[rank3] step 30/200 | loss 0.7924 | lr 0.01"
    assert _samples([line]) == [(0, 30, 1.0856), (3, 30, 0.7924)]


def test_a_date_inside_a_message_splits_nothing() -> None:
    # (a time stamp after a value with no rank tag behind it: a message's own date, not a second record)
    assert _samples(["[rank0] step 30 loss 0.5 checkpoint 3[2026-12-07 23:23:33] saved"]) == [(0, 30, 0.5)]


def test_each_rank_of_a_glued_line_keeps_its_own_last_note() -> None:
    lines = ["[2026-12-07 23:23:33][rank2] step   30/200 | loss 0.8661 | lr 0.01",
             "[2026-12-07 23:23:33][rank0] step   30/200 | loss 0.8661 | lr 0.01"
             "[2026-12-07 23:23:33][rank3] step   30/200 | loss 0.8661 | lr 0.01",
             "[2026-12-07 23:23:33][rank1] step   30/200 | loss 0.8661 | lr 0.01",
             "[2026-12-07 23:23:33][rank3] loading next shard from /data/shards/part-00031.arrow"]
    notes = {key: note.body for key, note in last_own_lines(lines).items()}
    assert notes[("g", 0)] == notes[("g", 1)] == notes[("g", 2)] != notes[("g", 3)]
    assert notes[("g", 3)].startswith("loading next shard")


def test_a_rank_word_inside_a_key_splits_nothing() -> None:
    assert _samples(["step 5 loss 0.51 local_rank=1 rank_loss=0.2"])[0][1:] == (5, 0.51)


def test_the_local_loss_is_the_ranks_own_and_names_it() -> None:
    lines = [f"==> rank_{r}.log <==\n" + "\n".join(
        f"[05:13:58][rank{r}] step {s:3d} | local_loss {v} | global_loss {g} | grad_norm {n}"
        for s, v, g, n in rows) for r, rows in (
        (0, [(8, "0.23658", "0.23586", "0.8395"), (9, "0.07504", "nan", "nan"), (10, "nan", "nan", "nan")]),
        (1, [(8, "0.23514", "0.23586", "0.8395"), (9, "nan", "nan", "nan"), (10, "nan", "nan", "nan")]))]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank, top.step) == ("nonfinite_loss", 1, 9)
