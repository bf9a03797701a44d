"""Run ``scenarios/stuck.py`` under a real ``torchrun`` (4 ranks, gloo, CPU) and kill it
promptly: shared by the live-stacks test and the fixture recorder."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).resolve().parent / "scenarios" / "stuck.py"
NPROC = 4
STEP_RE = re.compile(rb"^step (\d+) \|", re.M)


def torchrun() -> list[str]:
    return [sys.executable, "-m", "torch.distributed.run"]


class StuckJob:
    """One torchrun job; every rank writes ``<logs>/node0/rank_<R>.log`` (torchrun --log-dir)."""

    def __init__(self, logs: Path, fault: str, *extra: str, fault_rank: int = 2, fault_step: int = 4,
                 tag: str | None = None) -> None:
        self.logs = logs
        self.tag = tag or f"rwstk-{uuid.uuid4().hex[:12]}"  # finds this job's processes, never a neighbour's
        logs.mkdir(parents=True, exist_ok=True)
        self.launcher = open(logs / "launcher.log", "ab")  # noqa: SIM115 (closed in stop())
        args = [*torchrun(), "--standalone", f"--nproc-per-node={NPROC}", "--log-dir", str(logs / "torchrun"),
                "--redirects", "3", str(SCRIPT), "--fault", fault, "--fault-rank", str(fault_rank),
                "--fault-step", str(fault_step), "--tag", self.tag, *extra]
        env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
        self.p = subprocess.Popen(args, cwd=SCRIPT.parent, env=env, stdout=self.launcher, stderr=subprocess.STDOUT,
                                  start_new_session=True)

    def rank_logs(self) -> list[Path]:
        return sorted((self.logs / "torchrun").glob("*/attempt_*/*/stdout.log"))

    def steps(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for p in self.rank_logs():
            found = STEP_RE.findall(p.read_bytes())
            out[int(p.parent.name)] = int(found[-1]) if found else 0
        return out

    def text(self) -> str:
        parts = [p.read_text(errors="replace") for p in self.logs.rglob("*.log")]
        return "\n".join(parts)

    def wait_steps(self, n: int, timeout: float = 240.0) -> None:
        """Until every rank logged step ``n`` (a guard for a broken job, not a speed check)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            st = self.steps()
            if len(st) == NPROC and min(st.values()) >= n:
                return
            if self.p.poll() is not None:
                raise AssertionError(f"torchrun exited with {self.p.returncode}:\n{self.text()[-3000:]}")
            time.sleep(0.2)
        raise AssertionError(f"ranks did not reach step {n}: {self.steps()}\n{self.text()[-3000:]}")

    def pids(self) -> list[int]:
        """This job's processes (the agent and its ranks: torchrun starts each rank in a session
        of its own, so killing the agent's group would leave them running)."""
        out = []
        for d in Path("/proc").iterdir():
            if d.name.isdigit():
                with contextlib.suppress(OSError):
                    if self.tag.encode() in (d / "cmdline").read_bytes():
                        out.append(int(d.name))
        return out

    def stop(self) -> None:
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.p.pid, signal.SIGKILL)  # the session we started (the agent)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.p.wait(timeout=30)
        self.launcher.close()


@contextlib.contextmanager
def stuck_job(logs: Path, fault: str, *extra: str, **kw: Any) -> Iterator[StuckJob]:
    job = StuckJob(logs, fault, *extra, **kw)
    try:
        yield job
    finally:
        job.stop()
