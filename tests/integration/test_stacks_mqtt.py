"""Across nodes: each sidecar's reduced stacks go through a real Mosquitto broker to a real
``rankwatch aggregate``, which compares every node's ranks and names the hung one.

Two nodes' sidecars are played by this test: it publishes exactly what a sidecar publishes
(step events, then ``summary()`` of its ranks' recorded py-spy dumps: node-a holds ranks
0 and 1, node-b ranks 2 and 3, of a real job where rank 2 blocked in ``Queue.get``). Neither
node alone can tell: node-a sees two ranks waiting, node-b one waiting and one elsewhere."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from detectors.events import Event, EventKind, Source
from detectors.stacks import RankStack, main_frames, parse_dump
from monitor.mqtt import encode_event, topic, topic_filter
from monitor.stacks import Sample, summary
from tests.conftest import REPO
from tests.helpers import free_port, stop_process
from tests.mqtt_broker import MOSQUITTO, Broker

pytestmark = [pytest.mark.skipif(MOSQUITTO is None, reason="mosquitto not installed (make test installs it)"),
              pytest.mark.slow]
FIXTURES = REPO / "tests" / "detectors" / "fixtures" / "stacks" / "queue"
JOB = "j-stk"
GUARD_S = 90.0  # a broken aggregator fails the test instead of hanging it (not a speed check)



@contextlib.contextmanager
def aggregator(url: str, tmp: Path) -> Iterator[int]:
    port = free_port()
    env = dict(os.environ, RANKWATCH_STALL_FLOOR="2", RANKWATCH_POLL_INTERVAL="0.05")
    with open(tmp / "agg.out", "wb") as out:
        p = subprocess.Popen([sys.executable, "-m", "monitor", "aggregate", "--mqtt", url, "--job", JOB, "--quiet",
                              "--metrics-addr", f"127.0.0.1:{port}", "--state-dir", str(tmp / "agg-state")],
                             cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            yield port
        finally:
            stop_process(p)


def get(port: str | int, path: str) -> str:
    deadline = time.monotonic() + GUARD_S
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
                return r.read().decode()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def hang(port: int, done: object) -> dict:
    deadline = time.monotonic() + GUARD_S
    while time.monotonic() < deadline:
        for inc in json.loads(get(port, "/api/incidents"))["incidents"]:
            if inc["failure"] == "rank_hang" and callable(done) and done(inc):
                return inc
        time.sleep(0.2)
    raise AssertionError(get(port, "/api/incidents"))


async def publish(url: str, messages: list[tuple[str, bytes]]) -> None:
    import aiomqtt

    host, port = url.removeprefix("mqtt://").split(":")
    async with aiomqtt.Client(host, int(port), identifier=f"test-{time.monotonic_ns()}") as c:
        for t, payload in messages:
            await c.publish(t, payload, qos=1)


async def wait_online(url: str) -> None:
    """Until the aggregator's retained status says online (published after its subscriptions)."""
    import aiomqtt

    host, port = url.removeprefix("mqtt://").split(":")
    async with aiomqtt.Client(host, int(port), identifier=f"test-{time.monotonic_ns()}") as c:
        await c.subscribe(topic_filter(JOB, "status"), qos=1)
        async with asyncio.timeout(GUARD_S):
            async for m in c.messages:
                if json.loads(bytes(m.payload))["status"] == "online":  # type: ignore[arg-type]
                    return


def node_summary(host: str, ranks: list[int]) -> bytes:
    stacks = [RankStack(r, main_frames(parse_dump((FIXTURES / f"rank_{r}.txt").read_text())), None, host) for r in ranks]
    return summary(JOB, host, 3, Sample(stacks, Counter(ok=len(stacks)), [], None, None, 0.1)).dump()


def test_aggregator_names_the_hung_rank_from_every_nodes_stacks(broker: Broker, tmp_path: Path) -> None:
    steps = []
    for r in range(4):
        host = "node-a" if r < 2 else "node-b"
        for s in range(1, 4):
            ev = Event(EventKind.SAMPLE, Source(f"node0/rank_{r}.log", s, f"step {s} | loss 0.5"), rank=r, step=s,
                       data={"loss": 0.5, "scope": "local"})
            steps.append((topic(JOB, "findings", str(r)), encode_event(JOB, host, ev).dump()))
    with aggregator(broker.url, tmp_path) as port:
        get(port, "/healthz")
        asyncio.run(wait_online(broker.url))  # the aggregator says "online" once it has subscribed
        asyncio.run(publish(broker.url, steps))  # once, as sidecars do: at-least-once delivery from here on
        deadline = time.monotonic() + GUARD_S
        while not (stalled := [i for i in json.loads(get(port, "/api/incidents"))["incidents"]
                               if i["failure"] == "rank_hang" and i["initiator"]["step"] == 3]):
            assert time.monotonic() < deadline, get(port, "/api/incidents")
            time.sleep(0.2)
        stalled = stalled[0]
        assert stalled["initiator"]["rank"] is None  # the logs alone cannot tell
        asyncio.run(publish(broker.url, [
            (topic(JOB, "stacks", "node-a"), b'{"schema": 1, "job": "j-stk", "host": "x", "ranks": "not a list"}'),
            (topic(JOB, "stacks", "node-a"), node_summary("node-a", [0, 1])),
            (topic(JOB, "stacks", "node-b"), node_summary("node-b", [2, 3])),
        ]))
        inc = hang(port, lambda i: i["initiator"]["rank"] is not None)
        metrics = get(port, "/metrics")
    assert inc["id"] == stalled["id"] and inc["initiator"]["rank"] == 2
    assert inc["stacks"]["waiting"] == [0, 1, 3] and inc["stacks"]["sampled"] == 4
    assert inc["stacks"]["frames"][:2] == ["threading.py:327 Condition.wait", "queue.py:171 Queue.get"]
    assert 'rankwatch_dropped_total{reason="mqtt_bad_payload"} 1.0' in metrics  # validated, counted
