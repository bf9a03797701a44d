"""The job-wide sample budget: up to 1024 ranks every rank keeps its last 256 metric samples; a
larger job keeps fewer per rank (halving, never under 64), so a 4096-rank job that logs metrics on
every rank holds a bounded state instead of growing with the run."""

from __future__ import annotations

from detectors.detect import MIN_WINDOW, SAMPLE_BUDGET, WINDOW, JobState
from detectors.model import Event, EventKind, Source


def _sample(rank: int, step: int) -> Event:
    return Event(EventKind.SAMPLE, Source(f"rank{rank}.log", step, f"step {step} | loss 2.0"), rank=rank, step=step,
                 data={"loss": 2.0 + 1.0 / step})


def _fed(ranks: int, steps: int) -> JobState:
    st = JobState("t")
    for step in range(1, steps + 1):
        for r in range(ranks):
            st.add(_sample(r, step))
    return st


def test_up_to_1024_ranks_every_rank_keeps_the_full_window() -> None:
    st = _fed(1024, WINDOW + 10)
    assert st.window == WINDOW
    assert {len(rs.samples) for rs in st.ranks.values()} == {WINDOW}


def test_a_larger_job_keeps_fewer_samples_per_rank_within_the_budget() -> None:
    st = _fed(4096, 70)
    assert st.window == MIN_WINDOW == SAMPLE_BUDGET // 4096
    kept = [rs.samples for rs in st.ranks.values()]
    assert sum(len(s) for s in kept) <= SAMPLE_BUDGET
    # each rank keeps its latest samples, in order
    assert [r.step for r in kept[0]] == list(range(70 - MIN_WINDOW + 1, 71))
    # a rank that appears later gets the same window
    assert st.rank_state(("g", 5000)).samples.maxlen == MIN_WINDOW


def test_the_window_survives_a_checkpoint() -> None:
    from monitor import snapshot

    st = _fed(2048, 10)
    back = snapshot.load(snapshot.dump(st))
    assert back.window == st.window == 128
    assert next(iter(back.ranks.values())).samples.maxlen == 128
