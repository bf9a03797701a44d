"""The live daemon names the hung rank from its stack before any collective timeout.

Real ``torchrun`` jobs (4 ranks, gloo, CPU, process-group timeout 120 s) where rank 2
blocks at step 4 outside the collective (scenarios/stuck.py); a real ``rankwatch run``
(stall floor 3 s) follows their logs and samples the ranks with a real py-spy. One job per
scenario, killed as soon as the verdict is read. The oracle is how the fault was injected.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from monitor.stacks import Sampler, StackSettings
from tests.conftest import REPO
from tests.e2e.stuckjob import StuckJob, stuck_job
from tests.reliability.proc import Rankwatch, metric, rankwatch

pytest.importorskip("torch")
pytestmark = [pytest.mark.e2e, pytest.mark.slow]

if Sampler(StackSettings()).py_spy() is None:
    pytest.skip("py-spy is not installed (pip install -e '.[test]')", allow_module_level=True)

TIMEOUT_LINE = re.compile(r"Timed out|timeout|Connection closed by peer", re.I)
GUARD_S = 180.0  # a broken daemon or job fails the test instead of hanging it (not a speed check)


@contextlib.contextmanager
def _sidecar_and_job(tmp: Path, fault: str, *extra: str) -> Iterator[tuple[Rankwatch, StuckJob]]:
    """The daemon is up before the job starts, as a sidecar is (its first stall can then not
    be missed, whatever the load on the machine)."""
    tag = f"rwstk-{uuid.uuid4().hex[:12]}"
    env = {"RANKWATCH_STALL_FLOOR": "3", "RANKWATCH_STACKS__ENABLED": "true", "RANKWATCH_STACKS__PATTERN": re.escape(tag)}
    logs = tmp / "logs"
    logs.mkdir()
    with rankwatch([str(logs / "**" / "*.log")], tmp / "state", "stk", tmp / "rankwatch.out", env=env) as rw:
        rw.get("/healthz")
        with stuck_job(logs, fault, *extra, tag=tag) as job:
            yield rw, job


def _wait_incident(rw: Rankwatch, job: StuckJob, done: Any) -> dict[str, Any]:
    deadline = time.monotonic() + GUARD_S
    while time.monotonic() < deadline:
        rep = json.loads(rw.get("/api/incidents"))
        for inc in rep["incidents"]:
            if inc["failure"] == "rank_hang" and done(inc):
                return inc
        if job.p.poll() is not None:
            raise AssertionError(f"torchrun exited: {job.text()[-2000:]}")
        time.sleep(0.3)
    raise AssertionError(f"no rank_hang verdict: {rw.get('/api/incidents')}\n{rw.output()[-2000:]}")


@pytest.mark.parametrize(("fault", "where"), [
    ("queue", "queue.py:171 Queue.get"),
    ("lock", "stuck.py:98 main"),
    ("extra_collective", "torch/distributed/distributed_c10d.py"),
])
def test_hung_rank_is_named_from_its_stack_before_any_timeout(tmp_path: Path, fault: str, where: str) -> None:
    with _sidecar_and_job(tmp_path, fault) as (rw, job):
        inc = _wait_incident(rw, job, lambda i: i["initiator"]["rank"] is not None)
        logs_now = job.text()  # read right after the verdict: no rank has timed out yet
        metrics = rw.get("/metrics")
        # the on-call command sees the same, outlier first
        cli = subprocess.run([sys.executable, "-m", "monitor", "stacks", "--pattern", re.escape(job.tag)],
                             cwd=REPO, capture_output=True, text=True, timeout=120)
    assert not TIMEOUT_LINE.search(logs_now), TIMEOUT_LINE.search(logs_now)
    assert inc["initiator"]["rank"] == 2
    assert inc["severity"] == "critical"
    st = inc["stacks"]
    assert st["outlier"] == 2 and st["waiting"] == [0, 1, 3] and st["sampled"] == 4
    assert st["collective"] == "backward (gradient all-reduce)"
    assert any(where in f for f in st["frames"])
    ev = [e["text"] for e in inc["initiator"]["evidence"] if e["path"] == "py-spy dump of rank 2"]
    assert ev and any(where in t for t in ev)
    assert any("Live stacks (py-spy): rank 2" in line for line in inc["root_cause"])
    assert metric(metrics, "rankwatch_stack_samples_total", result="ok") >= 4
    assert cli.returncode == 0, cli.stderr
    first, *rest = cli.stdout.splitlines()
    assert first.startswith("rank 2 (pid ") and first.endswith("<- outlier")
    assert any(where in line for line in rest[:8])
    assert rest[-1].startswith("verdict: rank 2 ")


def test_slow_job_with_every_rank_in_the_same_frames_is_not_blamed_on_one_rank(tmp_path: Path) -> None:
    # every rank's data arrives 8 s late, in the same frames: the stall floor (3 s) fires,
    # the stacks are sampled, and they show no odd one out
    with _sidecar_and_job(tmp_path, "none", "--step-sleep", "8") as (rw, job):
        inc = _wait_incident(rw, job, lambda i: "stacks" in i)
        rep = json.loads(rw.get("/api/incidents"))
    assert inc["initiator"]["rank"] is None
    assert inc["stacks"]["outlier"] is None and inc["stacks"]["sampled"] == 4
    assert "same frames" in inc["stacks"]["reason"]
    assert [g["ranks"] for g in inc["stacks"]["groups"]] == [[0, 1, 2, 3]]
    assert all(i["initiator"]["rank"] is None for i in rep["incidents"] if i["failure"] == "rank_hang")
