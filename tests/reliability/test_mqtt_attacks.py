"""Hostile MQTT traffic (issue #14, defects 1, 2 and 5), against a real Mosquitto broker
and an in-process aggregator: a bad payload is counted and skipped, never fatal; findings
carry no secrets; a job's topics and payloads are its own."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from detectors.events import Event, EventKind, Source
from monitor.config import Settings
from monitor.daemon import Daemon
from monitor.mqtt import EventPayload, decode_event, encode_event, topic
from tests.mqtt_broker import Broker

SECRET = "hf_" + "a1B2c3D4e5" * 4
OOM = Event(EventKind.MATCH, Source("rank_2.log", 40, "torch.OutOfMemoryError: CUDA out of memory."), rank=2,
            failure="cuda_oom", data={"message": f"CUDA out of memory (HF_TOKEN={SECRET})"})



def _aggregator(tmp_path: Path, url: str | None = None, job: str = "team/a") -> Daemon:
    cfg = Settings(logs=[], job=job, metrics_addr="127.0.0.1:0", state_dir=tmp_path / "state", aggregate=True,
                   mqtt=url or "mqtt://127.0.0.1:1", host="agg", console=False)
    return Daemon(cfg, log=lambda m: None)


def _bad_payloads(job: str) -> list[bytes]:
    good = json.loads(encode_event(job, "node1", OOM).dump())
    return [
        json.dumps(dict(good, kind="bogus")).encode(),
        json.dumps(dict(good, data={"loss": {"__float__": "abc"}})).encode(),
        json.dumps(dict(good, data={"loss": {"nested": [1, 2]}})).encode(),
        json.dumps(dict(good, failure="no_such_failure")).encode(),
        json.dumps(dict(good, rank=-5)).encode(),
        json.dumps(dict(good, schema=99)).encode(),
        b"\xff\xfe not json",
        b"[]",
    ]


def test_attack_bad_mqtt_payload_is_counted_and_the_next_valid_one_still_counts(tmp_path: Path) -> None:
    d = _aggregator(tmp_path)
    t = topic("team/a", "findings", "2")
    for bad in _bad_payloads("team/a"):
        d._remote(t, bad)
    assert d.tailer.stats.dropped["mqtt_bad_payload"] == len(_bad_payloads("team/a"))
    d._remote(t, encode_event("team/a", "node1", OOM).dump())
    d.evaluate()
    assert [i["failure"] for i in d.engine.report()["incidents"]] == ["cuda_oom"]


def test_attack_payload_of_another_job_or_topic_is_refused(tmp_path: Path) -> None:
    d = _aggregator(tmp_path, job="team/a")
    # the other job's payload, even when a broker ACL let it reach our topic
    d._remote(topic("team/a", "findings", "2"), encode_event("team_a", "node1", OOM).dump())
    # our job's payload on a topic that names another rank
    d._remote(topic("team/a", "findings", "7"), encode_event("team/a", "node1", OOM).dump())
    assert d.tailer.stats.dropped["mqtt_wrong_job"] == 2
    d.evaluate()
    assert d.engine.report()["incidents"] == []


def test_attack_job_names_that_differ_never_share_a_topic() -> None:
    names = ["team/a", "team_a", "team+a", "team#a", "team%2Fa", "a/+/#", "x\x00y", "sweep[lr]"]
    topics = {topic(n, "findings", "0") for n in names}
    assert len(topics) == len(names)
    for t in topics:
        job_level = t.split("/")[2]
        assert not set(job_level) & set("/+#\x00")
    assert topic("j", "status", "host/with/slash") == "rankwatch/v1/j/status/host%2Fwith%2Fslash"


def test_attack_secret_in_exception_message_never_reaches_mqtt() -> None:
    raw = encode_event("j", "node1", OOM).dump().decode()
    assert SECRET not in raw and "[REDACTED" in json.loads(raw)["data"]["message"]
    back = decode_event(EventPayload.model_validate_json(raw))
    assert SECRET not in back.data["message"]


async def _get(port: int, path: str) -> tuple[int, dict]:
    def get() -> tuple[int, dict]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    return await asyncio.to_thread(get)


def test_attack_bad_mqtt_payload_does_not_stop_aggregator(broker: Broker, tmp_path: Path) -> None:
    """The reproduction of issue #14 defect 1, end to end through the broker."""
    import aiomqtt

    async def scenario() -> tuple[list[str], int, dict]:
        d = _aggregator(tmp_path, broker.url)
        run = asyncio.create_task(d.run())
        while d.bound is None or d.publisher is None or not d.publisher.connected.is_set():
            await asyncio.sleep(0.05)
        t = topic("team/a", "findings", "2")
        async with aiomqtt.Client("127.0.0.1", broker.port) as c:
            for bad in _bad_payloads("team/a"):
                await c.publish(t, bad, qos=1)
            await c.publish(t, encode_event("team/a", "node1", OOM).dump(), qos=1)
        while not d.engine.report()["incidents"]:
            await asyncio.sleep(0.05)
        failures = [i["failure"] for i in d.engine.report()["incidents"]]
        status, health = await _get(d.bound[1], "/healthz")
        d.stopping.set()
        await run
        return failures, status, {"health": health, "dropped": dict(d.tailer.stats.dropped)}

    failures, status, info = asyncio.run(scenario())
    assert failures == ["cuda_oom"]
    assert status == 200 and info["health"]["status"] == "ok"
    assert info["dropped"]["mqtt_bad_payload"] == len(_bad_payloads("team/a"))


