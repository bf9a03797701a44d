"""MQTT payload schemas: documented fields, stable ids, non-finite floats survive JSON."""

from __future__ import annotations

import json
import math

import pytest

from detectors.events import Event, EventKind, Source
from monitor.mqtt import EventPayload, Outbox, StatusPayload, decode_event, encode_event, parse_url, topic


def test_event_roundtrip_and_stable_id() -> None:
    ev = Event(EventKind.SAMPLE, Source("node0/rank_3.log", 12, "step 7 | loss nan"), rank=3, step=7,
               data={"loss": math.nan, "grad_norm": math.inf, "scope": "local"})
    p = encode_event("llama", "node-17", ev)
    doc = json.loads(p.dump())  # strict JSON: no NaN literals
    assert doc["schema"] == 1 and doc["job"] == "llama" and doc["host"] == "node-17"
    assert doc["data"]["loss"] == {"__float__": "nan"}
    assert encode_event("llama", "node-17", ev).id == p.id  # same line → same id (dedupe)
    other = Event(EventKind.SAMPLE, Source("node0/rank_3.log", 13, "x"), rank=3, step=8)
    assert encode_event("llama", "node-17", other).id != p.id
    back = decode_event(EventPayload.model_validate_json(p.dump()))
    assert back.rank == 3 and back.step == 7 and math.isnan(back.data["loss"]) and back.data["grad_norm"] == math.inf
    assert back.source.path == "node-17/node0/rank_3.log"  # nodes' files never collide


def test_status_payload() -> None:
    doc = json.loads(StatusPayload(job="j", host="h", status="offline").dump())
    assert doc == {"schema": 1, "job": "j", "host": "h", "status": "offline", "files": 0, "ranks": [], "version": "0.1.0"}
    doc = json.loads(StatusPayload(job="j", host="h", status="online", files=2, ranks=[4, 5]).dump())
    assert (doc["files"], doc["ranks"]) == (2, [4, 5])
    with pytest.raises(ValueError):  # validated at the edge: a rank far outside any job
        StatusPayload.model_validate_json('{"schema": 1, "job": "j", "host": "h", "status": "online", "ranks": [2000000]}')


def test_topics() -> None:
    assert topic("run/7", "findings", "3") == "rankwatch/v1/run%2F7/findings/3"
    assert topic("j", "incidents", "cuda_oom-abc") == "rankwatch/v1/j/incidents/cuda_oom-abc"


def test_url_parsing_masks_password() -> None:
    u = parse_url("mqtts://alice:s3cr%40t@broker.local")
    assert (u.host, u.port, u.tls, u.username, u.password) == ("broker.local", 8883, True, "alice", "s3cr@t")
    assert "s3cr" not in u.safe()
    assert parse_url("mqtt://127.0.0.1").port == 1883
    with pytest.raises(ValueError, match="mqtt://host"):
        parse_url("http://x")


def test_outbox_bounds_events_and_coalesces_incidents() -> None:
    ob = Outbox(max_events=3)
    for i in range(5):
        ob.put_event("t", str(i).encode())
    assert [p for _, p in ob.events] == [b"2", b"3", b"4"]
    assert ob.dropped["mqtt_outbox_full"] == 2
    ob.put_incident("a", "t/a", b"rev1")
    ob.put_incident("a", "t/a", b"rev2")
    assert list(ob.incidents.items()) == [("a", ("t/a", b"rev2"))] and len(ob) == 4


class _Clock:
    """A hand-moved clock: the outbox's interval is judged on it, never on the wall."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_superseding_message_replaces_the_unsent_one_and_waits_out_its_interval() -> None:
    clock = _Clock()
    ob = Outbox(clock=clock, latest_interval=2.0)
    ob.put_latest("notes|a.log", "t/0", b"v1")
    ob.put_latest("notes|a.log", "t/0", b"v2")  # nothing sent yet: v1 is gone, v2 keeps its place
    ob.put_latest("notes|b.log", "t/1", b"w1")
    assert len(ob) == 2 and ob.due_latest() == ("notes|a.log", None)
    ob.sent_latest("notes|a.log", b"v2")
    assert ob.due_latest() == ("notes|b.log", None)
    ob.sent_latest("notes|b.log", b"w1")
    assert len(ob) == 0
    # a.log changes again right after it was sent: it waits for the rest of the interval
    clock.now += 0.5
    ob.put_latest("notes|a.log", "t/0", b"v3")
    assert ob.due_latest() == (None, 1.5)
    clock.now += 1.5
    assert ob.due_latest() == ("notes|a.log", None)


def test_a_newer_message_put_while_the_older_was_in_flight_stays() -> None:
    clock = _Clock()
    ob = Outbox(clock=clock)
    ob.put_latest("k", "t", b"old")
    ob.put_latest("k", "t", b"new")  # arrived while b"old" was being published
    ob.sent_latest("k", b"old")
    assert [p for _, p, _ in ob.latest.values()] == [b"new"]


def test_shutdown_lets_every_waiting_message_go_at_once() -> None:
    clock = _Clock()
    ob = Outbox(clock=clock, latest_interval=60.0)
    ob.put_latest("k", "t", b"1")
    ob.sent_latest("k", b"1")
    ob.put_latest("k", "t", b"2")
    assert ob.due_latest() == (None, 60.0)
    ob.flush_latest()
    assert ob.due_latest() == ("k", None)
