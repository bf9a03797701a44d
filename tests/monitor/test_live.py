"""The daemon in-process on a real event loop, real files and real HTTP.

- live-vs-offline parity: every golden torchrun case is replayed into a folder, line by
  line and rank by rank, while the daemon watches; its final incidents must equal what
  ``diagnose`` says about the same bytes;
- /metrics is checked as exposition text and /api/incidents against the JSON contract;
- incidents are published ``open`` as soon as the first cause arrives, and stalls are
  found from time alone (injected clock).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import urllib.request
from pathlib import Path

import pytest

from monitor.config import load_config
from monitor.daemon import Daemon
from monitor.diagnose import diagnose_paths
from monitor.live import Change, LiveEngine
from tests.conftest import REPO

GOLDEN = REPO / "tests" / "e2e" / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "logs").is_dir()) if GOLDEN.is_dir() else []


async def replay(src: Path, dst: Path, lines_per_turn: int = 7) -> None:
    """Write every file of ``src`` into ``dst`` a few lines at a time, interleaving ranks."""
    files = [p for p in sorted(src.rglob("*")) if p.is_file() and p.suffix == ".log"]
    pending = {p: p.read_bytes().splitlines(keepends=True) for p in files}
    while any(pending.values()):
        for p, rest in pending.items():
            if not rest:
                continue
            out = dst / p.relative_to(src)
            out.parent.mkdir(parents=True, exist_ok=True)
            chunk, pending[p] = rest[:lines_per_turn], rest[lines_per_turn:]
            with open(out, "ab") as fh:
                fh.write(b"".join(chunk))
        await asyncio.sleep(0.005)


def summary(report: dict) -> list[tuple[str, str, object, object]]:
    return [(i["id"], i["failure"], i["initiator"]["rank"], i["severity"]) for i in report["incidents"]
            if not i.get("superseded_by")]


@pytest.mark.parametrize("case", CASES or ["<none>"])
async def test_live_equals_offline(case: str, tmp_path: Path) -> None:
    if case == "<none>":
        pytest.skip("no golden cases recorded")
    src = GOLDEN / case / "logs"
    live_dir = tmp_path / "logs"
    live_dir.mkdir()
    cfg = load_config(logs=[str(live_dir / "**" / "*.log")], job="parity", metrics_addr="127.0.0.1:0",
                      state_dir=tmp_path / "state", rescan_interval=0.05, poll_interval=0.02, stall_floor=3600)
    daemon = Daemon(cfg, log=lambda m: None)
    run = asyncio.create_task(daemon.run())
    await asyncio.sleep(0.1)
    await replay(src, live_dir)
    await asyncio.sleep(0.3)
    daemon.stopping.set()
    await run
    offline_dir = tmp_path / "offline"
    shutil.copytree(src, offline_dir, ignore=shutil.ignore_patterns("*.json"))
    offline = diagnose_paths([str(offline_dir)], job="parity").report
    live = daemon.engine.report()
    assert summary(live) == summary(offline)


async def test_http_endpoints_and_open_on_first_cause(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    cfg = load_config(logs=[str(logs / "*.log")], job="j1", metrics_addr="127.0.0.1:0",
                      state_dir=tmp_path / "state", rescan_interval=0.05, poll_interval=0.02)
    changes: list[Change] = []
    daemon = Daemon(cfg, on_change=changes.append, log=lambda m: None)
    run = asyncio.create_task(daemon.run())
    while daemon.bound is None:
        await asyncio.sleep(0.01)
    host, port = daemon.bound
    (logs / "rank0.log").write_text("step 1 | loss 2.0 | grad_norm 1.0\n")
    (logs / "rank1.log").write_text("step 1 | loss 2.1 | grad_norm 1.0\n")
    await asyncio.sleep(0.3)
    with open(logs / "rank1.log", "a") as fh:
        fh.write("[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.18 GiB of which 1.00 MiB is free.\n")
    for _ in range(100):
        await asyncio.sleep(0.02)
        if changes:
            break
    assert [(c.kind, c.incident["failure"], c.incident["initiator"]["rank"]) for c in changes] == [("open", "cuda_oom", 1)]
    first_id = changes[0].incident["id"]
    # collateral arrives later: the same incident is updated, not a new one
    with open(logs / "rank0.log", "a") as fh:
        fh.write("[rank0]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600081 milliseconds before timing out.\n")
    for _ in range(100):
        await asyncio.sleep(0.02)
        if len(changes) > 1:
            break
    assert changes[1].kind == "update" and changes[1].incident["id"] == first_id
    assert changes[1].incident["revision"] == 2 and changes[1].incident["collateral"][0]["rank"] == 0

    def get(path: str) -> tuple[str, str]:
        with urllib.request.urlopen(f"http://{host}:{port}{path}", timeout=5) as r:
            return r.headers["Content-Type"], r.read().decode()

    ctype, text = await asyncio.to_thread(get, "/metrics")
    assert ctype.startswith("text/plain")
    assert 'rankwatch_findings_total{failure="cuda_oom",job="j1",rank="1"} 1.0' in text
    assert 'rankwatch_findings_total{failure="collective_timeout",job="j1",rank="0"} 1.0' in text
    assert 'rankwatch_incidents_total{failure="cuda_oom",job="j1"} 1.0' in text
    assert f'rankwatch_incident_info{{failure="cuda_oom",hardware="false",incident="{first_id}",initiator_rank="1",job="j1",severity="critical"}} 1.0' in text
    assert 'rankwatch_step{job="j1",rank="0"} 1.0' in text and 'rankwatch_loss{job="j1",rank="1"} 2.1' in text
    assert "rankwatch_lines_total 4.0" in text and "rankwatch_files_tailed 2.0" in text
    assert 'rankwatch_dropped_total{reason="truncated"} 0.0' in text
    _, body = await asyncio.to_thread(get, "/api/incidents")
    rep = json.loads(body)
    assert rep["job"] == "j1" and rep["ranks"] == [0, 1]
    inc = rep["incidents"][0]
    assert (inc["id"], inc["status"], inc["revision"], inc["failure"]) == (first_id, "open", 2, "cuda_oom")
    assert set(inc) >= {"severity", "title", "hardware", "initiator", "collateral", "root_cause", "fix", "verify"}
    _, health = await asyncio.to_thread(get, "/healthz")
    assert json.loads(health)["status"] == "ok"
    daemon.stopping.set()
    await run
    assert (tmp_path / "state" / "checkpoint.json").exists()


def test_stall_is_named_before_any_timeout() -> None:
    """Time alone: no progress for max(floor, 5 x median step time) opens a rank_hang."""
    from detectors.events import Event, EventKind, Source

    eng = LiveEngine("j", stall_factor=5, stall_floor=10)
    t = 1000.0
    for s in range(1, 21):
        for r in range(4):
            if r == 2 and s > 15:
                continue  # rank 2 stops after step 15; the others run ahead (pipeline-style)
            ev = Event(EventKind.SAMPLE, Source(f"rank{r}.log", s, ""), rank=r, step=s, data={"loss": 1.0, "scope": "local"})
            eng.feed([ev], t)
        t += 2.0
    last = t - 2.0  # when steps last advanced
    assert [c.kind for c in eng.evaluate(last + 2.0)] == []  # one step time later: fine
    changes = eng.evaluate(last + 9.5)
    assert changes == []  # under max(10 s floor, 5 x 2 s median step time)
    changes = eng.evaluate(last + 10.5)
    assert [(c.kind, c.incident["failure"], c.incident["initiator"]["rank"]) for c in changes] == [("open", "rank_hang", 2)]
    # progress resumes: the stall incident is closed
    eng.feed([Event(EventKind.SAMPLE, Source("rank0.log", 99, ""), rank=0, step=21, data={"loss": 1.0, "scope": "local"})], last + 12)
    assert [c.kind for c in eng.evaluate(last + 12.5)] == ["close"]
