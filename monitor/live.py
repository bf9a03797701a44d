"""The engine, live: one ``detectors.engine.Engine`` plus incident lifecycle and stalls.

``LiveEngine`` is a thin layer on top of the engine ``diagnose`` drives (``core``): every
event goes in through ``Engine.add`` (the tailer parses with ``core.parser`` and opens files
with ``core.open_file``; an ``error.json`` becomes events through the same
``detectors.filekind`` code as offline), every verdict comes from ``Engine.verdict()``.
``evaluate(now)`` diffs that verdict against what was already published:
a new incident is published ``open`` as soon as its first cause finding arrives,
re-published with a higher ``revision`` as collateral arrives, and ``closed`` after
``close_after`` seconds without change. An incident whose initiator changes (a better
cause arrived) gets a new id; the old one is closed with ``superseded_by``.

Stalls need time, not lines: when no rank has made progress for ``stall_factor`` × the
median step time (never less than ``stall_floor`` seconds) and the job has not ended, a
``rank_hang`` incident opens long before the NCCL watchdog fires; it names the rank
that is behind when one is, else ``null``. Time is injected (``now``), so tests step it.

While a stall is open, ``stall_step`` says after which step it started: the daemon then
samples every rank's stack (monitor/stacks.py) and hands the verdict back with
``set_stacks``; a verdict with an outlier names that rank in the stall incident, with its
frames as evidence (``stacks`` in the incident), before any collective timeout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from detectors.catalog import Catalog, load_catalog
from detectors.correlate import Incident
from detectors.detect import JobState
from detectors.diagnosis import choose_stack, incident_dict
from detectors.engine import Engine
from detectors.events import Event, Source
from detectors.redact import redact
from detectors.stacks import StackVerdict
from detectors.stall import HANG_LIKE, stall_incident

__all__ = ["Change", "LiveEngine"]


UNFINISHED_GRACE_S = 5.0  # live: a traceback read this recently may still be being written


@dataclass
class Published:
    incident: dict[str, Any]
    revision: int
    first_seen: float
    last_change: float
    status: str = "open"
    fingerprint: str = ""


@dataclass
class Change:
    kind: str  # "open" | "update" | "close"
    incident: dict[str, Any]


@dataclass
class LiveEngine:
    job: str
    close_after: float = 300.0
    stall_factor: float = 5.0
    stall_floor: float = 60.0
    catalog: Catalog = field(default_factory=load_catalog)
    core: Engine = field(init=False)  # the one engine (parse → detect → correlate), as offline
    state: JobState = field(init=False)  # ``core.state``, the job state (kept as a name for readers)
    published: dict[str, Published] = field(default_factory=dict)
    opened_total: dict[str, int] = field(default_factory=dict)  # failure → incidents opened
    started: float | None = None
    node_mode: bool = False  # one node of a multi-node job: collateral-only verdicts do not page
    max_ranks: int = 65536
    stall_step: int | None = None  # the open stall started after this step (None: no stall)
    stacks: tuple[int | None, StackVerdict, int] | None = None  # (stall step, verdict, ranks sampled)

    def __post_init__(self) -> None:
        self.core = Engine(self.job, catalog=self.catalog, max_ranks=self.max_ranks)
        self.state = self.core.state

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name == "state" and "core" in self.__dict__:
            self.core.state = value  # one state: assigning it (tests, tools) replaces the engine's

    def __getstate__(self) -> dict[str, Any]:
        d = self.__dict__.copy()
        d.pop("catalog", None)
        d.pop("state", None)  # it is core.state: saved once, with the engine
        return d

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__dict__.update(d)
        self.catalog = load_catalog()
        if d.get("core") is None:
            # a snapshot from before the live engine wrapped ``Engine`` holds the bare job state
            self.core = Engine(self.job, catalog=self.catalog, max_ranks=self.max_ranks)
            self.core.state = d["state"]
        self.state = self.core.state

    def feed(self, events: list[Event], now: float) -> None:
        """Events parsed by the tailer (with ``core.parser``) or received over MQTT."""
        if self.started is None:
            self.started = now
        self.core.add(events, now)

    # ------------------------------------------------------------------ verdicts
    def current(self, now: float | None = None) -> list[Incident]:
        incs = self.core.verdict()
        if now is not None and any(b[4] is not None and now - b[4] < UNFINISHED_GRACE_S
                                   for b in self.state.open_blocks.values()):
            # a traceback is still being written (Python writes stderr a line at a time): its
            # exception line is about to come, so it is not a traceback cut short, yet
            incs = [i for i in incs if not i.data.get("unfinished")]
        if now is not None:
            stall = self.stall(now, incs)
            if stall is not None:
                incs = [stall, *incs]
            elif (self.stacks is not None and incs and incs[0].failure in HANG_LIKE and self._stacks_current()
                  and incs[0].rank in (None, self.stacks[1].outlier)):
                # the timeouts arrived: the stacks stay evidence of the log-based verdict (when they agree)
                _with_stacks(incs[0], self.stacks[1], self.stacks[2], name=incs[0].rank is None)
        return incs

    def _stacks_current(self) -> bool:
        steps = [rs.last_step for rs in self.state.ranks.values() if rs.last_step is not None]
        return self.stacks is not None and self.stacks[0] == (max(steps) if steps else None)

    def set_stacks(self, step: int | None, verdict: StackVerdict, sampled: int) -> None:
        """The stack verdict for the stall that started after ``step``."""
        self.stacks = (step, verdict, sampled)

    def stall(self, now: float, incs: list[Incident]) -> Incident | None:
        inc = self._stall(now, incs)
        self.stall_step = inc.step if inc is not None else None
        if inc is not None and self.stacks is not None and self.stacks[0] == inc.step:
            _with_stacks(inc, self.stacks[1], self.stacks[2])
        return inc

    def _stall(self, now: float, incs: list[Incident]) -> Incident | None:
        return stall_incident(self.state, now, self.stall_floor, self.stall_factor, incs)

    def evaluate(self, now: float) -> list[Change]:
        """Diff the current verdict against what was published; return what changed."""
        stack = choose_stack(self.state.context().get("framework"))
        changes: list[Change] = []
        current = self.current(now)
        seen: set[str] = set()
        for inc in current:
            d = incident_dict(inc, self.catalog, stack, status="open")
            if self.node_mode and inc.rank is None and not inc.data.get("priority"):
                # this node only sees consequences: the aggregator names the initiator
                d["severity"] = "info"
                d["scope"] = "node"
            fp = repr((d["severity"], d["failure"], d["initiator"], d["collateral"], d.get("stacks")))
            seen.add(inc.id)
            pub = self.published.get(inc.id)
            if pub is None:
                pub = self.published[inc.id] = Published(d, 1, now, now, "open", fp)
                self.opened_total[inc.failure] = self.opened_total.get(inc.failure, 0) + 1
                changes.append(Change("open", self._stamp(pub)))
            elif pub.fingerprint != fp or pub.status == "closed":
                pub.incident, pub.fingerprint = d, fp
                pub.revision += 1
                pub.last_change = now
                pub.status = "open"
                changes.append(Change("update", self._stamp(pub)))
        for iid, pub in self.published.items():
            if pub.status == "closed":
                continue
            superseded = iid not in seen
            if superseded or now - pub.last_change >= self.close_after:
                pub.status = "closed"
                pub.revision += 1
                pub.last_change = now
                if superseded:
                    pub.incident["superseded_by"] = next((c for c in seen), None)
                changes.append(Change("close", self._stamp(pub)))
        return changes

    @staticmethod
    def _stamp(pub: Published) -> dict[str, Any]:
        d = dict(pub.incident)
        d["status"] = pub.status
        d["revision"] = pub.revision
        return redact(d)  # what is published (console, MQTT, /api/incidents) holds no secret

    def report(self, notes: list[str] | None = None) -> dict[str, Any]:
        """The same JSON as ``diagnose``, with live status and revisions; ``notes`` are the
        tailer's (files skipped, as ``diagnose`` says them)."""
        rep = self.core.report(notes=notes)
        by_id = {i["id"]: i for i in rep["incidents"]}
        out = []
        for iid, pub in self.published.items():
            d = self._stamp(pub)
            if iid in by_id and pub.status == "open":
                fresh = dict(by_id[iid])
                fresh["status"], fresh["revision"] = pub.status, pub.revision
                d = fresh
            out.append(d)
        order = {i["id"]: n for n, i in enumerate(rep["incidents"])}
        out.sort(key=lambda d: (d["status"] != "open", order.get(d["id"], 1 << 30)))
        rep["incidents"] = out
        return rep


