"""The daemon in-process on a real event loop, real files and real HTTP.

- live-vs-offline parity: every golden torchrun case (every layout; and every case of
  ``tests/corpus/dev`` laid out as several files or with an ``error.json``) is replayed into
  a folder, line by line and rank by rank, torchrun's ``error.json`` written (in two
  writes) after its rank's last line, while the daemon watches ``**/*.log`` only; its final
  incidents must equal what ``diagnose`` says about the same bytes, and so must what both
  say about skipped, empty and silent files;
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
DEV = REPO / "tests" / "corpus" / "dev"


def _layout_cases(root: Path, sub: str) -> list[Path]:
    """Cases whose files say something about ranks: several log files, or an ``error.json``."""
    if not root.is_dir():
        return []
    out = []
    for case in sorted(p for p in root.iterdir() if p.is_dir()):
        logs = case / sub if sub else case
        files = [p for p in logs.rglob("*") if p.is_file() and p.name != "case.json"] if logs.is_dir() else []
        if len(files) > 1 or any(p.name == "error.json" for p in files):
            out.append(logs)
    return out


CASES = {f"golden/{p.name}": p / "logs" for p in sorted(GOLDEN.iterdir()) if (p / "logs").is_dir()} if GOLDEN.is_dir() else {}
CASES |= {f"dev/{p.name}": p for p in _layout_cases(DEV, "")}


async def replay(src: Path, dst: Path, lines_per_turn: int = 7) -> None:
    """Write every file of ``src`` into ``dst`` a few lines at a time, interleaving ranks; an
    ``error.json`` (torchrun writes it when the rank raises) comes after the last line of
    its rank's logs, in two writes (a reader may see it half written)."""
    files = [p for p in sorted(src.rglob("*")) if p.is_file() and p.name not in ("error.json", "case.json")]
    pending = {p: p.read_bytes().splitlines(keepends=True) for p in files}
    for p in files:  # every file exists from the start, as torchrun's do (a silent rank's stays empty)
        (dst / p.relative_to(src)).parent.mkdir(parents=True, exist_ok=True)
        (dst / p.relative_to(src)).touch()
    errors = {p: p.read_bytes() for p in sorted(src.rglob("error.json"))}
    while any(pending.values()) or errors:
        for p, rest in pending.items():
            if not rest:
                continue
            chunk, pending[p] = rest[:lines_per_turn], rest[lines_per_turn:]
            with open(dst / p.relative_to(src), "ab") as fh:
                fh.write(b"".join(chunk))
        for p, data in list(errors.items()):
            if any(rest for q, rest in pending.items() if q.parent == p.parent):
                continue
            out = dst / p.relative_to(src)
            with open(out, "ab") as fh:
                half = len(data) // 2 if not out.stat().st_size else 0
                fh.write(data[out.stat().st_size:] if not half else data[:half])
            if out.stat().st_size == len(data):
                del errors[p]
        await asyncio.sleep(0.005)


async def replayed_live(src: Path, tmp_path: Path, patterns: list[str]) -> Daemon:
    """A daemon watching ``tmp_path/logs`` (``**/PATTERN`` globs) while ``src`` is replayed
    into it line by line; stopped (drained) once the replay is done."""
    live_dir = tmp_path / "logs"
    live_dir.mkdir()
    cfg = load_config(logs=[str(live_dir / "**" / p) for p in patterns], job="parity", metrics_addr="127.0.0.1:0",
                      state_dir=tmp_path / "state", rescan_interval=0.05, poll_interval=0.02, stall_floor=3600)
    daemon = Daemon(cfg, log=lambda m: None)
    run = asyncio.create_task(daemon.run())
    while daemon.bound is None and not run.done():  # serving: its tailer has made its first scan
        await asyncio.sleep(0.005)
    await replay(src, live_dir)
    await asyncio.sleep(0.05)  # (what is left unread then, the shutdown drains: a rescan and a read to the end)
    daemon.stopping.set()
    await run
    return daemon


async def live_and_offline(src: Path, tmp_path: Path) -> tuple[dict, dict]:
    """The daemon's report after ``src`` was replayed into a watched folder, and ``diagnose``'s."""
    daemon = await replayed_live(src, tmp_path, ["*.log", "*.csv"])  # a metrics.csv is watched when named
    offline_dir = tmp_path / "offline"
    shutil.copytree(src, offline_dir, ignore=shutil.ignore_patterns("case.json"))
    offline = diagnose_paths([str(offline_dir)], job="parity").report
    return daemon.engine.report(daemon.tailer.notes()), offline


def summary(report: dict) -> list[tuple[str, str, object, object]]:
    return [(i["id"], i["failure"], i["initiator"]["rank"], i["severity"]) for i in report["incidents"]
            if not i.get("superseded_by")]


def file_notes(report: dict) -> list[str]:
    return sorted(n for n in report["notes"] if n.startswith("skipped ") or n.endswith(" is empty"))


