"""Offline diagnosis: read a finished job's files through the same engine as the daemon."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from detectors.detect import JobState
from detectors.diagnosis import build_report
from detectors.events import EventKind
from detectors.parse import LogParser, default_parser
from detectors.parsers.base import FileState, JobParseState
from monitor.inputs import InputError, LogFile, discover
from monitor.reader import ChunkReader

__all__ = ["DiagnoseResult", "diagnose_paths", "diagnose_stream"]

CHUNK = 8 << 20


@dataclass
class DiagnoseResult:
    report: dict[str, Any]
    files: list[LogFile] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    bytes_read: int = 0
    lines: int = 0
    state: JobState | None = None  # the detect stage's state (the HTML report's timeline reads it)


def _year(path: Path) -> int:
    try:
        return time.gmtime(path.stat().st_mtime).tm_year
    except OSError:
        return time.gmtime().tm_year


def _read_error_json(lf: LogFile, parser: LogParser, fstate: FileState, state: JobState) -> None:
    try:
        doc = json.loads(lf.path.read_text(encoding="utf-8", errors="replace"))
        msg = doc["message"]
        text = msg["message"] if isinstance(msg, dict) else str(msg)
    except (ValueError, KeyError, TypeError, OSError):
        return
    for ev in parser.parse_line(text.splitlines()[0] if text else "", 1, fstate):
        if ev.kind is EventKind.MATCH:
            state.add(ev)


def feed_stream(fh: Any, parser: LogParser, fstate: FileState, state: JobState,
                notes: list[str] | None = None) -> tuple[int, int]:
    """Feed one stream; a line cut at the length cap is said in ``notes`` (its tail is not read)."""
    reader = ChunkReader()
    nbytes = 0
    while True:
        data = fh.read(CHUNK)
        if not data:
            break
        nbytes += len(data)
        buf, first = reader.feed(data)
        if buf:
            for ev in parser.parse_chunk(buf, first, fstate):
                state.add(ev)
    buf, first = reader.flush()
    if buf:
        for ev in parser.parse_chunk(buf, first, fstate):
            state.add(ev)
    if reader.truncated_lines and notes is not None:
        notes.append(f"{fstate.path}: {reader.truncated_lines} line(s) longer than {reader.max_line} bytes were cut; "
                     f"{reader.dropped_bytes} byte(s) of their tails were not read")
    return nbytes, reader.lines_done


def diagnose_paths(paths: list[str], job: str | None = None, engine: str | None = None,
                   baseline: list[str] | None = None, expect_speedup: float | None = None) -> DiagnoseResult:
    """Diagnose ``paths``; with ``baseline`` (another run of the same job, e.g. in fp32) the seed
    symptoms (speed-up, accuracy, memory, early loss) are also judged against that run."""
    base = _baseline(baseline, engine) if baseline else None
    files, notes = discover(paths)
    parser = default_parser(engine)
    name = job or (Path(paths[0]).resolve().name if paths else "job")
    state = JobState(job=name)
    jps = JobParseState()
    result = DiagnoseResult(report={}, files=files, notes=notes)
    # error.json files last: the per-rank logs already carry the same exception text
    for lf in sorted(files, key=lambda f: f.kind == "error_json"):
        fstate = FileState(path=lf.display, rank=lf.rank, local_rank=lf.local_rank, attempt=lf.attempt,
                           year=_year(lf.path), job=jps)
        state.note_file(lf.rank, lf.local_rank)
        if lf.kind == "error_json":
            _read_error_json(lf, parser, fstate, state)
            continue
        try:
            with lf.path.open("rb") as fh:
                n, lines = feed_stream(fh, parser, fstate, state, notes)
        except OSError as exc:
            notes.append(f"could not read {lf.display}: {exc.strerror or exc}")
            continue
        result.bytes_read += n
        result.lines += lines
        if n == 0:
            notes.append(f"{lf.display} is empty")
    _compare(state, notes, base, baseline, expect_speedup)
    result.report = build_report(state, files=len(files), notes=notes)
    result.state = state
    return result


def _baseline(paths: list[str], engine: str | None) -> DiagnoseResult:
    try:
        base = diagnose_paths(paths, job="baseline", engine=engine)
    except InputError as exc:
        raise InputError(f"--baseline: {exc}") from None
    if not base.files:
        raise InputError(f"--baseline: no readable log files in {', '.join(paths)}")
    return base


def _compare(state: JobState, notes: list[str], base: DiagnoseResult | None, paths: list[str] | None,
             expect_speedup: float | None) -> None:
    """Hand the baseline's state to the symptom detectors (and say so in the report's notes)."""
    if base is not None and base.state is not None:
        ctx = base.state.context()
        notes.append(f"baseline: {', '.join(paths or [])} ({len(base.files)} file(s), precision "
                     f"{ctx.get('precision') or 'unknown'}, gpu {ctx.get('gpu') or 'unknown'})")
    elif expect_speedup is not None:
        notes.append("--expect-speedup is compared with a baseline run's throughput: give one with --baseline")
    state.symptoms.configure(baseline=base.state if base is not None else None, expect_speedup=expect_speedup)


def diagnose_stream(fh: Any, name: str = "stdin", job: str | None = None,
                    baseline: list[str] | None = None, expect_speedup: float | None = None) -> DiagnoseResult:
    base = _baseline(baseline, None) if baseline else None
    parser = default_parser()
    state = JobState(job=job or name)
    fstate = FileState(path=name, year=time.gmtime().tm_year)
    notes: list[str] = []
    n, lines = feed_stream(fh, parser, fstate, state, notes)
    _compare(state, notes, base, baseline, expect_speedup)
    return DiagnoseResult(report=build_report(state, files=1, notes=notes), notes=notes, bytes_read=n, lines=lines,
                          state=state)
