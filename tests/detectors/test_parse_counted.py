"""``LogParser.parse_chunk_counted``: the events of ``parse_chunk`` and the chunk's line count,
taken from the candidate loop's newline counting (diagnose reads each byte once to count lines)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from detectors.parse import default_parser
from detectors.parsers.base import FileState
from detectors.shapes import same_events


def _both(buf: bytes) -> None:
    parser = default_parser()
    events, lines = parser.parse_chunk_counted(buf, 7, FileState("x.log"))
    assert lines == buf.count(b"\n")
    assert same_events(events, parser.parse_chunk(buf, 7, FileState("x.log")))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from([
    "step 3 | loss 1.25 | grad_norm 0.5", "NCCL INFO x", "\x1b[32mINFO\x1b[0m loss=nan", "^[[31mtorch.OutOfMemoryError: CUDA out of memory",
    "[2024-01-02 03:04:05,678] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=0", "", "noise", "\r 5%|#| 1/20",
    "ValueError: boom", "é\xff",
]), max_size=40))
def test_counted_lines_and_events_on_random_logs(parts: list[str]) -> None:
    _both(("\n".join(parts) + "\n").encode("utf-8", "surrogateescape"))


def test_counted_lines_and_events_on_real_logs(real_logs: Path) -> None:
    cases = [c / "combined.log" for c in sorted(real_logs.iterdir()) if (c / "combined.log").exists()]
    assert cases
    for log in cases:
        buf = log.read_bytes()
        _both(buf if buf.endswith(b"\n") else buf + b"\n")


def test_a_chunk_without_candidates_is_counted() -> None:
    _both(b"plain\nnoise\n" * 50)
    _both(b"")
