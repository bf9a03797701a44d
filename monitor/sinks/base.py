"""The component contract (after Vector's): what every sink counts and promises."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol, runtime_checkable

from monitor.live import Change

__all__ = ["DropReason", "Sink", "Stats", "admit", "valid_change"]


class DropReason(StrEnum):
    INVALID = "invalid"  # not an incident change this sink can deliver
    QUEUE_FULL = "queue_full"  # the bounded queue in front of a slow target was full (oldest dropped)
    REJECTED = "rejected"  # the target refused it for good (e.g. HTTP 4xx)
    GAVE_UP = "gave_up"  # retries exhausted, or still queued at shutdown


@dataclass
class Stats:
    """Every item received is, in the end, emitted once or dropped once (by reason); ``errors``
    counts failed attempts (a retried item that then succeeds is an error and an emission)."""

    received: int = 0
    emitted: int = 0
    dropped: Counter[DropReason] = field(default_factory=Counter)
    errors: int = 0

    @property
    def settled(self) -> int:
        return self.emitted + sum(self.dropped.values())


@runtime_checkable
class Sink(Protocol):
    kind: str
    stats: Stats

    def incident(self, change: Change) -> None:
        """Take one incident change; never blocks, never raises for a bad one (counts it)."""

    async def run(self) -> None:
        """Deliver until ``stop()``; then deliver or drop (``GAVE_UP``) what is left."""

    def stop(self) -> None: ...


def valid_change(change: object) -> bool:
    """An incident change as ``LiveEngine.evaluate`` makes them."""
    if not isinstance(change, Change) or change.kind not in ("open", "update", "close"):
        return False
    d = change.incident
    return isinstance(d, dict) and all(isinstance(d.get(k), str) for k in ("id", "failure", "severity", "title")) \
        and isinstance(d.get("initiator"), dict)


def admit(stats: Stats, change: object) -> bool:
    """The start of every sink's ``incident``: count it received; a malformed change is
    counted as dropped (``INVALID``) and refused."""
    stats.received += 1
    if valid_change(change):
        return True
    stats.dropped[DropReason.INVALID] += 1
    return False
