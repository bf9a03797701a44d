"""Hostile and broken checkpoints (issue #14, defect 3): a checkpoint is data, never code;
anything invalid is one message, a fresh start and a counter; it is private and holds no
secret a log line carried."""

from __future__ import annotations

import json
import os
import pickle
import stat
from pathlib import Path

import pytest
from prometheus_client.exposition import generate_latest

from monitor import checkpoint
from monitor.config import Settings
from monitor.daemon import Daemon
from tests.conftest import REPO
from tests.helpers import append, sync

SECRET = "ghp_" + "k7Lm2" * 8


class _Boom:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, (f"touch {self.marker}",))


def _daemon(tmp_path: Path, job: str = "j") -> Daemon:
    logs = tmp_path / "logs"
    logs.mkdir(exist_ok=True)
    cfg = Settings(logs=[str(logs / "*.log")], job=job, metrics_addr="127.0.0.1:0", state_dir=tmp_path / "state",
                   host="h", console=False, inotify=False)
    return Daemon(cfg, log=lambda m: None)


def _write(state: Path, doc: object) -> None:
    state.mkdir(parents=True, exist_ok=True)
    (state / checkpoint.NAME).write_text(json.dumps(doc))


def _assert_fresh_and_serving(d: Daemon) -> None:
    assert d.resume_note.startswith("starting from the beginning of every file (checkpoint invalid")
    assert d.tailer.stats.dropped["checkpoint_invalid"] == 1
    generate_latest(d.registry)  # /metrics works
    json.dumps(d.engine.report())  # /api/incidents works


def test_attack_pickle_checkpoint_executes_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    blob = pickle.dumps({"engine": _Boom(str(marker)), "fstates": {}})
    import base64
    import hashlib

    _write(tmp_path / "state", {"version": 1, "job": "j", "positions": {},
                                "engine_sha256": hashlib.sha256(blob).hexdigest(), "engine": base64.b64encode(blob).decode()})
    cp, why = checkpoint.load(tmp_path / "state", "j")
    assert cp is None and "version" in why
    assert not marker.exists()


def test_attack_crafted_json_checkpoint_names_a_foreign_class(tmp_path: Path) -> None:
    engine = {"$obj": "subprocess:Popen", "fields": {"args": f"touch {tmp_path / 'pwned'}"}}
    _write(tmp_path / "state", {"version": 2, "job": "j", "positions": {},
                                "engine_sha256": checkpoint._digest(engine), "engine": engine})
    d = _daemon(tmp_path)
    d.restore()
    _assert_fresh_and_serving(d)
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize("engine", [
    {"$dict": [["n", 1]]},  # checksum-valid, but not an engine
    {"$obj": "monitor.live:LiveEngine", "fields": {"job": "j", "published": {"$dict": [["x", 1]]}}},
    {"$obj": "detectors.detect:JobState", "fields": {"job": "j"}},
], ids=["dict", "bad-published", "jobstate"])
def test_attack_checksum_valid_checkpoint_of_the_wrong_shape_is_a_fresh_start(tmp_path: Path, engine: object) -> None:
    _write(tmp_path / "state", {"version": 2, "job": "j", "positions": {},
                                "engine_sha256": checkpoint._digest(engine), "engine": engine})
    d = _daemon(tmp_path)
    d.restore()
    _assert_fresh_and_serving(d)


def test_attack_wrong_shape_positions_are_one_message(tmp_path: Path) -> None:
    d = _daemon(tmp_path)
    d.save()
    doc = json.loads((tmp_path / "state" / checkpoint.NAME).read_text())
    doc["positions"] = {"/x.log": {"dev": "a", "ino": 1}}
    _write(tmp_path / "state", doc)
    d2 = _daemon(tmp_path)
    d2.restore()
    _assert_fresh_and_serving(d2)
    assert "positions" in d2.resume_note


def test_checkpoint_is_private_and_holds_no_secret(tmp_path: Path) -> None:
    d = _daemon(tmp_path)
    append(tmp_path / "logs" / "rank_0.log",
           f"[rank0]: RuntimeError: HF_TOKEN={SECRET} torch.OutOfMemoryError: CUDA out of memory.\n".encode())
    sync(d.tailer)
    assert d.engine.state.findings, "the line was not read as a finding"
    d.save()
    state = tmp_path / "state"
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert stat.S_IMODE((state / checkpoint.NAME).stat().st_mode) == 0o600
    assert SECRET not in (state / checkpoint.NAME).read_text()
    d.tailer.close()
    d2 = _daemon(tmp_path)
    d2.restore()
    assert d2.resume_note.startswith("resumed from checkpoint"), d2.resume_note
    assert [f.failure for f in d2.engine.state.findings] == [f.failure for f in d.engine.state.findings]


# the one module allowed to pickle: parallel diagnose hands its own worker processes' event batches
# to the main process as bytes over a multiprocessing queue (which pickles whatever it carries
# anyway); nothing read from disk or the network is ever unpickled
_IPC_PICKLE = {"monitor/parallel.py"}


def test_no_pickle_anywhere() -> None:
    import re

    for pkg in ("monitor", "detectors"):
        for py in (REPO / pkg).rglob("*.py"):
            text = py.read_text()
            rel = py.relative_to(REPO).as_posix()
            assert "pickle.load(" not in text and "pickle.Unpickler" not in text, py  # never from a file
            if rel in _IPC_PICKLE:
                # only in-memory round trips of the queue's payloads
                calls = set(re.findall(r"pickle\.(\w+)\(", text))
                assert calls <= {"dumps", "loads"}, (py, calls)
                assert "loads(msg[" in text, py  # what the worker put on the queue, nothing else
            else:
                assert "import pickle" not in text and "pickle.load" not in text, py


def test_attack_unwritable_state_dir_is_one_message_at_startup(tmp_path: Path) -> None:
    import subprocess
    import sys

    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the state directory should be")
    r = subprocess.run([sys.executable, "-m", "monitor", "run", "--logs", str(tmp_path / "*.log"), "--state-dir",
                        str(blocker / "state"), "--metrics-addr", "127.0.0.1:0", "--quiet"], cwd=REPO,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "state_dir" in lines[0] and "cannot hold checkpoints" in lines[0], r.stderr


def test_failed_final_checkpoint_is_never_claimed(tmp_path: Path) -> None:
    import asyncio

    d = _daemon(tmp_path)
    said: list[str] = []
    d.log = said.append

    async def life() -> None:
        task = asyncio.create_task(d.run())
        while d.bound is None:
            await asyncio.sleep(0.01)
        # the state directory becomes unusable while running: the final save must fail
        (tmp_path / "state").rename(tmp_path / "state-gone")
        (tmp_path / "state").write_text("now a file")
        d.stopping.set()
        await task

    asyncio.run(life())
    assert not any("final checkpoint in" in m for m in said), said
    assert any("NO final checkpoint" in m for m in said) and d.tailer.stats.dropped["checkpoint_failed"] >= 1
