"""The engine's shared types, one module for every stage: events (parse → detect),
sample and loss-scale records (detect's state), findings (detect → correlate) and
incidents (correlate → report). Every other ``detectors`` module may import this one;
it imports none of them (an import-linter contract in ``pyproject.toml``).

Events are plain slotted dataclasses: they are built on the hot path, one per candidate
line, so they carry no validation. Pydantic models live at the edges (catalog, reports).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = ["Event", "EventKind", "Finding", "Incident", "RankKey", "Role", "SampleRec", "ScaleMove", "Source", "key_of"]

RankKey = tuple[str, int] | None  # ("g", global) | ("l", local) | None (unknown)


class EventKind(StrEnum):
    SAMPLE = "sample"  # training metrics of one step: loss, grad_norm, loss_scale, ...
    MATCH = "match"  # a line matched a catalog fingerprint (data: named groups)
    EXIT = "exit"  # a launcher reported how a worker process ended
    TEARDOWN = "teardown"  # a launcher tore a worker down (SIGTERM to a pid, ...)
    CONTEXT = "context"  # job context: precision, loss scaling, gpu, framework, world size
    RANKMAP = "rankmap"  # a line that ties a host/pid/device to a global rank
    PROGRESS = "progress"  # a progress counter (tqdm n/total) without metrics
    BLOCK = "block"  # a rank-tagged block (a traceback) starts here: an untagged line just above is that rank's


class Role(StrEnum):
    CAUSE = "cause"
    COLLATERAL = "collateral"
    BENIGN = "benign"


@dataclass(slots=True, frozen=True)
class Source:
    """Where an event came from: file path, 1-based line number and the line text."""

    path: str
    line: int
    text: str


@dataclass(slots=True)
class Event:
    kind: EventKind
    source: Source
    rank: int | None = None  # global rank, when the path or a prefix says so
    local_rank: int | None = None  # local rank (torchrun `[defaultN]:`, `local_rank: N`)
    host: str | None = None
    time: float | None = None  # UTC epoch seconds from the line's timestamp, if any
    step: int | None = None  # training step (iteration) the line belongs to, if known
    failure: str | None = None  # catalog id for MATCH events
    data: dict[str, Any] = field(default_factory=dict)
    # where ``rank`` came from: path, prefix, message, block, launcher, nccl_tree, gpu_index (weakest)
    rank_from: str | None = None


@dataclass(slots=True)
class Finding:
    """One detector verdict about one rank (or the job, when ``rank`` is None)."""

    failure: str
    role: Role
    priority: int  # higher outranks lower when choosing an initiator
    rank: int | None
    step: int | None
    time: float | None
    order: int  # global arrival order: the deterministic last tie-breaker
    evidence: list[Source]
    severity: str = "critical"
    local: bool = True  # True when the finding is about this rank's own state
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class SampleRec:
    """One metric line of one rank as the detect stage keeps it."""

    step: int | None
    order: int
    time: float | None
    source: Source
    data: dict[str, Any]


@dataclass(slots=True)
class ScaleMove:
    """The loss scale went down (an overflow skipped a step), as far as the logs say."""

    step: int | None
    order: int
    time: float | None
    source: Source
    from_scale: float | None
    to_scale: float | None
    hysteresis: bool = False
    initial: float | None = None  # the scaler's fixed starting scale, where the catalog knows it
    logged: bool = False  # read off a metric line's scale column, no overflow message of its own
    regrown: bool = False  # the scaler said it grew its scale back since the move before: not a copy of it
    glued: bool = False  # its line holds a second copy of the same report: several processes write this stream


@dataclass
class Incident:
    """One job-level verdict: the initiating failure and rank, its evidence and collateral."""

    id: str
    failure: str
    severity: str
    title: str
    hardware: bool
    rank: int | None
    step: int | None
    time: float | None
    evidence: list[Source]
    collateral: list[dict[str, Any]]
    narrative: list[str]
    data: dict[str, Any] = field(default_factory=dict)
    status: str = "final"


def key_of(rank: int | None, local: int | None) -> RankKey:
    """The detect stage's per-rank key: a global rank, else a local one, else unknown."""
    if rank is not None:
        return ("g", rank)
    if local is not None:
        return ("l", local)
    return None
