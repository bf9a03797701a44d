"""Small helpers shared by the tests that drive the tailer, the daemon and servers."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from detectors.events import Event, EventKind

if TYPE_CHECKING:
    from detectors.detect import JobState
    from detectors.engine import Engine
    from detectors.model import Incident

__all__ = ["Sink", "append", "corpus_candidate_lines", "engine_events", "engine_verdict", "fed_state", "fed_whole_and_chunked", "free_port", "stop_process", "sync", "top_verdict"]


def fed_state(lines: list[str], path: str = "console.log", rank: int | None = None) -> JobState:
    """A job state fed line by line through the default parser (one file, no tailer)."""
    from detectors.detect import JobState
    from detectors.parse import default_parser
    from detectors.parsers.base import FileState, JobParseState

    st = JobState(job="t")
    fs = FileState(path, rank=rank, year=2026, job=JobParseState())
    parser = default_parser()
    for i, line in enumerate(lines, 1):
        for ev in parser.parse_line(line, i, fs):
            st.add(ev)
    return st


def engine_events(lines: list[str], path: str = "train.log") -> list[Event]:
    """The events one file's lines give through the engine's chunk scan and parse."""
    from detectors.engine import Engine

    engine = Engine("t")
    return engine.feed("".join(f"{line}\n" for line in lines).encode(), 1, engine.open_file(path))


def fed_whole_and_chunked(lines: list[str], size: int, path: str = "train.log") -> tuple[Engine, Engine]:
    """Two engines fed one file's ``lines``: the first all at once (offline), the second ``size``
    lines at a time (the live tailer's chunks), for tests that the two agree."""
    from detectors.engine import Engine

    whole = Engine("t")
    whole.feed("".join(f"{ln}\n" for ln in lines).encode(), 1, whole.open_file(path))
    live = Engine("t")
    fs = live.open_file(path)
    for i in range(0, len(lines), size):
        live.feed("".join(f"{ln}\n" for ln in lines[i:i + size]).encode(), i + 1, fs)
    return whole, live


def top_verdict(lines: list[str], path: str = "console.log") -> tuple[str, int | None]:
    """(failure, initiating rank) of the first incident of the report over ``lines`` fed as one
    file named ``path`` (the shape most detector tests assert on)."""
    from detectors.diagnosis import build_report

    incidents = build_report(fed_state(lines, path))["incidents"]
    assert incidents, "no incident"
    return incidents[0]["failure"], incidents[0]["initiator"]["rank"]


def engine_verdict(lines: list[str], path: str = "train.log") -> list[Incident]:
    """The whole path a diagnosis takes over one file: the chunk scan (and its noise check),
    the parse, detect and correlate."""
    from detectors.engine import Engine

    engine = Engine("t")
    engine.feed("".join(f"{line}\n" for line in lines).encode(), 1, engine.open_file(path))
    return engine.verdict()


_SIGNAL_NAMES = {1: "SIGHUP", 2: "SIGINT", 6: "SIGABRT", 7: "SIGBUS", 9: "SIGKILL", 11: "SIGSEGV", 15: "SIGTERM"}


def torchrun_summary(root: int, codes: dict[int, int], pids: dict[int, int], clock: str = "2026-12-06_03:19:38",
                     script: str = "train.py") -> list[str]:
    """torchrun's report of its failed workers (torch 2.x, ``elastic/multiprocessing``): its agent's
    ``failed (exitcode: N) local_rank: L (pid: P)`` line for the first failure (``root``), then the
    ChildFailedError summary, the other workers under ``Failures:`` and the root cause last. One
    node: each worker's local rank is its rank. A negative exit code is the signal that ended it
    (``exitcode  : -15 (pid: P)  (SIGTERM)``, ``traceback : Signal 15 (SIGTERM) received by PID P``)."""

    def block(i: int, r: int) -> list[str]:
        code, pid = codes[r], pids[r]
        name = _SIGNAL_NAMES.get(-code, f"signal {-code}") if code < 0 else ""
        return [f"[{i}]:", f"  time      : {clock}", "  host      : localhost", f"  rank      : {r} (local_rank: {r})",
                f"  exitcode  : {code} (pid: {pid})" + (f"  ({name})" if code < 0 else " "), "  error_file: <N/A>",
                f"  traceback : Signal {-code} ({name}) received by PID {pid}" if code < 0
                else "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"]

    lines = [f"E1206 03:19:38.927000 24160 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: "
             f"{codes[root]}) local_rank: {root} (pid: {pids[root]}) of binary: /usr/bin/python3",
             "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
             "============================================================", f"{script} FAILED",
             "------------------------------------------------------------", "Failures:"]
    for i, r in enumerate((r for r in sorted(codes) if r != root), 1):
        lines += block(i, r)
    lines += ["------------------------------------------------------------", "Root Cause (first observed failure):",
              *block(0, root), "============================================================"]
    return lines


def free_port() -> int:
    """A loopback port free right now (for daemons and servers started by a test)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_process(p: subprocess.Popen[bytes] | subprocess.Popen[str], timeout: float = 30.0) -> None:
    """SIGTERM, and SIGKILL if it has not exited within ``timeout`` (a guard, not a check)."""
    p.terminate()
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as fh:
        fh.write(data)


def sync(tailer: object) -> None:
    """One rescan, then read until nothing is left (what the daemon's loops do)."""
    tailer.rescan()  # type: ignore[attr-defined]
    while tailer.poll():  # type: ignore[attr-defined]
        pass


class Sink:
    """Collects what a tailer hands on; the oracle of the tailer tests."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        # each file's ``last_notes`` (parse.py ``_last_notes``): a note of where the file stands,
        # sent after a chunk when it changed, so how many come depends on the read size (the
        # last one's value does not); kept apart from the events of the lines
        self.notes: list[Event] = []

    def __call__(self, events: list[Event]) -> None:
        for ev in events:
            if ev.kind is EventKind.CONTEXT and ev.data.get("key") == "last_notes":
                self.notes.append(ev)
            else:
                self.events.append(ev)

    def samples(self, path_part: str = "") -> list[Event]:
        return [e for e in self.events
                if e.kind is EventKind.SAMPLE and e.step is not None and path_part in e.source.path]

    def steps(self, path_part: str = "") -> list[int]:
        return [e.step for e in self.samples(path_part) if e.step is not None]

    def lines(self) -> list[tuple[int, int]]:
        return [(e.step, e.source.line) for e in self.samples() if e.step is not None]

    def sources(self) -> list[tuple[str, int]]:
        return [(e.source.path, e.source.line) for e in self.events]


def corpus_candidate_lines(limit: int = 400) -> Iterator[tuple[Path, bytes]]:
    """Every line the default parser's scan hands on, in the first ``limit`` corpus logs."""
    from detectors.parse import default_parser

    scanner = default_parser().scanner
    for path in sorted((Path(__file__).parent / "corpus").rglob("*.log"))[:limit]:
        buf = path.read_bytes()
        for start, end, _ in scanner.scan(buf):
            yield path, buf[start:end]