@pytest.mark.parametrize("case", sorted(CASES) or ["<none>"])
async def test_live_equals_offline(case: str, tmp_path: Path) -> None:
    if case == "<none>":
        pytest.skip("no golden cases recorded")
    live, offline = await live_and_offline(CASES[case], tmp_path)
    assert summary(live) == summary(offline)
    assert live["ranks"] == offline["ranks"]


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


def test_a_late_sample_is_not_a_rank_falling_behind() -> None:
    """At-least-once delivery can bring a rank's earlier lines after its later ones (a batch
    that reached a half-made subscription, a redelivery). Those samples count, but the rank
    stays at its step: the stall that follows names nobody. A file truncated and rewritten (a
    new generation) does move the rank back: that is a restart."""
    from detectors.events import Event, EventKind, Source

    def sample(r: int, s: int, gen: int = 0) -> Event:
        data: dict[str, object] = {"loss": 0.5, "scope": "local"}
        if gen:
            data["generation"] = gen
        return Event(EventKind.SAMPLE, Source(f"node-a/rank_{r}.log", s, ""), rank=r, step=s, data=data)

    eng = LiveEngine("j", stall_factor=5, stall_floor=2)
    eng.feed([sample(0, 3)] + [sample(r, s) for r in (1, 2, 3) for s in (1, 2, 3)], 100.0)
    eng.feed([sample(0, 1), sample(0, 2)], 100.5)  # rank 0's first lines, late
    assert eng.state.ranks[("g", 0)].last_step == 3 and eng.state.ranks[("g", 0)].n_samples == 3
    (change,) = eng.evaluate(103.0)
    assert change.incident["failure"] == "rank_hang" and change.incident["initiator"]["rank"] is None
    eng.feed([sample(0, 1, gen=1)], 103.5)  # rank 0's file truncated and rewritten from step 1
    assert eng.state.ranks[("g", 0)].last_step == 1


async def test_error_json_binary_and_silent_files_live_as_offline(tmp_path: Path) -> None:
    """A real torchrun ``--log-dir`` tree (golden ``exception-logdir``, rank 2 raised) whose only
    record of the exception is rank 2's ``error.json``: its stderr.log is empty (a silent rank)
    and the launcher's console is gone. Beside it, a binary file named ``.log`` and a checkpoint.
    Live and offline name rank 2 from the error.json, and say the same about the other files."""
    src = tmp_path / "src"
    shutil.copytree(GOLDEN / "exception-logdir" / "logs" / "torchrun", src / "torchrun")
    (stderr2,) = src.glob("torchrun/*/attempt_0/2/stderr.log")
    assert b"ValueError" in stderr2.read_bytes() and (stderr2.parent / "error.json").is_file()
    stderr2.write_bytes(b"")
    (src / "core.log").write_bytes(b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 8)
    (src / "ckpt").mkdir()
    (src / "ckpt" / "model.pt").write_bytes(b"\x80\x02weights")

    # the globs name no error.json: the daemon finds it beside the attempt_N/<local_rank>/ logs
    daemon = await replayed_live(src, tmp_path, ["*.log", "*.pt"])
    live = daemon.engine.report(daemon.tailer.notes())
    offline = diagnose_paths([str(src)], job="parity").report

    assert summary(live) == summary(offline)
    inc = offline["incidents"][0]
    assert (inc["failure"], inc["initiator"]["rank"]) == ("rank_exception", 2)
    for rep in (live, offline):
        ev = [e for e in rep["incidents"][0]["initiator"]["evidence"] if "corrupt sample" in e["text"]]
        assert ev and all(e["path"].endswith("attempt_0/2/error.json") for e in ev), rep["incidents"][0]
    empty = sorted(f"{p.relative_to(src)} is empty" for p in src.rglob("*.log") if not p.stat().st_size)
    assert f"{stderr2.relative_to(src)} is empty" in empty
    want = sorted(["skipped ckpt/model.pt: not a text log (.pt)", "skipped core.log: binary or not a log", *empty])
    assert file_notes(offline) == want
    assert file_notes(live) == want
    assert live["ranks"] == offline["ranks"] == [0, 1, 2, 3]


def test_a_traceback_still_being_written_is_not_called_cut_short() -> None:
    """Python writes stderr a line at a time, so a read can end inside a traceback. Live, the
    unfinished-traceback verdict waits a few seconds for the exception line; offline (or when
    the line never comes) it stands."""
    from detectors.events import Event, EventKind, Source
    from monitor.live import UNFINISHED_GRACE_S

    eng = LiveEngine("j")
    head = Event(EventKind.BLOCK, Source("rank2.log", 7, "[rank2]: Traceback (most recent call last):"), rank=2,
                 rank_from="prefix")
    eng.feed([head], 100.0)
    assert eng.evaluate(101.0) == []  # the exception line may be on its way
    (change,) = eng.evaluate(100.0 + UNFINISHED_GRACE_S + 1)
    assert (change.kind, change.incident["failure"], change.incident["initiator"]["rank"]) == ("open", "rank_exception", 2)
