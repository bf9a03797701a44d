"""Small helpers shared by the tests that drive the tailer, the daemon and servers."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

from detectors.events import Event, EventKind

__all__ = ["Sink", "append", "free_port", "stop_process", "sync"]


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

    def __call__(self, events: list[Event]) -> None:
        self.events.extend(events)

    def samples(self, path_part: str = "") -> list[Event]:
        return [e for e in self.events
                if e.kind is EventKind.SAMPLE and e.step is not None and path_part in e.source.path]

    def steps(self, path_part: str = "") -> list[int]:
        return [e.step for e in self.samples(path_part) if e.step is not None]

    def lines(self) -> list[tuple[int, int]]:
        return [(e.step, e.source.line) for e in self.samples() if e.step is not None]

    def sources(self) -> list[tuple[str, int]]:
        return [(e.source.path, e.source.line) for e in self.events]
