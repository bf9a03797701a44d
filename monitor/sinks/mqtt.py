"""The MQTT sink: incident changes onto the publisher's outbox (retained, latest revision)."""

from __future__ import annotations

import asyncio
import json

from monitor.live import Change
from monitor.mqtt import SCHEMA, Outbox, topic
from monitor.sinks.base import DropReason, Stats, admit
from monitor.sinks.registry import register

__all__ = ["MqttSink"]


@register("mqtt")
class MqttSink:
    """Emitted means queued on the outbox, which owns delivery (acknowledged, never dropped:
    incidents coalesce to their latest revision)."""

    kind = "mqtt"

    def __init__(self, outbox: Outbox, job: str) -> None:
        self.outbox = outbox
        self.job = job
        self.stats = Stats()
        self.stopping = asyncio.Event()

    def incident(self, change: Change) -> None:
        if not admit(self.stats, change):
            return
        d = dict(change.incident, schema=SCHEMA, job=self.job)
        try:
            payload = json.dumps(d, ensure_ascii=False).encode()  # as before: NaN evidence values stay NaN
        except (TypeError, ValueError):
            self.stats.errors += 1
            self.stats.dropped[DropReason.INVALID] += 1
            return
        self.outbox.put_incident(d["id"], topic(self.job, "incidents", d["id"]), payload)
        self.stats.emitted += 1

    async def run(self) -> None:
        await self.stopping.wait()  # the Publisher task delivers the outbox

    def stop(self) -> None:
        self.stopping.set()
