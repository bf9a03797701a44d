"""The live engine turns a stack verdict into the stall's rank_hang incident (time stepped,
verdicts from recorded py-spy dumps of real stuck jobs)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from detectors.events import Event, EventKind, Source
from detectors.stacks import RankStack, compare, main_frames, parse_dump
from monitor.live import LiveEngine
from monitor.stacks import Sample, StackSummary, summary

FIXTURES = Path(__file__).parents[1] / "detectors" / "fixtures" / "stacks"


def stacks(scenario: str) -> list[RankStack]:
    return [RankStack(r, main_frames(parse_dump((FIXTURES / scenario / f"rank_{r}.txt").read_text())))
            for r in range(4)]


def stalled_engine() -> tuple[LiveEngine, float]:
    eng = LiveEngine("j", stall_factor=5, stall_floor=10)
    t = 1000.0
    for s in range(1, 4):
        for r in range(4):
            eng.feed([Event(EventKind.SAMPLE, Source(f"rank{r}.log", s, f"step {s}"), rank=r, step=s,
                            data={"loss": 1.0, "scope": "local"})], t)
        t += 1.0
    return eng, t + 11.0


def test_no_stall_no_suspicion() -> None:
    eng, t = stalled_engine()
    eng.evaluate(t - 5.0)
    assert eng.stall_step is None


def test_stack_verdict_names_the_rank_in_the_stall_incident() -> None:
    eng, t = stalled_engine()
    [c] = eng.evaluate(t)
    assert (c.kind, c.incident["initiator"]["rank"], eng.stall_step) == ("open", None, 3)
    eng.set_stacks(3, compare(stacks("queue")), 4)
    [c] = eng.evaluate(t + 1)
    inc = c.incident
    assert (c.kind, inc["id"], inc["initiator"]["rank"], inc["initiator"]["step"]) == ("update", inc["id"], 2, 3)
    assert [e["text"] for e in inc["initiator"]["evidence"][:3]] == [
        "threading.py:327 Condition.wait", "queue.py:171 Queue.get", "stuck.py:56 Prefetcher.__next__"]
    assert inc["initiator"]["evidence"][0]["path"] == "py-spy dump of rank 2"
    assert inc["stacks"]["outlier"] == 2 and inc["stacks"]["waiting"] == [0, 1, 3]
    assert inc["root_cause"][1].startswith("Live stacks (py-spy): rank 2 is blocked in queue (queue.get)")
    assert eng.report()["incidents"][0]["stacks"]["outlier"] == 2  # /api/incidents


def test_verdict_of_another_stall_is_not_applied() -> None:
    eng, t = stalled_engine()
    eng.set_stacks(2, compare(stacks("queue")), 4)  # sampled during an earlier stall
    [c] = eng.evaluate(t)
    assert c.incident["initiator"]["rank"] is None and "stacks" not in c.incident


def test_slow_job_keeps_rank_null_and_says_why() -> None:
    eng, t = stalled_engine()
    eng.evaluate(t)
    eng.set_stacks(3, compare(stacks("slow")), 4)
    [c] = eng.evaluate(t + 1)
    assert c.incident["initiator"]["rank"] is None
    assert c.incident["stacks"]["outlier"] is None
    assert any("every sampled rank is in the same frames" in x for x in c.incident["root_cause"])


def test_node_summaries_compare_across_nodes_like_one_node() -> None:
    """What the aggregator does: each node's reduced stacks, validated, then compared together."""
    all_ranks = stacks("extra_collective")
    a = summary("j", "node-a", 3, Sample(all_ranks[:2], Counter(), [], None, None, 0.1))
    b = summary("j", "node-b", 3, Sample(all_ranks[2:], Counter(), [], None, None, 0.1))
    back = [StackSummary.model_validate_json(x.dump()) for x in (a, b)]
    v = compare([rs for s in back for rs in s.stacks()])
    assert v.outlier == 2 and v.outlier_place is not None and v.outlier_place.name == "barrier"
    assert v.outlier == compare(all_ranks).outlier
    assert len(a.dump()) < 2000  # small payload


def test_checkpointed_engine_keeps_the_stack_verdict() -> None:
    import pickle

    eng, t = stalled_engine()
    eng.evaluate(t)
    eng.set_stacks(3, compare(stacks("lock")), 4)
    back = pickle.loads(pickle.dumps(eng))  # what monitor/checkpoint.py stores
    assert back.stacks is not None and back.stacks[1].outlier == 2
    [c] = back.evaluate(t + 1)
    assert c.incident["initiator"]["rank"] == 2


def test_after_the_timeouts_the_stacks_stay_evidence_of_the_log_verdict() -> None:
    """The golden hang case (rank 1 hung; peers time out): a stack verdict taken on the
    first timeout line is added to the log-based incident when it agrees, never when not."""
    from monitor.diagnose import diagnose_paths

    golden = Path(__file__).parents[1] / "e2e" / "golden" / "hang-perrank" / "logs"
    q = stacks("queue")  # fixture rank 2 is the blocked one: relabel it as rank 1
    agree = compare([RankStack(0, q[0].frames), RankStack(1, q[2].frames), RankStack(2, q[1].frames),
                     RankStack(3, q[3].frames)])
    for verdict, expect in ((agree, True), (compare(q), False)):
        eng = LiveEngine("j")
        eng.state = diagnose_paths([str(golden)]).state
        last = max(rs.last_step for rs in eng.state.ranks.values() if rs.last_step is not None)
        eng.set_stacks(last, verdict, 4)
        inc = eng.current(0.0)[0]
        assert (inc.failure, inc.rank) == ("rank_hang", 1)
        assert ("stacks" in inc.data) is expect
        if expect:
            assert inc.evidence[0].path == "py-spy dump of rank 1"
            assert any(x.startswith("Live stacks (py-spy): rank 1 ") for x in inc.narrative)
