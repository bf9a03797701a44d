"""No-leak fixtures for the reliability tests (after watchdog's test suite).

Every test here must leave no file descriptor, thread or child process behind: a tailer
that forgets to close a rotated file, or a daemon test that leaves its subprocess
running, fails the test that leaked it (not a later, unrelated one).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator

import pytest


def _fds() -> set[int]:
    try:
        return {int(n) for n in os.listdir("/proc/self/fd")}
    except OSError:  # not Linux: nothing to compare
        return set()


@pytest.fixture(autouse=True)
def no_leaks() -> Iterator[None]:
    threads = set(threading.enumerate())
    before = _fds()
    yield
    leaked_threads = [t for t in threading.enumerate() if t not in threads and t.is_alive()]
    assert not leaked_threads, f"threads leaked: {leaked_threads}"
    # listdir itself holds one descriptor while it runs; compare what stays open after
    leaked = {fd for fd in _fds() - before if _still_open(fd)}
    assert not leaked, f"file descriptors leaked: {sorted((fd, _target(fd)) for fd in leaked)}"


def _still_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _target(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return "?"