def _with_stacks(inc: Incident, v: StackVerdict, sampled: int, name: bool = True) -> None:
    """Add a stack verdict to an incident: the outlier's frames become evidence, and with
    ``name`` the outlier becomes the initiating rank."""
    groups = [{"ranks": list(g.ranks), "where": g.place.kind.value, "name": g.place.name,
               "frames": [f.text() for f in g.place.frames]} for g in v.groups[:8]]
    inc.data["stacks"] = {"outlier": v.outlier, "reason": v.reason, "collective": v.collective,
                          "waiting": list(v.waiting), "frames": v.evidence(), "groups": groups,
                          "sampled": sampled, "unsampled": list(v.unsampled)}
    if v.outlier is None:
        inc.narrative.append(f"Stacks of {sampled} rank(s) sampled: {v.reason}.")
        return
    said = f"Live stacks (py-spy): {v.reason}. Rank {v.outlier} is where to look."
    if name:
        inc.rank = v.outlier
    if len(inc.narrative) > 1 and inc.narrative[1].startswith("Every rank stopped"):
        inc.narrative[1] = said  # the logs could not tell; the stacks can
    else:
        inc.narrative.insert(1, said)
    inc.evidence[:0] = [Source(f"py-spy dump of rank {v.outlier}", 0, t) for t in v.evidence()[:6]]
