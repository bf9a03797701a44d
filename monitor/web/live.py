"""The daemon's own page: ``GET /`` shows the job's live incidents (open, updated, closed),
refreshed from ``/api/incidents`` without reloading; ``GET /report.html`` is the job so far
as the same HTML report as ``diagnose --format html``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from aiohttp import web

from detectors.detect import JobState
from monitor.report.html import render_report_html
from monitor.web.assets import page, static_route
from monitor.web.guard import REPORT_CSP, guard_middleware

__all__ = ["MACHINE_PATHS", "add_live_page"]

MACHINE_PATHS = ("/metrics", "/healthz")  # scrapers and probes: any Host name


def add_live_page(app: web.Application, report: Callable[[], dict[str, Any]], state: Callable[[], JobState | None],
                  allowed_hosts: Iterable[str]) -> None:
    """Add ``/``, ``/report.html`` and ``/static/…`` to the daemon's application, and the
    Host-header check and security headers to every route (``/metrics`` and ``/healthz``
    keep answering any Host)."""
    app.middlewares.append(guard_middleware(allowed_hosts, exempt=MACHINE_PATHS))

    async def index(request: web.Request) -> web.Response:
        return page("live.html")

    async def full_report(request: web.Request) -> web.Response:
        return web.Response(text=render_report_html(report(), state()), content_type="text/html", charset="utf-8",
                            headers={"Cache-Control": "no-store", "Content-Security-Policy": REPORT_CSP})

    app.router.add_get("/", index)
    app.router.add_get("/report.html", full_report)
    app.router.add_get("/static/{name}", static_route)
