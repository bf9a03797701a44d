"""Offline diagnosis: read a finished job's files through the same engine as the daemon.

Every file goes through one ``detectors.engine.Engine`` (parse → detect → correlate), the
object the live daemon drives too. With several files and ``jobs`` > 1, the files are
parsed in worker processes (``monitor.parallel``); their event streams are fed, in file
order, into the one engine, so the report is the same, byte for byte, as with ``jobs=1``.
Pasted text and small files that a terminal hard-wrapped, or that a paste cut mid-message,
are rejoined first (``detectors.unwrap``), the same way in every path.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from detectors.detect import JobState
from detectors.engine import Engine
from detectors.parse import default_parser
from detectors.parsers.base import FileState, JobParseState
from detectors.unwrap import rejoin_cut, unmark, unwrap
from monitor.inputs import InputError, LogFile, discover
from monitor.reader import ChunkReader

if TYPE_CHECKING:
    from monitor.parallel import ParallelFiles

__all__ = ["DiagnoseResult", "diagnose_files", "diagnose_paths", "diagnose_stream", "open_log"]

CHUNK = 8 << 20
PARALLEL_MIN_BYTES = 16 << 20  # below this, starting workers costs more than it saves
UNWRAP_MAX = 8 << 20  # pastes and small files are checked for a terminal's hard wrap


@dataclass
class DiagnoseResult:
    report: dict[str, Any]
    files: list[LogFile] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    bytes_read: int = 0
    lines: int = 0
    state: JobState | None = None  # the detect stage's state (the HTML report's timeline reads it)


def _year(lf: LogFile) -> int:
    if lf.data is not None:
        return time.gmtime().tm_year
    try:
        return time.gmtime(lf.path.stat().st_mtime).tm_year
    except OSError:
        return time.gmtime().tm_year


def _rejoined(data: bytes) -> bytes:
    """A paste's lines rejoined (a terminal's hard wrap, then lines cut mid-message) and freed of
    the markdown emphasis a reporter added to them."""
    ids = default_parser().fingerprint_ids
    return unmark(rejoin_cut(unwrap(data), ids), ids)


def open_log(lf: LogFile) -> IO[bytes]:
    """A log file's bytes: rejoined when small and hard-wrapped, streamed otherwise."""
    if lf.data is not None:
        return io.BytesIO(_rejoined(lf.data) if len(lf.data) <= UNWRAP_MAX else lf.data)
    with contextlib.suppress(OSError):
        if lf.path.stat().st_size <= UNWRAP_MAX:
            return io.BytesIO(_rejoined(lf.path.read_bytes()))
    return lf.path.open("rb")


def _read_error_json(lf: LogFile, engine: Engine, fstate: FileState) -> None:
    """torchrun's ``error.json``: the same ``Engine.feed_error_json`` as the live tailer's."""
    try:
        raw = lf.data if lf.data is not None else lf.path.read_bytes()
    except OSError:
        return
    engine.feed_error_json(raw, fstate)


def feed_stream(fh: Any, engine: Engine, fstate: FileState,
                progress: Callable[[int], None] | None = None, notes: list[str] | None = None) -> tuple[int, int]:
    """Feed one file to the engine; ``progress`` is told the size of each chunk read; a line
    cut at the length cap is said in ``notes`` (its tail is not read)."""
    reader = ChunkReader(count=False)  # the parse counts each chunk's lines (one pass, not two)
    nbytes = 0
    while True:
        data = fh.read(CHUNK)
        if not data:
            break
        nbytes += len(data)
        if progress is not None:
            progress(len(data))
        buf, first = reader.feed(data)
        if buf:
            reader.advance(engine.feed_counted(buf, first, fstate))
    buf, first = reader.flush()
    if buf:
        engine.feed(buf, first, fstate)
    if reader.truncated_lines and notes is not None:
        notes.append(f"{fstate.path}: {reader.truncated_lines} line(s) longer than {reader.max_line} bytes were cut; "
                     f"{reader.dropped_bytes} byte(s) of their tails were not read")
    return nbytes, reader.lines_done


def file_state(lf: LogFile, jps: JobParseState) -> FileState:
    return FileState(path=lf.display, rank=lf.rank, local_rank=lf.local_rank, attempt=lf.attempt,
                     year=_year(lf), job=jps)


