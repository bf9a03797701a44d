"""The component contract, for every registered sink (one parametrised compliance test),
and the webhook sink against a real local aiohttp receiver."""

from __future__ import annotations

import asyncio
import io
import json
import math
from collections.abc import Callable
from typing import Any

import pytest
from aiohttp import web
from rich.console import Console

from monitor.console import LiveConsole
from monitor.live import Change
from monitor.mqtt import Outbox
from monitor.sinks import SINKS, DropReason, Sink, build
from monitor.sinks.metrics import SinkCollector

SECRET = "hf_" + "Qw3rTy" * 6


def _change(n: int, kind: str = "open") -> Change:
    return Change(kind, {
        "id": f"cuda_oom-{n:010x}", "failure": "cuda_oom", "severity": "critical", "title": "CUDA out of memory",
        "initiator": {"rank": 3, "step": 7, "time": None, "evidence": [
            {"path": "rank_3.log", "line": 9, "text": f"OOM <!channel> token={SECRET} \x1b[2J"}]},
        "root_cause": ["batch too large"], "fix": "smaller batch", "verify": "run again", "revision": 1,
        "collateral": [], "hardware": False, "status": "open", "fix_stack": "pytorch", "fix_why": "less memory",
        "data": {"loss": math.nan},
    })


class Receiver:
    """A real HTTP server on loopback: answers each POST with the next status of ``script``."""

    def __init__(self, script: list[int]) -> None:
        self.script = list(script)
        self.got: list[dict[str, Any]] = []
        self.runner: web.AppRunner | None = None
        self.url = ""

    async def start(self) -> None:
        async def hook(request: web.Request) -> web.Response:
            status = self.script.pop(0) if self.script else 200
            if status == 200:
                self.got.append(await request.json())
            return web.Response(status=status, text="ok")

        app = web.Application()
        app.router.add_post("/hook", hook)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}/hook"

    async def stop(self) -> None:
        assert self.runner is not None
        await self.runner.cleanup()


Factory = Callable[[Receiver], Sink]
FACTORIES: dict[str, Factory] = {
    "console": lambda r: build("console", console=LiveConsole(Console(file=io.StringIO(), width=200))),
    "mqtt": lambda r: build("mqtt", outbox=Outbox(), job="j"),
    "webhook": lambda r: build("webhook", url=r.url, backoff=0.001),
}


def test_every_registered_sink_is_under_the_compliance_test() -> None:
    assert set(SINKS) == set(FACTORIES)


async def _drive(sink: Sink, items: list[Any], until: Callable[[], bool]) -> None:
    task = asyncio.create_task(sink.run())
    for it in items:
        sink.incident(it)
    while not until():
        await asyncio.sleep(0.01)
    sink.stop()
    await task


@pytest.mark.parametrize("kind", sorted(FACTORIES))
def test_sink_contract(kind: str) -> None:
    """received = emitted + dropped once everything settled; invalid input is counted as
    ``invalid``, never raised; the counters are exported."""

    async def scenario() -> Sink:
        rx = Receiver([])
        await rx.start()
        try:
            sink = FACTORIES[kind](rx)
            items: list[Any] = [_change(1), "not a change", Change("bogus", {}), _change(2, "update"), _change(1, "close")]
            await _drive(sink, items, lambda: sink.stats.settled == len(items))
            return sink
        finally:
            await rx.stop()

    sink = asyncio.run(scenario())
    st = sink.stats
    assert (st.received, st.emitted, st.dropped[DropReason.INVALID], st.errors) == (5, 3, 2, 0)
    families = {m.name: m for m in SinkCollector([sink]).collect()}
    assert families["rankwatch_sink_received"].samples[0].value == 5
    assert {s.labels["reason"]: s.value for s in families["rankwatch_sink_dropped"].samples}["invalid"] == 2


def test_webhook_posts_slack_compatible_json_to_a_real_receiver() -> None:
    async def scenario() -> tuple[Receiver, Sink]:
        rx = Receiver([500, 200, 404])  # one failure then success; the next change is refused for good
        await rx.start()
        try:
            sink = build("webhook", url=rx.url, backoff=0.001)
            await _drive(sink, [_change(1), _change(2)], lambda: sink.stats.settled == 2)
            return rx, sink
        finally:
            await rx.stop()

    rx, sink = asyncio.run(scenario())
    assert (sink.stats.emitted, sink.stats.errors, sink.stats.dropped[DropReason.REJECTED]) == (1, 1, 1)
    [doc] = rx.got
    assert doc["incident"]["id"] == "cuda_oom-0000000001" and doc["text"].startswith("[CRITICAL] incident open:")
    raw = json.dumps(doc, allow_nan=False)  # strict JSON: NaN went as "nan"
    assert SECRET not in raw and doc["incident"]["data"]["loss"] == "nan"  # redacted
    # what Slack shows: log text cannot ping a channel or drive a terminal
    assert "<!channel>" not in doc["text"] and "&lt;!channel&gt;" in doc["text"] and "\x1b" not in doc["text"]


def test_webhook_to_a_dead_receiver_gives_up_and_counts() -> None:
    async def scenario() -> Sink:
        rx = Receiver([])
        await rx.start()
        url = rx.url
        await rx.stop()  # nothing listens there any more
        sink = build("webhook", url=url, retries=2, backoff=0.001)
        await _drive(sink, [_change(1)], lambda: sink.stats.settled == 1)
        return sink

    sink = asyncio.run(scenario())
    assert sink.stats.dropped[DropReason.GAVE_UP] == 1 and sink.stats.errors == 2 and sink.stats.emitted == 0


def test_webhook_queue_is_bounded_and_counts_what_it_drops() -> None:
    sink = build("webhook", url="http://127.0.0.1:9/hook", max_queue=2)
    for n in range(5):
        sink.incident(_change(n))
    assert sink.stats.dropped[DropReason.QUEUE_FULL] == 3 and sink.stats.received == 5


def test_unknown_sink_is_one_message() -> None:
    with pytest.raises(ValueError, match="unknown sink 'nope'; known: console, mqtt, webhook"):
        build("nope")




def test_daemon_posts_incidents_to_the_webhook(tmp_path: Any) -> None:
    from monitor.config import Settings
    from monitor.daemon import Daemon

    logs = tmp_path / "logs"
    logs.mkdir()

    async def scenario() -> tuple[Receiver, Daemon]:
        rx = Receiver([])
        await rx.start()
        cfg = Settings(logs=[str(logs / "*.log")], job="j", metrics_addr="127.0.0.1:0", state_dir=tmp_path / "state",
                       host="h", console=False, inotify=False, webhook=rx.url)
        d = Daemon(cfg, log=lambda m: None)
        task = asyncio.create_task(d.run())
        while d.bound is None:
            await asyncio.sleep(0.01)
        (logs / "rank_0.log").write_text("[rank0]: torch.OutOfMemoryError: CUDA out of memory.\n")
        d.wake.set()
        while not rx.got:
            await asyncio.sleep(0.02)
        d.stopping.set()
        await task
        await rx.stop()
        return rx, d

    rx, d = asyncio.run(scenario())
    assert all(g["incident"]["initiator"]["rank"] == 0 for g in rx.got)
    assert d.sinks[0].stats.emitted == len(rx.got) == d.sinks[0].stats.received
