"""A rank absent from the watchdog's timeout reports is the one the reporters wait for only when
they all wait in the same collective. Reports naming different collectives (rank 0 in an
ALLGATHER, ranks 2 and 3 in a BROADCAST) mean the ranks took different code paths: the absent
rank is not known to hold them all. Lines of DeepGraphLearning/GearNet#13 (corpus holdout13
h13b-029); the same-collective variant is constructed from them."""

from __future__ import annotations

from functools import partial

from tests.helpers import top_verdict


def _line(n: int, rank: int, op: str) -> str:
    return (f"[{n}] [E ProcessGroupNCCL.cpp:587] [Rank {rank}] Watchdog caught collective operation timeout: "
            f"WorkNCCL(OpType={op}, Timeout(ms)=1800000) ran for 1804901 milliseconds before timing out.")


_top = partial(top_verdict, path="log.txt")


def test_reports_in_different_collectives_name_no_absent_rank() -> None:
    lines = [_line(219013, 0, "_ALLGATHER_BASE"), _line(219014, 3, "BROADCAST"), _line(219015, 2, "BROADCAST")]
    assert _top(lines) == ("collective_timeout", None)


def test_reports_in_one_collective_name_the_absent_rank() -> None:
    lines = [_line(219013, 0, "BROADCAST"), _line(219014, 3, "BROADCAST"), _line(219015, 2, "BROADCAST")]
    assert _top(lines) == ("rank_hang", 1)
