"""Incidents + catalog → the diagnosis report (the DESIGN.md JSON contract).

``build_report`` is pure: the same state gives the same report, byte for byte.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from detectors.catalog import Catalog, Stack
from detectors.correlate import Incident, incidents
from detectors.detect import JobState
from detectors.redact import redact

__all__ = ["SCHEMA_VERSION", "build_report", "choose_stack", "incident_dict"]

SCHEMA_VERSION = 1


def choose_stack(framework: str | None) -> Stack:
    try:
        return Stack(framework) if framework else Stack.PYTORCH
    except ValueError:
        return Stack.PYTORCH


def _iso(t: float | None) -> str | None:
    if t is None:
        return None
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def incident_dict(inc: Incident, catalog: Catalog, stack: Stack, status: str = "final") -> dict[str, Any]:
    entry = catalog[inc.failure]
    fix = entry.fix.get(stack) or entry.fix[Stack.PYTORCH]
    used = stack if stack in entry.fix else Stack.PYTORCH
    fix_text = fix.change + (f"\n{fix.snippet}" if fix.snippet else "")
    return {
        "id": inc.id,
        "status": status,
        "severity": inc.severity,
        "failure": inc.failure,
        "title": inc.title,
        "hardware": inc.hardware,
        "initiator": {
            "rank": inc.rank,
            "step": inc.step,
            "time": _iso(inc.time),
            "evidence": [{"path": s.path, "line": s.line, "text": s.text} for s in inc.evidence],
            "rank_from": inc.data.get("rank_from") if inc.rank is not None else None,
            "inferred": bool(inc.data.get("inferred")) and inc.rank is not None,
        },
        "collateral": inc.collateral,
        "root_cause": [*inc.narrative, *entry.root_causes[:3]],
        "fix": fix_text,
        "fix_stack": used.value,
        "fix_why": fix.why,
        "verify": entry.verify,
        "related": entry.related,
        **({"stacks": inc.data["stacks"]} if inc.data.get("stacks") else {}),
    }


def build_report(state: JobState, files: int = 0, notes: list[str] | None = None, ended: bool = False) -> dict[str, Any]:
    ctx = state.context()
    ranks = sorted(state.seen_global | {lr for lr in state.seen_local if not state.multi_node and lr not in state.local_to_global})
    stack = choose_stack(ctx.get("framework"))
    incs = incidents(state, ended)
    return redact({  # secrets in evidence never leave the machine (detectors/redact.py)
        "schema": SCHEMA_VERSION,
        "job": state.job,
        "ranks": ranks,
        "context": {
            "precision": ctx.get("precision"),
            "loss_scaling": ctx.get("loss_scaling"),
            "gpu": ctx.get("gpu"),
            "framework": ctx.get("framework"),
            "world_size": ctx.get("world_size"),
        },
        "incidents": [incident_dict(i, state.catalog, stack) for i in incs],
        "files": files,
        "notes": notes or [],
    })
