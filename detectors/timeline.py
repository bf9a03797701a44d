"""Per-rank series and incident marks for the HTML report's timeline (pure; no I/O).

``build_timeline(state, incidents)`` takes the detect stage's ``JobState`` and the report's
incident dicts (the JSON contract) and returns rows (one per rank, plus a "job" row for
findings no rank can be named for), per-rank ``(x, loss, loss_scale)`` series, and one
mark per initiator and per collateral report. The x axis is the training step when the
logs have steps, else the log time, else the line order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from detectors.detect import JobState
from detectors.symptoms import rank_series

__all__ = ["Mark", "Point", "Timeline", "build_timeline"]

MAX_POINTS_PER_RANK = 2000


@dataclass(slots=True)
class Point:
    x: float
    loss: float | None  # nan/inf kept: the chart marks them
    loss_scale: float | None


@dataclass(slots=True)
class Mark:
    rank: int | None  # None: the job row (the logs cannot tell which rank)
    x: float | None
    kind: str  # "initiator" | "collateral"
    failure: str
    severity: str
    incident: str
    title: str
    text: str  # the evidence line (or what the collateral entry says)
    approx: bool = False  # no step/time of its own: placed at the rank's last position


@dataclass
class Timeline:
    axis: str  # "step" | "time" | "order"
    rows: list[int | None]
    series: dict[int | None, list[Point]] = field(default_factory=dict)
    marks: list[Mark] = field(default_factory=list)
    x_min: float = 0.0
    x_max: float = 1.0

    @property
    def has_loss(self) -> bool:
        return any(p.loss is not None for pts in self.series.values() for p in pts)


def _thin(points: list[Point], cap: int = MAX_POINTS_PER_RANK) -> list[Point]:
    if len(points) <= cap:
        return points
    stride = math.ceil(len(points) / cap)
    keep = points[::stride]
    # never thin away a non-finite loss: it is what the chart is for
    bad = [p for p in points if p.loss is not None and not math.isfinite(p.loss)][:50]
    return sorted({id(p): p for p in keep + bad + [points[-1]]}.values(), key=lambda p: p.x)


def _times(state: JobState) -> dict[tuple[str, int], tuple[float | None, int | None]]:
    """(path, line) → (time, step) of everything the detect stage kept."""
    out: dict[tuple[str, int], tuple[float | None, int | None]] = {}
    for f in state.findings:
        for s in f.evidence:
            out.setdefault((s.path, s.line), (f.time, f.step))
    for ev in [*state.exits, *state.teardowns]:
        out.setdefault((ev.source.path, ev.source.line), (ev.time, ev.step))
    return out


def build_timeline(state: JobState, incidents: list[dict[str, Any]]) -> Timeline:
    raw = rank_series(state)
    index = _times(state)
    have_steps = any(p.step is not None for pts in raw.values() for p in pts) or any(
        inc["initiator"].get("step") is not None for inc in incidents)
    have_times = any(p.time is not None for pts in raw.values() for p in pts) or any(
        t is not None for t, _ in index.values())
    axis = "step" if have_steps else ("time" if have_times else "order")

    def x_of(step: int | None, time: float | None, order: int | None) -> float | None:
        if axis == "step":
            return float(step) if step is not None else None
        if axis == "time":
            return time
        return float(order) if order is not None else None

    series: dict[int | None, list[Point]] = {}
    for rank, pts in raw.items():
        out = [Point(x, p.loss, p.loss_scale) for p in pts if (x := x_of(p.step, p.time, p.order)) is not None]
        if out:
            series[rank] = _thin(sorted(out, key=lambda p: p.x))

    marks: list[Mark] = []
    for n, inc in enumerate(incidents):
        ini = inc["initiator"]
        ev0 = ini["evidence"][0] if ini.get("evidence") else None
        t, _ = index.get((ev0["path"], ev0["line"]), (None, None)) if ev0 else (None, None)
        order = ev0["line"] if ev0 else n
        marks.append(Mark(ini.get("rank"), x_of(ini.get("step"), t, order), "initiator", inc["failure"], inc["severity"],
                          inc["id"], inc["title"], ev0["text"] if ev0 else inc["title"]))
        for c in inc.get("collateral") or []:
            ev = c.get("evidence") or {}
            ct, cstep = index.get((ev.get("path", ""), ev.get("line", -1)), (None, None))
            step = c.get("step") if c.get("step") is not None else cstep
            what = f"{c['failure']} (collateral of {inc['failure']})"
            if ev:
                what += f" — {ev.get('path')}:{ev.get('line')}"
            marks.append(Mark(c.get("rank"), x_of(step, ct, ev.get("line")), "collateral", c["failure"], inc["severity"],
                              inc["id"], inc["title"], what))

    xs = [p.x for pts in series.values() for p in pts] + [m.x for m in marks if m.x is not None]
    x_min, x_max = (min(xs), max(xs)) if xs else (0.0, 1.0)
    if x_max <= x_min:
        x_max = x_min + 1.0
    for m in marks:
        if m.x is None:
            row = series.get(m.rank)
            m.x = row[-1].x if row else x_max
            m.approx = True

    rows: set[int | None] = set(series) | {m.rank for m in marks}
    rows |= set(state.seen_global)  # every rank the report lists, even a silent one
    rows |= {lr for lr in state.seen_local if not state.multi_node and lr not in state.local_to_global}
    ranked = sorted(r for r in rows if r is not None)
    ordered: list[int | None] = [*ranked, None] if None in rows else list(ranked)
    return Timeline(axis, ordered, series, marks, x_min, x_max)
