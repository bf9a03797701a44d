"""MQTT with a real Mosquitto broker on loopback and real `rankwatch` subprocesses.

(a) a sidecar that also aggregates publishes the incident of a golden torchrun case;
(b) three node sidecars (ranks split across three folders, the initiating rank on the
    last node, wall clocks skewed by minutes) plus one aggregator: the aggregator names
    the right rank, and the node sidecars do not page for collateral;
(c) the broker stops mid-incident and comes back: nothing is lost, duplicates keep ids;
(d) a sidecar killed with SIGKILL is announced `offline` by its last will.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.helpers import append, free_port
from tests.mqtt_broker import MOSQUITTO, Broker

pytestmark = pytest.mark.skipif(MOSQUITTO is None, reason="mosquitto not installed (make test installs it)")
GOLDEN = REPO / "tests" / "e2e" / "golden"


class Proc:
    def __init__(self, args: list[str], tmp: Path, name: str) -> None:
        self.port = free_port()
        self.log = tmp / f"{name}.out"
        env = dict(os.environ, RANKWATCH_RESCAN_INTERVAL="0.1", RANKWATCH_POLL_INTERVAL="0.05",
                   RANKWATCH_MQTT_KEEPALIVE="2", RANKWATCH_STALL_FLOOR="3600")
        self.fh = open(self.log, "w")  # noqa: SIM115
        self.p = subprocess.Popen([sys.executable, "-m", "monitor", *args, "--metrics-addr", f"127.0.0.1:{self.port}",
                                   "--state-dir", str(tmp / f"{name}-state"), "--quiet"],
                                  cwd=REPO, env=env, stdout=self.fh, stderr=subprocess.STDOUT)

    def get(self, path: str) -> str:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as r:
                    return r.read().decode()
            except OSError:
                if self.p.poll() is not None:
                    raise AssertionError(f"process exited: {self.log.read_text()}") from None
                time.sleep(0.05)
        raise AssertionError(f"no answer on {path}: {self.log.read_text()}")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.p.poll() is None:
            self.p.send_signal(sig)
            try:
                self.p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.p.kill()
        self.fh.close()


def replay(src: Path, dst: Path, files: list[str] | None = None, shift_minutes: int = 0, upto: float = 1.0) -> None:
    """Copy (a fraction of) the golden files into ``dst``, shifting wall-clock stamps."""
    for p in sorted(src.rglob("*.log")):
        rel = p.relative_to(src)
        if files is not None and str(rel) not in files:
            continue
        lines = p.read_text().splitlines(keepends=True)
        n = int(len(lines) * upto)
        out = dst / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        done = len(out.read_text().splitlines(keepends=True)) if out.exists() else 0
        text = "".join(lines[done:n])
        if shift_minutes:
            def shift(m: re.Match[str]) -> str:
                mm = (int(m.group(2)) + shift_minutes) % 60
                return f"{m.group(1)}{mm:02d}"
            text = re.sub(r"(\b\d\d:)(\d\d)(?=:\d\d)", shift, text)
        with open(out, "a") as fh:
            fh.write(text)


async def collect(url: str, topic_filter: str, seconds: float, until: object = None, linger: float = 2.0) -> list[tuple[str, dict]]:
    """Messages on ``topic_filter`` until ``until(got)`` holds (then ``linger`` s more) or ``seconds``."""
    import aiomqtt

    host, port = url.removeprefix("mqtt://").split(":")
    got: list[tuple[str, dict]] = []
    async with aiomqtt.Client(host, int(port), identifier=f"test-{time.monotonic_ns()}") as c:
        await c.subscribe(topic_filter, qos=1)
        deadline = asyncio.get_running_loop().time() + seconds
        try:
            async with asyncio.timeout(seconds) as cm:
                async for m in c.messages:
                    got.append((str(m.topic), json.loads(m.payload)))  # type: ignore[arg-type]
                    if callable(until) and until(got):
                        cm.reschedule(min(deadline, asyncio.get_running_loop().time() + linger))
                        until = None
        except TimeoutError:
            pass
    return got


def open_incidents(got: list[tuple[str, dict]]) -> dict[str, dict]:
    latest: dict[str, dict] = {}
    for _, d in got:
        if d["revision"] >= latest.get(d["id"], {}).get("revision", 0):
            latest[d["id"]] = d
    return {i: d for i, d in latest.items() if d["status"] == "open" and not d.get("superseded_by")}


def test_sidecar_publishes_the_incident(broker: Broker, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    side = Proc(["run", "--logs", str(logs / "**" / "*.log"), "--job", "j-a", "--mqtt", broker.url, "--aggregate",
                 "--host", "node0"], tmp_path, "side")
    try:
        side.get("/healthz")
        replay(GOLDEN / "hang-perrank" / "logs", logs)

        def done(got: list) -> bool:
            return any(d["failure"] == "rank_hang" for d in open_incidents(got).values())

        got = asyncio.run(collect(broker.url, "rankwatch/v1/j-a/incidents/+", 60, done))
    finally:
        side.stop()
    incs = open_incidents(got)
    hang = [d for d in incs.values() if d["failure"] == "rank_hang"]
    assert hang and hang[0]["initiator"]["rank"] == 1 and hang[0]["schema"] == 1 and hang[0]["job"] == "j-a"
    topics = {t for t, _ in got}
    assert f"rankwatch/v1/j-a/incidents/{hang[0]['id']}" in topics
    # retained: a new subscriber still gets the latest revision of every incident
    late = asyncio.run(collect(broker.url, "rankwatch/v1/j-a/incidents/+", 3))
    assert hang[0]["id"] in {d["id"] for _, d in late}
    status = asyncio.run(collect(broker.url, "rankwatch/v1/j-a/status/+", 3))
    assert status and status[-1][1]["status"] == "offline" and status[-1][1]["host"] == "node0"


def test_three_nodes_one_aggregator_clock_skew(broker: Broker, tmp_path: Path) -> None:
    src = GOLDEN / "hang-perrank" / "logs"
    # the hung rank 1 is on the last node, with the launcher whose summary covers it
    nodes = {"node-a": ["node0/rank_0.log"], "node-b": ["node0/rank_2.log"],
             "node-c": ["node0/rank_3.log", "node0/rank_1.log", "launcher.log"]}
    agg = Proc(["aggregate", "--mqtt", broker.url, "--job", "j-b"], tmp_path, "agg")
    sides: dict[str, Proc] = {}
    try:
        agg.get("/healthz")
        for host in nodes:
            d = tmp_path / host
            d.mkdir()
            sides[host] = Proc(["run", "--logs", str(d / "**" / "*.log"), "--job", "j-b", "--mqtt", broker.url,
                                "--host", host], tmp_path, host)
        for p in sides.values():
            p.get("/healthz")
        for i, (host, files) in enumerate(nodes.items()):
            replay(src, tmp_path / host, files, shift_minutes=7 * i)  # skewed wall clocks

        def done(got: list) -> bool:
            return any(d["failure"] == "rank_hang" for d in open_incidents(got).values())

        got = asyncio.run(collect(broker.url, "rankwatch/v1/j-b/incidents/+", 60, done))
        incs = open_incidents(got)
        assert [(d["failure"], d["initiator"]["rank"]) for d in incs.values() if d["severity"] == "critical"] == [("rank_hang", 1)]
        api = json.loads(agg.get("/api/incidents"))
        assert api["incidents"][0]["failure"] == "rank_hang" and api["incidents"][0]["initiator"]["rank"] == 1
        # node-local sidecars that only see consequences do not page
        for host in ("node-a", "node-b"):
            text = sides[host].get("/metrics")
            assert 'severity="critical"' not in text, f"{host} pages for collateral:\n{text}"
    finally:
        for p in sides.values():
            p.stop()
        agg.stop()


def test_broker_outage_loses_nothing_and_duplicates_keep_ids(broker: Broker, tmp_path: Path) -> None:
    src = GOLDEN / "exception-perrank" / "logs"
    logs = tmp_path / "logs"
    logs.mkdir()
    agg = Proc(["aggregate", "--mqtt", broker.url, "--job", "j-c"], tmp_path, "agg")
    side = Proc(["run", "--logs", str(logs / "**" / "*.log"), "--job", "j-c", "--mqtt", broker.url, "--host", "n1"],
                tmp_path, "side")
    try:
        agg.get("/healthz")
        side.get("/healthz")
        replay(src, logs, upto=0.5)
        time.sleep(2.0)
        broker.stop()  # mid-incident
        replay(src, logs, upto=1.0)  # the rest is written while the broker is down
        time.sleep(2.0)
        assert "rankwatch_dropped_total{reason=\"mqtt_outbox_full\"} 0.0" in side.get("/metrics")
        broker.start()
        deadline = time.monotonic() + 60
        top = None
        while time.monotonic() < deadline:
            api = json.loads(agg.get("/api/incidents"))
            opened = [i for i in api["incidents"] if i["status"] == "open"]
            if opened and opened[0]["failure"] == "rank_exception":
                top = opened[0]
                break
            time.sleep(0.2)
        assert top is not None and top["initiator"]["rank"] == 2, agg.log.read_text()
        # every finding the node parsed reached the aggregator exactly once: the per-rank
        # finding counters of the node (its own engine) and of the aggregator are equal
        def findings(text: str) -> dict[str, float]:
            return {ln.rsplit(" ", 1)[0].replace('job="j-c",', ""): float(ln.rsplit(" ", 1)[1])
                    for ln in text.splitlines() if ln.startswith("rankwatch_findings_total{")}

        deadline = time.monotonic() + 30
        while True:  # the node's outbox drains after the broker is back
            node_f, agg_f = findings(side.get("/metrics")), findings(agg.get("/metrics"))
            if (node_f and node_f == agg_f) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert node_f and node_f == agg_f
        assert 'reason="mqtt_duplicate"' in agg.get("/metrics")
        retained = asyncio.run(collect(broker.url, "rankwatch/v1/j-c/incidents/+", 3))
        assert top["id"] in {d["id"] for _, d in retained}
    finally:
        side.stop()
        agg.stop()


def test_sigkilled_sidecar_goes_offline_by_last_will(broker: Broker, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "rank0.log").write_text("step 1 | loss 1.0\n")
    side = Proc(["run", "--logs", str(logs / "*.log"), "--job", "j-d", "--mqtt", broker.url, "--host", "victim"],
                tmp_path, "side")
    try:
        side.get("/healthz")

        def online(got: list) -> bool:  # ... and says how many files it watches
            return any(d["status"] == "online" and d["files"] == 1 for _, d in got)

        assert online(asyncio.run(collect(broker.url, "rankwatch/v1/j-d/status/victim", 30, online)))
        side.stop(signal.SIGKILL)

        def offline(got: list) -> bool:
            return any(d["status"] == "offline" for _, d in got)

        got = asyncio.run(collect(broker.url, "rankwatch/v1/j-d/status/victim", 30, offline))
    finally:
        side.stop()
    assert offline(got), got


_WATCHDOG = ("[rank{r}]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] [Rank {r}] Watchdog caught collective "
             "operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran "
             "for 600061 milliseconds before timing out.\n")


def test_the_aggregator_learns_of_a_silent_rank_from_its_nodes_status(broker: Broker, tmp_path: Path) -> None:
    """Rank 1 hung before its first line: its file on node-a stays empty, and nothing in any
    log states the world size. Its node's status names the ranks whose files it watches, so the
    aggregator knows rank 1 exists and names it as the rank the others' timeouts wait for."""
    nodes = {"node-a": [0, 1], "node-b": [2, 3]}
    agg = Proc(["aggregate", "--mqtt", broker.url, "--job", "j-e"], tmp_path, "agg")
    sides: list[Proc] = []
    try:
        agg.get("/healthz")
        for host, ranks in nodes.items():
            d = tmp_path / host
            d.mkdir()
            for r in ranks:
                (d / f"rank_{r}.log").write_text("")
            sides.append(Proc(["run", "--logs", str(d / "*.log"), "--job", "j-e", "--mqtt", broker.url, "--host", host],
                              tmp_path, host))
        for p in sides:
            p.get("/healthz")

        def watching(got: list) -> bool:
            return {h for _, d in got if d["status"] == "online" and d["ranks"] for h in [d["host"]]} == set(nodes)

        status = asyncio.run(collect(broker.url, "rankwatch/v1/j-e/status/+", 60, watching, linger=0.5))
        assert {d["host"]: d["ranks"] for _, d in status if d.get("ranks")} == {"node-a": [0, 1], "node-b": [2, 3]}
        for host, ranks in nodes.items():
            for r in ranks:
                if r != 1:
                    text = "".join(f"step {s} | loss 0.5\n" for s in range(1, 6)) + _WATCHDOG.format(r=r)
                    append(tmp_path / host / f"rank_{r}.log", text.encode())

        def hang(got: list) -> bool:
            return any(d["failure"] == "rank_hang" for d in open_incidents(got).values())

        got = asyncio.run(collect(broker.url, "rankwatch/v1/j-e/incidents/+", 60, hang))
        hangs = [d for d in open_incidents(got).values() if d["failure"] == "rank_hang"]
        assert [(d["initiator"]["rank"], d["severity"]) for d in hangs] == [(1, "critical")], got
    finally:
        for p in sides:
            p.stop()
        agg.stop()


