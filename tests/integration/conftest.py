"""Integration tests: the real Prometheus, promtool, Alertmanager and amtool from the Debian
packages (`make debs` installs them), a real `rankwatch run`, real sockets.

Tests that need a binary are skipped, with the package to install, when it is missing.
Every process a test starts is registered with the ``procs`` fixture, which stops it
(SIGTERM, then SIGKILL) even when the test fails.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.helpers import free_port

__all__ = ["BINARIES", "REPO", "Procs", "binary", "free_port", "needs"]

# binary → (names to look for, Debian package)
BINARIES = {
    "promtool": (("promtool",), "prometheus"),
    "prometheus": (("prometheus",), "prometheus"),
    "alertmanager": (("prometheus-alertmanager", "alertmanager"), "prometheus-alertmanager"),
    "amtool": (("amtool",), "prometheus-alertmanager"),
}


def binary(name: str) -> str | None:
    for candidate in BINARIES[name][0]:
        found = shutil.which(candidate)
        if found:
            return found
    return None


def needs(*names: str) -> pytest.MarkDecorator:
    missing = [n for n in names if binary(n) is None]
    pkgs = sorted({BINARIES[n][1] for n in missing})
    return pytest.mark.skipif(
        bool(missing),
        reason=f"{', '.join(missing)} not found: install the Debian package(s) {' '.join(pkgs)} (`make debs`)",
    )


class Procs:
    """Processes started by one test; all stopped at teardown, whatever happened."""

    def __init__(self, logdir: Path) -> None:
        self.logdir = logdir
        self.started: list[tuple[str, subprocess.Popen[bytes]]] = []

    def start(self, name: str, argv: list[str], **kw: object) -> subprocess.Popen[bytes]:
        out = open(self.logdir / f"{name}.log", "wb")  # noqa: SIM115 - closed in stop_all
        try:
            p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, **kw)  # type: ignore[call-overload]
        finally:
            out.close()
        self.started.append((name, p))
        return p

    def output(self, name: str, tail: int = 3000) -> str:
        p = self.logdir / f"{name}.log"
        return p.read_text(errors="replace")[-tail:] if p.exists() else ""

    def check_alive(self) -> None:
        dead = [(n, p.returncode) for n, p in self.started if p.poll() is not None]
        if dead:
            raise AssertionError("; ".join(f"{n} exited with {rc}:\n{self.output(n)}" for n, rc in dead))

    def stop_all(self) -> None:
        for _, p in reversed(self.started):
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    p.send_signal(signal.SIGTERM)
        for _, p in reversed(self.started):
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=10)


@pytest.fixture
def procs(tmp_path: Path) -> Iterator[Procs]:
    d = tmp_path / "proc-logs"
    d.mkdir()
    ps = Procs(d)
    try:
        yield ps
    finally:
        ps.stop_all()
        leaked = [n for n, p in ps.started if p.poll() is None]
        assert not leaked, f"processes still running after teardown: {leaked}"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO
