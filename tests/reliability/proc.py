"""Run ``rankwatch run`` as a real subprocess and read its HTTP endpoints (helpers)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from tests.conftest import REPO
from tests.helpers import free_port

FAST = {
    "RANKWATCH_RESCAN_INTERVAL": "0.1",
    "RANKWATCH_POLL_INTERVAL": "0.05",
    "RANKWATCH_CHECKPOINT_INTERVAL": "0.2",
}


class Rankwatch:
    """One ``python -m monitor run`` process; its output goes to a file (no pipe to fill)."""

    def __init__(self, logs: list[str], state: Path, job: str, out: Path, env: dict[str, str] | None = None,
                 extra: list[str] | None = None) -> None:
        self.port = free_port()
        self.out_path = out
        self.out: IO[bytes] = open(out, "ab")  # noqa: SIM115 (closed in wait())
        args = [sys.executable, "-m", "monitor", "run", "--job", job, "--state-dir", str(state),
                "--metrics-addr", f"127.0.0.1:{self.port}", "--quiet", *(extra or [])]
        for g in logs:
            args += ["--logs", g]
        self.p = subprocess.Popen(args, cwd=REPO, env={**os.environ, **FAST, **(env or {})},
                                  stdout=self.out, stderr=subprocess.STDOUT)

    def get(self, path: str, timeout: float = 90.0) -> str:
        deadline = time.monotonic() + timeout  # a loaded 2-core machine starts Python slowly
        while time.monotonic() < deadline:
            if self.p.poll() is not None:
                raise AssertionError(f"rankwatch exited with {self.p.returncode}: {self.output()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as r:
                    return r.read().decode()
            except OSError:
                time.sleep(0.05)
        raise AssertionError(f"rankwatch did not answer on {path}: {self.output()}")

    def output(self) -> str:
        if not self.out.closed:
            self.out.flush()
        return self.out_path.read_text(errors="replace")

    def kill(self) -> int:
        with contextlib.suppress(ProcessLookupError):
            self.p.send_signal(signal.SIGKILL)
        return self.wait()

    def stop(self) -> int:
        with contextlib.suppress(ProcessLookupError):
            self.p.send_signal(signal.SIGTERM)
        return self.wait()

    def wait(self, timeout: float = 60) -> int:
        try:
            rc = self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = self.p.wait()
        self.out.close()
        return rc


@contextlib.contextmanager
def rankwatch(*args: object, **kw: object) -> Iterator[Rankwatch]:
    rw = Rankwatch(*args, **kw)  # type: ignore[arg-type]
    try:
        yield rw
    finally:
        if rw.p.poll() is None:
            rw.kill()
        elif not rw.out.closed:
            rw.out.close()


def metric(text: str, name: str, default: float | None = None, **labels: str) -> float:
    """The value of one sample of the exposition ``text`` (labels must all match)."""
    for line in text.splitlines():
        if not (line.startswith(name + " ") or line.startswith(name + "{")):
            continue
        got = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', line.split("}", 1)[0])) if "{" in line else {}
        if all(got.get(k) == v for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    if default is not None:
        return default
    raise AssertionError(f"{name}{labels} not exported")


def series(text: str) -> list[str]:
    """Every sample line of an exposition (no comments)."""
    return [ln for ln in text.splitlines() if ln and not ln.startswith("#")]


def one_log_daemon(tmp_path: Path, job: str, first_line: str, **settings: Any) -> tuple[Any, Path]:
    """An in-process daemon following one log file (``logs/<job>.log``, holding ``first_line``),
    metrics on a free port, no console, no inotify, no periodic checkpoint; the file's path."""
    from monitor.config import Settings
    from monitor.daemon import Daemon

    logs = tmp_path / "logs"
    logs.mkdir()
    log = logs / "rank0.log"
    log.write_text(first_line)
    cfg = Settings(logs=[str(logs / "*.log")], job=job, metrics_addr="127.0.0.1:0", state_dir=tmp_path / "state",
                   host="h", console=False, inotify=False, checkpoint_interval=3600, **settings)
    return Daemon(cfg, log=lambda m: None), log