def test_attack_dead_task_turns_healthz_unhealthy(tmp_path: Path) -> None:
    async def scenario() -> tuple[int, dict]:
        d = _aggregator(tmp_path)
        d.publisher = None  # no broker needed here
        await d.start_http()
        assert d.bound is not None

        async def crashes() -> None:
            raise RuntimeError("consumer crashed")

        task = d._watch("consumer", crashes())
        await asyncio.gather(task, return_exceptions=True)
        try:
            return await _get(d.bound[1], "/healthz")
        finally:
            assert d.runner is not None
            await d.runner.cleanup()

    status, body = asyncio.run(scenario())
    assert status == 503 and body["status"] == "unhealthy"
    assert body["failed"] == {"consumer": "RuntimeError: consumer crashed"}


def test_a_failing_verdict_does_not_stop_reading(tmp_path: Path) -> None:
    """A verdict that raises (a bug in the correlator on some input: round 14's list-valued event
    data did it through MQTT) used to end the reader task, after which no line was read. Now it is
    counted, logged, shown on /healthz, and reading goes on: once verdicts succeed again the lines
    read meanwhile are all there. The failure is injected into the daemon's verdict step, the rest
    is the real daemon tailing a real file."""
    logs = tmp_path / "logs"
    logs.mkdir()
    log = logs / "rank0.log"
    log.write_text("step 1 | loss 2.31\n")
    cfg = Settings(logs=[str(logs / "*.log")], job="team/a", metrics_addr="127.0.0.1:0", state_dir=tmp_path / "state",
                   host="node1", console=False)
    messages: list[str] = []
    d = Daemon(cfg, log=messages.append)
    real = d.evaluate
    broken = {"on": True}

    def evaluate() -> list:  # type: ignore[type-arg]
        if broken["on"]:
            raise ValueError("injected verdict failure")
        return real()

    d.evaluate = evaluate  # type: ignore[method-assign]

    async def until(cond: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + 60
        while not cond():
            assert not run.done(), f"the daemon stopped: {messages[-3:]}"
            assert time.monotonic() < deadline, f"not within 60 s: {what}"
            d.dirty = True
            d.wake.set()
            await asyncio.sleep(0.05)

    async def scenario() -> tuple[int, dict, int, dict, list[str]]:
        await until(lambda: d.bound is not None and bool(d.tailer.stats.dropped.get("verdict_failed")), "a failed verdict")
        with log.open("a") as f:
            f.write("[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
        await until(lambda: d.tailer.stats.bytes >= log.stat().st_size, "the new line read while verdicts fail")
        assert d.bound is not None
        sick = await _get(d.bound[1], "/healthz")
        broken["on"] = False
        await until(lambda: bool(d.engine.report()["incidents"]), "the incident once verdicts succeed")
        well = await _get(d.bound[1], "/healthz")
        failures = [i["failure"] for i in d.engine.report()["incidents"]]
        return sick[0], sick[1], well[0], {"failures": failures}, messages

    async def main() -> tuple[int, dict, int, dict, list[str]]:
        nonlocal run
        run = asyncio.create_task(d.run())
        try:
            return await scenario()
        finally:
            d.stopping.set()
            await asyncio.gather(run, return_exceptions=True)

    run: asyncio.Task[None]
    sick_status, sick_body, well_status, info, logged = asyncio.run(main())
    assert sick_status == 503 and sick_body["failed"] == {"verdict": "ValueError: injected verdict failure"}
    assert well_status == 200
    assert info["failures"] == ["cuda_oom"]
    assert d.tailer.stats.dropped["verdict_failed"] >= 1
    assert sum("verdict failed" in m for m in logged) == 1  # logged once, however often it failed
