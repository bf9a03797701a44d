"""Grafana dashboards, built with grafana-foundation-sdk: job, fleet, sidecars."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from detectors.catalog import Catalog
from monitor.kit.dashboards.daemon import daemon_dashboard
from monitor.kit.dashboards.fleet import fleet_dashboard
from monitor.kit.dashboards.job import JOB_VAR_QUERY, job_dashboard
from monitor.kit.dashboards.panels import to_json
from monitor.kit.options import DASHBOARD_DIR, Options

__all__ = ["JOB_VAR_QUERY", "dashboard_queries", "dashboards", "panels"]


def dashboards(cat: Catalog, opts: Options) -> dict[str, str]:
    """Repository-relative path → dashboard JSON."""
    boards = {"job": job_dashboard(cat, opts), "fleet": fleet_dashboard(opts), "daemon": daemon_dashboard(opts)}
    return {f"{DASHBOARD_DIR}/rankwatch-{name}.json": json.dumps(to_json(b), indent=2, ensure_ascii=False) + "\n"
            for name, b in boards.items()}


def panels(dashboard: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every panel, those inside collapsed rows included."""
    for p in dashboard["panels"]:
        yield p
        yield from p.get("panels", [])


def dashboard_queries(dashboard: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """(panel title, PromQL with Grafana variables, may be empty) for every panel target."""
    out = []
    for p in panels(dashboard):
        empty_ok = "noValue" in p.get("fieldConfig", {}).get("defaults", {})
        for t in p.get("targets", []):
            out.append((p["title"], t["expr"], empty_ok))
    return out
