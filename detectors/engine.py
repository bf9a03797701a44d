"""The one engine: parse → detect → correlate, as a single pure object.

``rankwatch diagnose`` and the live daemon drive the same ``Engine``: offline is the
tailer read to the end (every file fed chunk by chunk, then ``verdict()``), live feeds
chunks as they arrive and asks for the verdict whenever it likes. The engine does no I/O,
holds no clock (callers pass ``now``) and reading the verdict never changes its state.

What each kind of file means is decided here for both paths: ``open_file`` notes that a
rank's log exists (a silent rank still took part: the hang analysis looks for it), ``feed``
takes a log's lines, ``feed_error_json`` a torchrun ``error.json`` (``detectors.filekind``);
files that are not text are never fed (``filekind.classify`` tells the callers which).
"""

from __future__ import annotations

from typing import Any

from detectors.catalog import Catalog
from detectors.correlate import incidents
from detectors.detect import MAX_RANKS, JobState
from detectors.diagnosis import build_report
from detectors.filekind import error_json_events
from detectors.model import Event, Incident
from detectors.parse import LogParser, default_parser
from detectors.parsers.base import FileState, JobParseState

__all__ = ["Engine"]


class Engine:
    def __init__(self, job: str = "job", *, parser: LogParser | None = None, catalog: Catalog | None = None,
                 max_ranks: int = MAX_RANKS) -> None:
        self.parser = parser or default_parser()
        self.state = JobState(job=job, catalog=catalog or self.parser.catalog, max_ranks=max_ranks)
        self.job_parse = JobParseState()  # what ties files together (NCCL host:pid → rank, trusted size)

    def open_file(self, path: str, *, rank: int | None = None, local_rank: int | None = None,
                  attempt: int | None = None, year: int = 1970) -> FileState:
        """The parse state of one log file of this job (what its path says about ranks)."""
        self.state.note_file(rank, local_rank)
        return FileState(path, rank=rank, local_rank=local_rank, attempt=attempt, year=year, job=self.job_parse)

    def parse(self, buf: bytes, first_lineno: int, file: FileState) -> list[Event]:
        """Complete lines of one file → events, not folded yet (the live tailer parses off the
        event loop and the loop folds them with ``add``; ``feed`` is both at once)."""
        return self.parser.parse_chunk(buf, first_lineno, file)

    def feed(self, buf: bytes, first_lineno: int, file: FileState, now: float | None = None) -> list[Event]:
        """Complete lines of one file → events, folded into the state; returns the events."""
        events = self.parse(buf, first_lineno, file)
        for ev in events:
            self.state.add(ev, now)
        return events

    def feed_counted(self, buf: bytes, first_lineno: int, file: FileState, now: float | None = None) -> int:
        """``feed``, returning the number of lines of ``buf`` instead of the events (the parse
        counts them: ``LogParser.parse_chunk_counted``)."""
        events, lines = self.parser.parse_chunk_counted(buf, first_lineno, file)
        for ev in events:
            self.state.add(ev, now)
        return lines

    def feed_error_json(self, raw: bytes, file: FileState, now: float | None = None) -> list[Event] | None:
        """A torchrun ``error.json`` (its whole content) → the rank's exception, folded in;
        None when ``raw`` is not a complete ``error.json`` (nothing is folded)."""
        events = error_json_events(self.parser, raw, file)
        if events is not None:
            self.add(events, now)
        return events

    def add(self, events: list[Event], now: float | None = None) -> None:
        """Events parsed elsewhere (a worker process, another node over MQTT)."""
        for ev in events:
            self.state.add(ev, now)

    # a snapshot (the daemon's checkpoint) holds the state, not the compiled parser
    def __getstate__(self) -> dict[str, Any]:
        return {"state": self.state, "job_parse": self.job_parse}

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.parser = default_parser()
        self.state = d["state"]
        self.job_parse = d["job_parse"]

    def verdict(self) -> list[Incident]:
        """The incidents for what was seen so far (pure: call it as often as you like)."""
        return incidents(self.state)

    def report(self, files: int = 0, notes: list[str] | None = None, ended: bool = False) -> dict[str, Any]:
        """The JSON report of DESIGN.md's contract. ``ended``: the input is complete (``diagnose``
        read every file to its end), so where the logs stop is evidence too."""
        return build_report(self.state, files=files, notes=notes, ended=ended)