def default_jobs() -> int:
    """Worker processes for ``diagnose``: the CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def diagnose_paths(paths: list[str], job: str | None = None, engine: str | None = None,
                   baseline: list[str] | None = None, expect_speedup: float | None = None,
                   jobs: int = 1) -> DiagnoseResult:
    """Diagnose ``paths``; with ``baseline`` (another run of the same job, e.g. in fp32) the seed
    symptoms (speed-up, accuracy, memory, early loss) are also judged against that run.
    ``jobs`` > 1 parses the log files in that many worker processes (when there are at least
    two files and ``PARALLEL_MIN_BYTES`` of them); the result is the same as with 1."""
    base = _baseline(baseline, engine) if baseline else None
    files, notes = discover(paths)
    name = job or (Path(paths[0]).resolve().name if paths else "job")
    return diagnose_files(files, notes, name, engine=engine, base=base, baseline=baseline,
                          expect_speedup=expect_speedup, jobs=jobs)


def diagnose_files(files: list[LogFile], notes: list[str], name: str, engine: str | None = None,
                   base: DiagnoseResult | None = None, baseline: list[str] | None = None,
                   expect_speedup: float | None = None, progress: Callable[[int], None] | None = None,
                   jobs: int = 1) -> DiagnoseResult:
    """Diagnose files already found (on disk, or in memory: ``LogFile.data``) as one job named
    ``name``; ``progress`` is told the number of bytes of each chunk as it is read."""
    eng = Engine(name, parser=default_parser(engine))
    result = DiagnoseResult(report={}, files=files, notes=notes)
    # error.json files last: the per-rank logs already carry the same exception text
    ordered = sorted(files, key=lambda f: f.kind == "error_json")
    logs = [lf for lf in ordered if lf.kind != "error_json"]
    streams = None
    if (jobs > 1 and progress is None and len(logs) > 1 and all(lf.data is None for lf in logs)
            and _total_bytes(logs) >= PARALLEL_MIN_BYTES):
        from monitor.parallel import ParallelFiles

        streams = ParallelFiles(logs, engine, eng.job_parse, min(jobs, len(logs)))
    try:
        with no_cyclic_gc():
            _read_files(ordered, eng, streams, result, notes, progress)
    except BaseException:
        if streams is not None:
            streams.close(abort=True)
        raise
    if streams is not None:
        streams.close()
    _compare(eng.state, notes, base, baseline, expect_speedup)
    result.report = eng.report(files=len(files), notes=notes, ended=True)
    result.state = eng.state
    return result


@contextlib.contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """Reading files makes millions of short-lived objects without reference cycles (events,
    samples): the cyclic collector finds nothing to free in them (22 full collections over the
    1 GB bench corpus freed no object) and took ~10 % of the CPU. Reference counting frees them
    as before; the collector is enabled again, if it was, when the files are read."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _read_files(ordered: list[LogFile], eng: Engine, streams: ParallelFiles | None, result: DiagnoseResult,
                notes: list[str], progress: Callable[[int], None] | None) -> None:
    for lf in ordered:
        fstate = eng.open_file(lf.display, rank=lf.rank, local_rank=lf.local_rank, attempt=lf.attempt, year=_year(lf))
        if lf.kind == "error_json":
            _read_error_json(lf, eng, fstate)
            continue
        try:
            if streams is not None:
                n, lines = streams.feed(lf, fstate, eng.state)
            else:
                with open_log(lf) as fh:
                    n, lines = feed_stream(fh, eng, fstate, progress, notes)
        except OSError as exc:
            notes.append(f"could not read {lf.display}: {exc.strerror or exc}")
            continue
        result.bytes_read += n
        result.lines += lines
        if n == 0:
            notes.append(f"{lf.display} is empty")


def _total_bytes(files: list[LogFile]) -> int:
    total = 0
    for lf in files:
        with contextlib.suppress(OSError):
            total += lf.path.stat().st_size
    return total


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
    """Diagnose one stream (standard input: a paste); a paste up to ``UNWRAP_MAX`` is rejoined
    if a terminal hard-wrapped it."""
    base = _baseline(baseline, None) if baseline else None
    eng = Engine(job or name)
    fstate = eng.open_file(name, year=time.gmtime().tm_year)
    head = fh.read(UNWRAP_MAX + 1)
    src: Any = io.BytesIO(_rejoined(head)) if len(head) <= UNWRAP_MAX else _Chain(head, fh)
    notes: list[str] = []
    n, lines = feed_stream(src, eng, fstate, notes=notes)
    _compare(eng.state, notes, base, baseline, expect_speedup)
    return DiagnoseResult(report=eng.report(files=1, notes=notes), notes=notes, bytes_read=n, lines=lines,
                          state=eng.state)


class _Chain:
    """``head`` (already read) followed by the rest of ``fh``."""

    def __init__(self, head: bytes, fh: Any) -> None:
        self.head: bytes | None = head
        self.fh = fh

    def read(self, n: int) -> bytes:
        if self.head:
            out, self.head = self.head, None
            return out
        data: bytes = self.fh.read(n)
        return data
