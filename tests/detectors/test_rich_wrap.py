"""rich's RichHandler wraps a long message at the console's width (80 columns when its output is a
pipe or a file): the record's first line holds the time, level, the start of the message and its
source column (``train.py:16``); the rest of the message follows on lines indented to the message
column, with nothing on their left. Such a line is the record's: it takes the record's rank.

Source of the shape: a CPU torchrun job logging through RichHandler (corpus holdout24 g24c-017,
``[r2] init_process_group backend=gloo rank=2`` then ``world_size=3 master=localhost:37333``), the
layout of rich's ``LogRender`` (time column, level column, message, source path)."""

from __future__ import annotations

from detectors.model import EventKind
from detectors.parse import default_parser
from detectors.parsers.base import FileState
from tests.helpers import engine_verdict


def _record(r: int, world: int) -> list[str]:
    return [f"[02:19:17] INFO     [r{r}] init_process_group backend=gloo rank={r}      train.py:16",
            f"                    world_size={world} master=localhost:37333                         "]


def test_a_wrapped_records_continuation_takes_its_rank() -> None:
    fs = FileState("console.log")
    parser = default_parser()
    lines = [*_record(0, 4), *_record(1, 4)]
    events = [ev for i, line in enumerate(lines, 1) for ev in parser.parse_line(line, i, fs)]
    claims = [(ev.rank, ev.data["value"]) for ev in events if ev.kind is EventKind.CONTEXT and ev.data.get("key") == "world_size"]
    assert claims == [(0, 4), (1, 4)]


def test_the_rank_given_another_world_size_is_found_through_the_wrap() -> None:
    timeout = ("[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] "
               "Timed out waiting 30000ms for recv operation to complete")
    lines = [*_record(0, 4), *_record(1, 4), *_record(3, 4), *_record(2, 3), timeout]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("nccl_error", 2)


def test_an_indented_line_after_no_rich_record_takes_no_rank() -> None:
    fs = FileState("console.log")
    parser = default_parser()
    events = parser.parse_line("[rank1]: step 3 loss 0.5", 1, fs) + parser.parse_line(
        "                    world_size=4 master=localhost:37333", 2, fs)
    assert [ev.rank for ev in events if ev.kind is EventKind.CONTEXT] == [None]
