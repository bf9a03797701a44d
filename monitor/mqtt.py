"""MQTT sinks and sources: sidecars publish what they parse, one aggregator correlates.

Topics (QoS 1; each payload is a JSON object with ``schema`` and ``job`` at its top level):

| topic | retained | payload |
|---|---|---|
| ``rankwatch/v1/<job>/findings/<rank>`` (``unknown`` when the rank is not known) | no | one parsed event (``EventPayload``) with a stable ``id`` |
| ``rankwatch/v1/<job>/incidents/<incident_id>`` | yes | the incident exactly as in the diagnose report, plus ``status``/``revision`` |
| ``rankwatch/v1/<job>/status/<host>`` | yes (last will: ``offline``) | ``StatusPayload`` |

Delivery: at least once. The publisher keeps a bounded outbox in front of one long-lived
connection: events queue in order (oldest dropped first when full, each drop counted in
``dropped["mqtt_outbox_full"]``), incidents coalesce to their latest revision (never
dropped). An item leaves the outbox only after the broker acknowledged it, so a broker
that goes away loses nothing that fits in the outbox; a redelivered message carries the
same ``id`` and consumers drop duplicates. Reconnection uses jittered exponential backoff.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import math
import random
import socket
import ssl
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal
from urllib.parse import quote, unquote, urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from detectors.events import Event, EventKind, Source
from detectors.redact import redact_text

__all__ = [
    "SCHEMA",
    "BrokerURL",
    "EventPayload",
    "Outbox",
    "Publisher",
    "StatusPayload",
    "decode_event",
    "encode_event",
    "parse_url",
    "topic",
    "topic_filter",
    "topic_segment",
]

SCHEMA: Literal[1] = 1
_SAFE_SEGMENT = "-._~"  # besides ASCII letters and digits, kept as they are in topic segments


def topic_segment(name: str) -> str:
    """``name`` as one MQTT topic level: percent-encoded, so distinct names never share a
    topic (``team/a`` → ``team%2Fa``, ``team_a`` stays ``team_a``) and ``/``, ``+``, ``#``,
    NUL and control characters can never split or widen a subscription."""
    return quote(name, safe=_SAFE_SEGMENT)


def topic(job: str, kind: str, leaf: str) -> str:
    return f"rankwatch/v1/{topic_segment(job)}/{kind}/{topic_segment(leaf)}"


def topic_filter(job: str, kind: str) -> str:
    """The subscription to every topic of ``kind`` of one job (and of no other job)."""
    return f"rankwatch/v1/{topic_segment(job)}/{kind}/#"


# ----------------------------------------------------------------------------- payloads
class _Payload(BaseModel):
    """Every payload: the producer builds it with this model and the consumer validates it
    with the same model (unknown fields, a wrong type or a value out of range is refused)."""

    model_config = ConfigDict(extra="forbid")
    schema_: Literal[1] = Field(default=SCHEMA, validation_alias="schema", serialization_alias="schema")
    job: str = Field(min_length=1, max_length=200)

    def dump(self) -> bytes:
        d = self.model_dump(mode="json", by_alias=True)
        return json.dumps(d, ensure_ascii=False, allow_nan=False).encode()


class EventPayload(_Payload):
    """One parsed event from a sidecar (the aggregator's input)."""

    id: str = Field(pattern=r"^[0-9a-f]{16}$")
    host: str = Field(min_length=1, max_length=255)
    kind: EventKind
    path: str = Field(max_length=4096)
    line: int = Field(ge=0)
    text: str
    rank: int | None = Field(None, ge=0)
    local_rank: int | None = Field(None, ge=0)
    time: float | None = None
    step: int | None = None
    failure: str | None = None
    data: dict[str, Any] = {}
    rank_from: str | None = Field(None, pattern=r"^(?:path|prefix|message|block|launcher|progress|nccl_tree|gpu_index)$")

    @field_validator("failure")
    @classmethod
    def _known_failure(cls, v: str | None) -> str | None:
        from detectors.catalog import load_catalog

        if v is not None and v not in load_catalog():
            raise ValueError("not a failure id of this catalog")
        return v

    @field_validator("data")
    @classmethod
    def _scalars(cls, v: dict[str, Any]) -> dict[str, Any]:
        for k, x in v.items():
            if isinstance(x, dict):
                if set(x) != {"__float__"} or x["__float__"] not in _NONFINITE:
                    raise ValueError(f"data.{k}: a non-finite number is {{\"__float__\": \"nan\"|\"inf\"|\"-inf\"}}")
            elif not (x is None or isinstance(x, str | int | float | bool)):
                raise ValueError(f"data.{k}: must be a string, number, boolean or null")
        return v


_NONFINITE = ("nan", "inf", "-inf")


class StatusPayload(_Payload):
    host: str
    status: Literal["online", "offline"]
    files: int = 0
    # the global ranks this node's log files belong to (from their paths): the aggregator learns
    # of a rank that never says anything (a silent hung rank) from here
    ranks: list[Annotated[int, Field(ge=0, lt=1 << 20)]] = Field(default_factory=list, max_length=65536)
    version: str = "0.1.0"


def _jsonable(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return {"__float__": "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")}
    if isinstance(v, str):
        return redact_text(v)  # exception messages carry tokens as often as the line does
    if isinstance(v, int | float | bool) or v is None:
        return v
    return redact_text(str(v))


def _unjson(v: Any) -> Any:
    if isinstance(v, dict) and "__float__" in v:
        return float(v["__float__"])
    return v


def event_id(host: str, ev: Event, generation: int = 0) -> str:
    key = f"{host}|{ev.source.path}|{generation}|{ev.source.line}|{ev.kind.value}|{ev.failure}|{ev.step}"
    if ev.kind is EventKind.CONTEXT and ev.data.get("key") == "last_notes":
        # a file's ranks' last notes, sent after a chunk (detectors/parse.py ``_last_notes``): not the
        # event of its line, which may be a CONTEXT event of the same line (the aggregator drops
        # a second event with one id)
        key += "|last_notes"
    return hashlib.sha1(key.encode()).hexdigest()[:16]


_RANK_SOURCES = ("path", "prefix", "message", "block", "launcher", "progress", "nccl_tree", "gpu_index")


def encode_event(job: str, host: str, ev: Event) -> EventPayload:
    return EventPayload(
        job=job, id=event_id(host, ev, int(ev.data.get("generation", 0) or 0)), host=host, kind=ev.kind,
        path=redact_text(ev.source.path), line=ev.source.line, text=redact_text(ev.source.text), rank=ev.rank, local_rank=ev.local_rank,
        time=ev.time, step=ev.step, failure=ev.failure, data={k: _jsonable(v) for k, v in ev.data.items()},
        rank_from=ev.rank_from if ev.rank_from in _RANK_SOURCES else None,
    )


def decode_event(p: EventPayload) -> Event:
    """An event from another node; its path is prefixed with the host so files never collide.
    ``p`` was validated by ``EventPayload``, so this cannot raise."""
    return Event(
        kind=p.kind, source=Source(f"{p.host}/{p.path}", p.line, redact_text(p.text)), rank=p.rank,
        local_rank=p.local_rank, host=p.host, time=p.time, step=p.step, failure=p.failure,
        data={k: _unjson(v) for k, v in p.data.items()}, rank_from=p.rank_from,
    )


# ----------------------------------------------------------------------------- broker URL
@dataclass(frozen=True)
class BrokerURL:
    host: str
    port: int
    tls: bool
    username: str | None
    password: str | None

    def safe(self) -> str:
        """The URL for logs: never the password."""
        user = f"{self.username}:***@" if self.username else ""
        return f"{'mqtts' if self.tls else 'mqtt'}://{user}{self.host}:{self.port}"


def parse_url(url: str) -> BrokerURL:
    """``mqtt://[user:pass@]host[:1883]`` or ``mqtts://...[:8883]`` (TLS)."""
    u = urlsplit(url)
    if u.scheme not in ("mqtt", "mqtts", "tcp", "ssl") or not u.hostname:
        raise ValueError("must look like mqtt://host:1883 or mqtts://user:password@host:8883")
    tls = u.scheme in ("mqtts", "ssl")
    try:
        port = u.port or (8883 if tls else 1883)
    except ValueError:
        raise ValueError("port must be 1-65535") from None
    return BrokerURL(u.hostname, port, tls, unquote(u.username) if u.username else None,
                     unquote(u.password) if u.password else None)


# ----------------------------------------------------------------------------- outbox
LATEST_INTERVAL = 2.0  # seconds: a superseding message (a file's last notes) is sent at most this often per key


@dataclass
class Outbox:
    """Events in order (bounded, oldest dropped and counted); incidents by id, latest revision;
    superseding events (each file's ranks' last notes, re-sent after nearly every chunk) by key:
    only the newest is kept, and one key is sent at most once per ``latest_interval``."""

    max_events: int = 50_000
    events: deque[tuple[str, bytes]] = field(default_factory=deque)
    incidents: OrderedDict[str, tuple[str, bytes]] = field(default_factory=OrderedDict)
    dropped: Counter[str] = field(default_factory=Counter)
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    latest_interval: float = LATEST_INTERVAL
    clock: Callable[[], float] = time.monotonic
    # key → (topic, payload, when it may be sent); key → when it was last sent
    latest: OrderedDict[str, tuple[str, bytes, float]] = field(default_factory=OrderedDict)
    latest_sent: dict[str, float] = field(default_factory=dict)

    def put_latest(self, key: str, t: str, payload: bytes) -> None:
        """A message that supersedes the one before it under ``key``: an unsent older one is
        replaced (and keeps its place and its time); a key sent less than ``latest_interval``
        ago waits for the rest of it. What the receiver holds is never older than that."""
        old = self.latest.get(key)
        if old is not None:
            due = old[2]
        else:
            due = max(self.clock(), self.latest_sent.get(key, -math.inf) + self.latest_interval)
        self.latest[key] = (t, payload, due)
        self.ready.set()

    def flush_latest(self) -> None:
        """Every waiting superseding message may go now (shutdown: nothing is held back)."""
        for key, (t, payload, _) in list(self.latest.items()):
            self.latest[key] = (t, payload, -math.inf)
        self.ready.set()

    def due_latest(self) -> tuple[str | None, float | None]:
        """The first key that may be sent now, else None and how long until one may."""
        now = self.clock()
        soonest: float | None = None
        for key, (_, _, due) in self.latest.items():
            if due <= now:
                return key, None
            soonest = due - now if soonest is None else min(soonest, due - now)
        return None, soonest

    def sent_latest(self, key: str, payload: bytes) -> None:
        """``payload`` under ``key`` was acknowledged: it leaves unless a newer one replaced it."""
        entry = self.latest.get(key)
        if entry is not None and entry[1] is payload:
            del self.latest[key]
        self.latest_sent[key] = self.clock()

    def put_event(self, t: str, payload: bytes) -> None:
        if len(self.events) >= self.max_events:
            self.events.popleft()
            self.dropped["mqtt_outbox_full"] += 1
        self.events.append((t, payload))
        self.ready.set()

    def put_incident(self, iid: str, t: str, payload: bytes) -> None:
        self.incidents[iid] = (t, payload)  # an older unsent revision is simply replaced
        self.incidents.move_to_end(iid)
        self.ready.set()

    def __len__(self) -> int:
        return len(self.events) + len(self.incidents) + len(self.latest)


# ----------------------------------------------------------------------------- publisher
class Publisher:
    """One long-lived connection that drains the outbox; reconnects with jittered backoff."""

    def __init__(self, url: BrokerURL, job: str, host: str | None = None, outbox: Outbox | None = None,
                 log: Callable[[str], None] = print, subscribe: str | list[str] | None = None,
                 on_message: Callable[[str, bytes], None] | None = None, cafile: str | None = None,
                 client_id: str | None = None, keepalive: int = 10) -> None:
        self.url = url
        self.job = job
        self.host = host or socket.gethostname()
        self.outbox = outbox or Outbox()
        self.log = log
        self.subscribe = subscribe
        self.on_message = on_message
        self.cafile = cafile
        self.client_id = client_id or f"rankwatch-{'agg' if subscribe else 'node'}-{self.host}-{job}"[:128]
        self.keepalive = keepalive
        self.connected = asyncio.Event()
        self.published = Counter[str]()
        self.errors = 0  # messages whose handler raised (counted, never fatal)
        self.connects = 0
        self.files = 0
        self.ranks: list[int] = []
        self.stopping = asyncio.Event()

    def status_topic(self) -> str:
        return topic(self.job, "status", self.host)

    def set_files(self, n: int, ranks: list[int] | None = None) -> None:
        """The node watches ``n`` log files now, of these global ranks: its retained status says
        so (when it changed)."""
        ranks = sorted(ranks or [])[:65536]
        if n != self.files or ranks != self.ranks:
            self.files, self.ranks = n, ranks
            self.outbox.put_incident(f"status/{self.host}", self.status_topic(), self._status("online"))

    def _status(self, status: Literal["online", "offline"]) -> bytes:
        return StatusPayload(job=self.job, host=self.host, status=status, files=self.files, ranks=self.ranks).dump()

    def _client(self) -> Any:
        import aiomqtt

        tls_context = None
        if self.url.tls:
            tls_context = ssl.create_default_context(cafile=self.cafile)
        return aiomqtt.Client(
            self.url.host, self.url.port, username=self.url.username, password=self.url.password,
            identifier=self.client_id, tls_context=tls_context, clean_session=False,
            will=aiomqtt.Will(self.status_topic(), self._status("offline"), qos=1, retain=True),
            keepalive=self.keepalive, timeout=10,
        )

    async def run(self) -> None:
        import aiomqtt

        backoff = 0.2
        while not self.stopping.is_set():
            try:
                async with self._client() as client:
                    self.connects += 1
                    backoff = 0.2
                    for sub in [self.subscribe] if isinstance(self.subscribe, str) else self.subscribe or []:
                        await client.subscribe(sub, qos=1)
                    # "online" once subscribed: from then on the broker routes every event to us
                    await client.publish(self.status_topic(), self._status("online"), qos=1, retain=True)
                    tasks = {asyncio.create_task(self._drain(client))}
                    if self.subscribe:
                        tasks.add(asyncio.create_task(self._read(client)))
                    self.connected.set()
                    try:
                        # whichever ends first decides: a dead connection ends the reader
                        # even while the outbox is empty, so we reconnect at once
                        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
                    finally:
                        self.connected.clear()
                        for t in tasks:
                            t.cancel()
                        await asyncio.gather(*tasks, return_exceptions=True)
                    for t in done:
                        if not t.cancelled() and t.exception() is not None:
                            raise t.exception()  # type: ignore[misc]
                    if not self.stopping.is_set():
                        raise aiomqtt.MqttError("the broker closed the subscription")
                    await client.publish(self.status_topic(), self._status("offline"), qos=1, retain=True)
            except aiomqtt.MqttError as exc:
                self.connected.clear()
                delay = min(30.0, backoff) * random.uniform(0.5, 1.5)
                self.log(f"rankwatch: MQTT broker {self.url.safe()} unavailable ({exc}); retrying in {delay:.1f}s; "
                         f"{len(self.outbox)} message(s) waiting")
                backoff = min(30.0, backoff * 2)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.stopping.wait(), timeout=delay)

    async def _read(self, client: Any) -> None:
        async for message in client.messages:
            if self.on_message is not None:
                payload = message.payload if isinstance(message.payload, bytes) else str(message.payload).encode()
                try:
                    self.on_message(str(message.topic), payload)
                except Exception as exc:  # one message never stops the consumer: counted, logged, next
                    self.errors += 1
                    self.log(f"rankwatch: MQTT message on {str(message.topic)!r} failed: {type(exc).__name__}: {exc}")

    async def _drain(self, client: Any) -> None:
        ob = self.outbox
        while True:
            if not len(ob):
                if self.stopping.is_set():
                    return
                ob.ready.clear()
                stop = asyncio.ensure_future(self.stopping.wait())
                ready = asyncio.ensure_future(ob.ready.wait())
                await asyncio.wait({stop, ready}, return_when=asyncio.FIRST_COMPLETED)
                stop.cancel()
                ready.cancel()
                continue
            if ob.incidents:
                iid, (t, payload) = next(iter(ob.incidents.items()))
                await client.publish(t, payload, qos=1, retain=True)
                # only now (acknowledged) may it leave; a newer revision may have replaced it meanwhile
                if ob.incidents.get(iid, (None, None))[1] is payload:
                    del ob.incidents[iid]
                self.published["status" if iid.startswith("status/") else "incident"] += 1
            elif ob.events:
                t, payload = ob.events[0]
                await client.publish(t, payload, qos=1, retain=False)
                if ob.events and ob.events[0][1] is payload:
                    ob.events.popleft()
                self.published["event"] += 1
            else:
                key, wait = ob.due_latest()
                if key is None:
                    # only superseding messages left, none due yet: wait for it (or for news)
                    ob.ready.clear()
                    stop = asyncio.ensure_future(self.stopping.wait())
                    ready = asyncio.ensure_future(ob.ready.wait())
                    await asyncio.wait({stop, ready}, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
                    stop.cancel()
                    ready.cancel()
                    if self.stopping.is_set():
                        ob.flush_latest()
                    continue
                t, payload, _ = ob.latest[key]
                await client.publish(t, payload, qos=1, retain=False)
                ob.sent_latest(key, payload)
                self.published["event"] += 1

    def stop(self) -> None:
        self.stopping.set()
