"""Without py-spy or without permission to read other processes, stacks fall back to the
log-only verdict: said once, counted in ``rankwatch_stack_samples_total{result}``.

Real processes only: a real ``rankwatch run`` over logs that stop (a stall), and a real
process of another user inspected by ``rankwatch stacks`` with and without
``CAP_SYS_PTRACE`` (setpriv drops it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from monitor.stacks import Sampler, StackSettings
from tests.conftest import REPO
from tests.helpers import append
from tests.reliability.proc import metric, rankwatch

pytestmark = pytest.mark.slow
GUARD_S = 90.0  # a broken daemon fails the test instead of hanging it (not a speed check)


def _steps(logs: Path, first: int, last: int) -> None:
    for r in range(4):
        (logs / "node0").mkdir(parents=True, exist_ok=True)
        append(logs / "node0" / f"rank_{r}.log",
               "".join(f"step {s} | loss 0.5 | grad_norm 1.0\n" for s in range(first, last + 1)).encode())


def test_without_py_spy_the_daemon_says_so_once_and_keeps_the_log_verdict(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    _steps(logs, 1, 3)
    env = {"RANKWATCH_STALL_FLOOR": "1", "RANKWATCH_STACKS__ENABLED": "true",
           "RANKWATCH_STACKS__PY_SPY": str(tmp_path / "no-such" / "py-spy")}
    with rankwatch([str(logs / "**" / "*.log")], tmp_path / "state", "fb", tmp_path / "out.txt", env=env) as rw:
        for round_, first in ((1, None), (2, 4)):
            if first is not None:
                _steps(logs, first, first)  # progress, then a second stall
            deadline = time.monotonic() + GUARD_S
            while metric(rw.get("/metrics"), "rankwatch_stack_samples_total", 0.0, result="no_py_spy") < round_:
                assert time.monotonic() < deadline, rw.output()
                time.sleep(0.2)
        rep = json.loads(rw.get("/api/incidents"))
        text = rw.get("/metrics")
        rw.stop()
        out = rw.output()
    hangs = [i for i in rep["incidents"] if i["failure"] == "rank_hang"]
    assert hangs and all(i["initiator"]["rank"] is None and "stacks" not in i for i in hangs)
    assert metric(text, "rankwatch_stack_samples_total", result="no_py_spy") == 2
    assert metric(text, "rankwatch_stack_samples_total", result="ok") == 0
    assert out.count("py-spy not found") == 1, out  # said once, counted every time


@pytest.mark.skipif(os.getuid() != 0 or not shutil.which("setpriv") or not Path("/usr/bin/python3").exists(),
                    reason="needs root, setpriv and /usr/bin/python3 (to run a process as another user)")
def test_without_sys_ptrace_rankwatch_stacks_says_why(tmp_path: Path) -> None:
    if Sampler(StackSettings()).py_spy() is None:
        pytest.skip("py-spy is not installed")
    tag = f"rwperm-{uuid.uuid4().hex[:10]}"
    # a "rank" owned by nobody: reading its environment or memory needs CAP_SYS_PTRACE
    target = subprocess.Popen(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
                               "/usr/bin/python3", "-c", "import time; time.sleep(300)", tag],
                              env={"RANK": "3", "LOCAL_RANK": "3", "PATH": "/usr/bin:/bin"}, cwd="/")
    try:
        base = [sys.executable, "-m", "monitor", "stacks", "--pattern", tag, "--format", "json"]
        denied = subprocess.run(["setpriv", "--inh-caps=-sys_ptrace", "--bounding-set=-sys_ptrace", "--", *base],
                                cwd=REPO, capture_output=True, text=True, timeout=120)
        allowed = subprocess.run(base, cwd=REPO, capture_output=True, text=True, timeout=120)
    finally:
        target.kill()
        target.wait()
    assert denied.returncode == 2, denied
    assert "CAP_SYS_PTRACE" in denied.stderr
    # the environment unreadable (no process found) or the memory unreadable (py-spy
    # refused): which one depends on the kernel's ptrace rules; either is said and counted
    assert json.loads(denied.stdout)["results"] in ({"no_process": 1}, {"no_permission": 1})
    # the positive control: with the capability the same process is found and sampled
    assert allowed.returncode == 0, allowed
    got = json.loads(allowed.stdout)
    assert got["results"] == {"ok": 1} and got["groups"][0]["ranks"] == [3]
