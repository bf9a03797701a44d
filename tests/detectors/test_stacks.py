"""detectors/stacks.py on recorded ``py-spy dump`` outputs of real stuck torchrun jobs
(tests/detectors/fixtures/stacks/, recorded by ``python -m tests.e2e.record_stacks``).

The expectations come from how each fault was injected (tests/e2e/scenarios/stuck.py:
rank 2 blocks at step 4), never from running the code under test."""

from __future__ import annotations

from pathlib import Path

import pytest

from detectors.stacks import (
    Frame,
    RankStack,
    StackParseError,
    Where,
    classify,
    compare,
    main_frames,
    parse_dump,
)

FIXTURES = Path(__file__).parent / "fixtures" / "stacks"


def ranks(scenario: str) -> list[RankStack]:
    out = []
    for p in sorted((FIXTURES / scenario).glob("rank_*.txt")):
        dump = parse_dump(p.read_text())
        out.append(RankStack(int(p.stem.split("_")[1]), main_frames(dump), dump.pid))
    assert len(out) == 4
    return out


def test_parse_dump_reads_threads_and_frames_innermost_first() -> None:
    dump = parse_dump((FIXTURES / "queue" / "rank_2.txt").read_text())
    assert [t.name for t in dump.threads] == ["MainThread", "prefetch"]
    assert dump.threads[0].tid == dump.pid and dump.threads[0].state == "idle"
    assert main_frames(dump)[:4] == (
        Frame("Condition.wait", "threading.py", 327),
        Frame("Queue.get", "queue.py", 171),
        Frame("Prefetcher.__next__", "stuck.py", 56),
        Frame("main", "stuck.py", 95),
    )
    assert main_frames(dump)[0].text() == "threading.py:327 Condition.wait"


def test_parse_dump_rejects_other_text() -> None:
    with pytest.raises(StackParseError):
        parse_dump("Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n")
    with pytest.raises(StackParseError):
        parse_dump("")


def test_parse_dump_skips_locals_and_hex_thread_ids() -> None:
    text = ("Process 7: python x.py\nPython v3.11.7 (/usr/bin/python3)\n\n"
            "Thread 0x7F00 (active+gil): \"MainThread\"\n    <lambda> (x.py:3)\n        Arguments:\n"
            "            a: 1\n    main (x.py:9)\n")
    dump = parse_dump(text)
    assert dump.threads[0].tid == 0x7F00 and dump.threads[0].state == "active+gil"
    assert main_frames(dump) == (Frame("<lambda>", "x.py", 3), Frame("main", "x.py", 9))


def test_healthy_ranks_wait_in_the_gradient_all_reduce() -> None:
    place = classify(ranks("queue")[0].frames)
    assert place.kind is Where.COLLECTIVE
    assert place.name == "backward (gradient all-reduce)"
    assert place.anchor == Frame("main", "stuck.py", 104)


def test_queue_outlier_is_named_with_its_frames() -> None:
    v = compare(ranks("queue"))
    assert v.outlier == 2
    assert v.waiting == (0, 1, 3)
    assert v.collective == "backward (gradient all-reduce)"
    assert v.outlier_place is not None and v.outlier_place.kind is Where.QUEUE
    assert v.evidence() == ["threading.py:327 Condition.wait", "queue.py:171 Queue.get",
                            "stuck.py:56 Prefetcher.__next__"]
    assert v.groups[0].ranks == (2,) and v.groups[1].ranks == (0, 1, 3)


def test_lock_outlier_is_its_own_line() -> None:
    # threading.Lock.acquire is C: py-spy shows the user line that called it
    v = compare(ranks("lock"))
    assert v.outlier == 2
    assert v.outlier_place is not None and v.outlier_place.kind is Where.CODE
    assert v.evidence() == ["stuck.py:98 main"]
    assert "rank 2 is blocked in its own code at stuck.py:98 main" in v.reason


def test_extra_collective_outlier_waits_in_a_collective_the_others_never_entered() -> None:
    v = compare(ranks("extra_collective"))
    assert v.outlier == 2
    assert v.outlier_place is not None and v.outlier_place.kind is Where.COLLECTIVE
    assert v.outlier_place.name == "barrier"
    assert v.evidence()[0] == "torch/distributed/distributed_c10d.py:5356 barrier"
    assert "different collective (barrier)" in v.reason


def test_slow_job_with_every_rank_in_the_same_frames_has_no_outlier() -> None:
    v = compare(ranks("slow"))
    assert v.outlier is None
    assert "same frames" in v.reason
    assert len(v.groups) == 1 and v.groups[0].ranks == (0, 1, 2, 3)


def test_two_ranks_elsewhere_is_no_verdict() -> None:
    queue, lock = ranks("queue"), ranks("lock")
    mixed = [queue[0], queue[1], queue[2], RankStack(3, lock[2].frames)]
    v = compare(mixed)
    assert v.outlier is None and v.waiting == (0, 1) and "2, 3" in v.reason


def test_no_rank_in_a_collective_is_no_verdict() -> None:
    queue, lock = ranks("queue"), ranks("lock")
    v = compare([queue[2], RankStack(1, lock[2].frames)])
    assert v.outlier is None and v.reason == "no rank waits in a collective"


def test_verdict_does_not_depend_on_input_order_or_on_a_missing_healthy_rank() -> None:
    rs = ranks("queue")
    assert compare(list(reversed(rs))).outlier == 2
    v = compare([r for r in rs if r.rank != 3], unsampled=[3])
    assert v.outlier == 2 and v.unsampled == (3,)
    assert compare([]).outlier is None
