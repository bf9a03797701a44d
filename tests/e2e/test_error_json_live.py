"""A real torchrun job whose rank 2 raises, watched live: the daemon names rank 2 from its
``error.json`` the same way ``diagnose`` does.

torchrun (4 ranks, gloo, CPU) runs ``scenarios/train.py --fault exception`` with ``--log-dir
--redirects 3 --tee 3``: every rank's stdout/stderr go to ``attempt_0/<local_rank>/`` (and,
teed, to the agent's console), and ``@record`` writes ``attempt_0/2/error.json`` when rank 2
raises. A real ``rankwatch run`` subprocess follows ``**/*.log`` only (the error.json is found
beside the attempt logs) from before the job starts. The oracle is how the fault was injected;
the comparison is with ``rankwatch diagnose`` on the same folder afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.reliability.proc import rankwatch

pytest.importorskip("torch")
pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SCRIPT = REPO / "tests" / "e2e" / "scenarios" / "train.py"
GUARD_S = 240.0  # a broken job or daemon fails the test instead of hanging it (not a speed check)
FAULT_RANK = 2


def _from_error_json(inc: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in inc["initiator"]["evidence"] if e["path"].endswith(f"attempt_0/{FAULT_RANK}/error.json")]


def _summary(rep: dict[str, Any]) -> list[tuple[str, str, int | None]]:
    return [(i["id"], i["failure"], i["initiator"]["rank"]) for i in rep["incidents"] if not i.get("superseded_by")]


def test_rank_that_raised_is_named_live_from_its_error_json(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    for var in ("TORCHELASTIC_ERROR_FILE", "TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE", "LOGLEVEL"):
        env.pop(var, None)
    with rankwatch([str(logs / "**" / "*.log")], tmp_path / "state", "ej", tmp_path / "rankwatch.out") as rw:
        rw.get("/healthz")
        with open(logs / "launcher.log", "wb") as console:
            job = subprocess.run(
                [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "4",
                 "--log-dir", str(logs / "torchrun"), "--redirects", "3", "--tee", "3", str(SCRIPT),
                 "--fault", "exception", "--fault-rank", str(FAULT_RANK), "--fault-step", "4", "--steps", "8"],
                cwd=SCRIPT.parent, env=env, stdout=console, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                timeout=GUARD_S)
        assert job.returncode != 0, (logs / "launcher.log").read_text(errors="replace")[-2000:]
        (error_json,) = logs.glob(f"torchrun/*/attempt_0/{FAULT_RANK}/error.json")
        assert "ValueError: corrupt sample" in json.loads(error_json.read_text())["message"]["message"]

        deadline = time.monotonic() + GUARD_S
        live: dict[str, Any] = {}
        while time.monotonic() < deadline:
            live = json.loads(rw.get("/api/incidents"))
            if live["incidents"] and _from_error_json(live["incidents"][0]):
                break
            time.sleep(0.2)
        assert rw.stop() == 0
    inc = live["incidents"][0]
    assert (inc["failure"], inc["initiator"]["rank"]) == ("rank_exception", FAULT_RANK), inc
    assert any("ValueError: corrupt sample" in e["text"] for e in _from_error_json(inc)), inc

    out = subprocess.run([sys.executable, "-m", "monitor", "diagnose", str(logs), "--job", "ej", "--format", "json"],
                         cwd=REPO, capture_output=True, text=True, timeout=GUARD_S)
    offline = json.loads(out.stdout)
    assert _summary(live) == _summary(offline)
    assert _from_error_json(offline["incidents"][0]) == _from_error_json(inc)
