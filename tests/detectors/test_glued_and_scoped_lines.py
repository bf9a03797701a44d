"""Two shapes of metric lines from multi-process jobs.

1. Two processes' lines glued into one, with no newline between two writes to one pipe:
   ``rank=0 step=5 loss=6.2964rank=1 step=5 loss=6.2964`` (a torch.multiprocessing.spawn job
   printing from every process, corpus holdout19 g19b-002). Each is its own line, or rank 1's
   step 5 is lost and rank 1 looks behind the others.
2. A rank's own loss beside its all-reduce (``local_loss 0.07504 | global_loss nan``, corpus
   holdout19 g19b-001): the local one is the rank's loss, not one term of a sum.
"""

from __future__ import annotations

from detectors.model import EventKind
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
