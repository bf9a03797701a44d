"""Restarts with a real `rankwatch run` subprocess: SIGTERM drains and checkpoints; the
next process resumes exactly there (no loss, no duplicate) and incidents keep their ids."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from tests.conftest import REPO
from tests.helpers import free_port


def start(logs: Path, state: Path, port: int) -> subprocess.Popen[str]:
    env = dict(os.environ, RANKWATCH_RESCAN_INTERVAL="0.1", RANKWATCH_POLL_INTERVAL="0.05")
    return subprocess.Popen(
        [sys.executable, "-m", "monitor", "run", "--logs", str(logs / "*.log"), "--job", "restart",
         "--state-dir", str(state), "--metrics-addr", f"127.0.0.1:{port}", "--quiet"],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )


def get(port: int, path: str) -> str:
    deadline = time.monotonic() + 90  # a loaded 2-core CI machine starts Python slowly
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
                return r.read().decode()
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"daemon did not answer on {path}")


def metric(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} not exported")


def wait_lines(port: int, n: int) -> str:
    for _ in range(1200):
        text = get(port, "/metrics")
        if metric(text, "rankwatch_lines_total") >= n:
            return text
        time.sleep(0.05)
    raise AssertionError(f"never read {n} lines")


def wait_incidents(port: int, done: Any) -> dict[str, Any]:
    """/api/incidents once ``done(report)`` holds: a line is counted when it is read, its
    events reach the engine on the daemon's loop a moment later (never a fixed sleep)."""
    rep: dict[str, Any] = {}
    for _ in range(1200):
        rep = json.loads(get(port, "/api/incidents"))
        if done(rep):
            return rep
        time.sleep(0.05)
    raise AssertionError(f"the incidents never reached the expected state: {rep}")


def test_graceful_restart_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    logs, state = tmp_path / "logs", tmp_path / "state"
    logs.mkdir()
    r0 = logs / "rank0.log"
    r1 = logs / "rank1.log"
    r0.write_text("".join(f"step {i} | loss 1.0 | grad_norm 1.0\n" for i in range(1, 11)))
    r1.write_text("".join(f"step {i} | loss 1.0 | grad_norm 1.0\n" for i in range(1, 11)) + "step 11 | loss 1.0")  # partial line
    port = free_port()
    p = start(logs, state, port)
    try:
        wait_lines(port, 20)
        with open(r1, "a") as fh:
            fh.write("[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.18 GiB of which 1.00 MiB is free.\n")
        wait_lines(port, 21)
        before = wait_incidents(port, lambda r: bool(r["incidents"]))
    finally:
        p.send_signal(signal.SIGTERM)
        out, _ = p.communicate(timeout=30)
    assert p.returncode == 0, out
    cp = json.loads((state / "checkpoint.json").read_text())
    # the checkpoint never points past the data and always at a line end
    for path, rec in cp["positions"].items():
        data = Path(path).read_bytes()
        assert rec["offset"] <= len(data) and (rec["offset"] == 0 or data[rec["offset"] - 1 : rec["offset"]] == b"\n")
    assert cp["positions"][str(r1)]["offset"] == r1.stat().st_size  # the partial line was completed
    inc = before["incidents"][0]
    assert (inc["failure"], inc["initiator"]["rank"]) == ("cuda_oom", 1)

    # while it is down, both ranks keep writing
    with open(r0, "a") as fh:
        fh.write("[rank0]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600081 milliseconds before timing out.\n")
    p = start(logs, state, port)
    try:
        text = wait_lines(port, 1)
        after = wait_incidents(port, lambda r: bool(r["incidents"]) and bool(r["incidents"][0]["collateral"]))
        text = get(port, "/metrics")
    finally:
        p.send_signal(signal.SIGTERM)
        out, _ = p.communicate(timeout=30)
    assert "resumed from checkpoint" in out
    # the new process read exactly the one new line: nothing re-read, nothing lost
    assert metric(text, "rankwatch_lines_total") == 1.0
    assert 'rankwatch_findings_total{failure="cuda_oom",job="restart",rank="1"} 1.0' in text
    assert 'rankwatch_findings_total{failure="collective_timeout",job="restart",rank="0"} 1.0' in text
    inc2 = after["incidents"][0]
    assert inc2["id"] == inc["id"] and inc2["revision"] > inc["revision"]
    assert [c["rank"] for c in inc2["collateral"]] == [0]


def test_corrupt_checkpoint_falls_back_and_says_so(tmp_path: Path) -> None:
    logs, state = tmp_path / "logs", tmp_path / "state"
    logs.mkdir()
    state.mkdir()
    (state / "checkpoint.json").write_text('{"version": 1, "job": "restart", "engine": "!!"')
    (logs / "rank0.log").write_text("step 1 | loss 1.0\nstep 2 | loss 1.0\n")
    port = free_port()
    p = start(logs, state, port)
    try:
        text = wait_lines(port, 2)
    finally:
        p.send_signal(signal.SIGTERM)
        out, _ = p.communicate(timeout=30)
    assert "checkpoint unreadable" in out and metric(text, "rankwatch_lines_total") == 2.0
    assert json.loads((state / "checkpoint.json").read_text())["job"] == "restart"
