"""A reporter's caption over a pasted dump (parsers/captions.py): ``The stack for rank0:`` above a
py-spy dump names the rank whose stack it is; py-spy prints none itself."""

from __future__ import annotations

import pytest

from detectors.diagnosis import build_report
from detectors.engine import Engine
from tests.helpers import engine_verdict, fed_state

# pytorch/pytorch#87995 (the same report as facebookresearch/fairseq#4816; corpus holdout16
# h16a-016): rank 0 of a 32-rank fairseq job idle in its data iterator while the job froze
_DUMP = ['Thread 0x7FA6E7C01740 (idle): "MainThread"',
         "    wait (threading.py:302)",
         "    get (queue.py:170)",
         "    __next__ (fairseq/data/iterators.py:648)",
         "    __iter__ (fairseq/data/iterators.py:59)",
         "    train (fairseq_cli/train.py:274)",
         "    main (fairseq_cli/train.py:165)"]


@pytest.mark.parametrize(("caption", "rank"), [("The stack for rank0:", 0), ("rank 3 stack:", 3),
                                               ("py-spy dump of rank 1:", 1), ("Rank 2:", 2)])
def test_a_py_spy_dump_under_a_caption_is_that_ranks(caption: str, rank: int) -> None:
    top = engine_verdict([caption, *_DUMP])[0]
    assert (top.failure, top.rank, top.data.get("rank_from")) == ("rank_hang", rank, "block")


def _event_ranks(lines: list[str]) -> dict[int, int | None]:
    engine = Engine("t")
    events = engine.feed("".join(f"{line}\n" for line in lines).encode(), 1, engine.open_file("console.log"))
    return {ev.source.line: ev.rank for ev in events}


def test_the_caption_holds_for_the_paste_not_for_the_jobs_own_timed_lines() -> None:
    lines = ["The stack for rank0:", *_DUMP,
             "2022-10-28 10:02:11 | ERROR | fairseq.trainer | RuntimeError: CUDA error: an illegal memory access was encountered"]
    ranks = _event_ranks(lines)
    assert ranks[2] == 0  # the dump's header line
    assert ranks[len(lines)] is None  # the job's own timed record below the paste names no rank


def test_a_dump_with_no_rank_and_no_peer_timeout_is_told_as_such() -> None:
    # (no caption: the report names no rank and no peers that waited, rather than "Rank None ...
    # while ranks  timed out")
    rep = build_report(fed_state(_DUMP, "console.log", None))
    top = rep["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"]) == ("rank_hang", None)
    assert top["root_cause"][0].startswith("A process of the job stopped making progress: ")