def test_a_files_last_notes_are_sent_at_most_once_per_interval_and_the_newest_last(broker: Broker, tmp_path: Path) -> None:
    """Each chunk of a log re-sends its ranks' last notes; the sidecar sends only the newest, at
    most once per LATEST_INTERVAL (2 s), and the final one when it stops."""
    import threading

    from monitor.mqtt import LATEST_INTERVAL

    logs = tmp_path / "logs"
    logs.mkdir()
    log = logs / "train.log"
    log.write_text("")
    side = Proc(["run", "--logs", str(logs / "*.log"), "--job", "j-n", "--mqtt", broker.url, "--host", "node0"],
                tmp_path, "side")
    got: list[tuple[str, dict]] = []

    def listen() -> None:
        got.extend(asyncio.run(collect(broker.url, "rankwatch/v1/j-n/findings/+", 90, lambda g: any(
            d.get("data", {}).get("key") == "last_notes" and "epoch 2 batch 39" in str(d["data"].get("value")) for _, d in g),
            linger=1.0)))

    try:
        side.get("/healthz")
        t = threading.Thread(target=listen)
        t.start()
        time.sleep(1.0)  # (the subscription is in place)
        t0 = time.monotonic()
        for i in range(40):
            append(log, "".join(f"[rank{r}]: epoch 2 batch {i} loss {1.5 + r / 10:.2f}\n" for r in (0, 1)).encode())
            time.sleep(0.02)
        side.stop()
        elapsed = time.monotonic() - t0
        t.join(timeout=120)
    finally:
        side.stop()
    notes = [d for _, d in got if d.get("data", {}).get("key") == "last_notes"]
    assert notes, [d.get("data", {}).get("key") for _, d in got]
    assert "epoch 2 batch 39" in notes[-1]["data"]["value"]  # the final state arrived, and arrived last
    # one file: at most one per interval over the time the sidecar ran, plus the one sent on stopping
    assert len(notes) <= elapsed / LATEST_INTERVAL + 2, (len(notes), elapsed)
