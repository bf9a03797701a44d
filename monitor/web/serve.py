"""``rankwatch serve``: a page on this machine where logs are pasted or dropped and diagnosed.

Routes: ``GET /`` the page; ``GET /static/{name}`` its script and style; ``GET /api/limits``;
``POST /api/diagnose`` (multipart: pasted ``text``, or ``path`` + ``file`` pairs) → progress
lines, then the diagnosis as JSON plus the id of its rendered report (NDJSON); ``GET /report/{id}.html`` (the same
HTML as ``diagnose --format html``; ``?redact=1`` the ``--redact`` version, ``&download=1``
as an attachment) and ``GET /report/{id}.md``. Uploads are held in memory only, bounded by
``max_bytes``; diagnoses run in a worker thread (at most two at a time) so the page stays
responsive.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from aiohttp import web

from monitor.diagnose import diagnose_files
from monitor.inputs import from_memory
from monitor.web.assets import page, static_route
from monitor.web.guard import REPORT_CSP, guard_middleware, is_loopback
from monitor.web.results import Result, Results
from monitor.web.uploads import PASTE_NAME, UploadError, read_upload

__all__ = ["ServeOptions", "make_app", "run_server"]

PROGRESS_EVERY = 0.25  # seconds between progress lines of a long diagnosis


@dataclass
class ServeOptions:
    host: str = "127.0.0.1"
    port: int = 19480
    allow_hosts: list[str] = field(default_factory=list)
    max_bytes: int = 256 << 20
    max_files: int = 10_000


def job_name(paths: list[str]) -> str:
    """The dropped folder's name when every file is under one; else the file's or a generic name."""
    tops = {PurePosixPath(p).parts[0] for p in paths if "/" in p.strip("/")}
    if len(tops) == 1 and all("/" in p.strip("/") for p in paths):
        return tops.pop()
    if len(paths) == 1:
        return "pasted log" if paths[0] == PASTE_NAME else PurePosixPath(paths[0]).name
    return "dropped logs"


def diagnose_upload(items: list[tuple[str, bytes]],
                    progress: Callable[[int], None] | None = None) -> tuple[Result, dict[str, Any]]:
    """Diagnose files held in memory (relative path, content) as one job, like ``diagnose DIR``."""
    files, notes = from_memory(items)
    t0 = time.perf_counter()
    res = diagnose_files(files, notes, job_name([p for p, _ in items]), progress=progress)
    meta = {"files": len(files), "bytes": res.bytes_read, "lines": res.lines,
            "seconds": round(time.perf_counter() - t0, 3)}
    return Result(res.report, res.state), meta


def make_app(opts: ServeOptions) -> web.Application:
    results = Results()
    busy = asyncio.Semaphore(2)
    # a multipart body is read part by part (uploads.py bounds it); this caps anything else
    app = web.Application(middlewares=[guard_middleware([opts.host, *opts.allow_hosts])],
                          client_max_size=opts.max_bytes + (1 << 20))

    async def index(request: web.Request) -> web.Response:
        return page("paste.html")

    async def limits(request: web.Request) -> web.Response:
        return web.json_response({"max_bytes": opts.max_bytes, "max_files": opts.max_files})

    async def diagnose(request: web.Request) -> web.StreamResponse:
        """Answers NDJSON: ``{"progress": {"bytes", "total"}}`` lines while the diagnosis runs
        (the page shows them), then one ``{"result": …}`` line."""
        try:
            up = await read_upload(request, opts.max_bytes, opts.max_files)
        except UploadError as exc:
            return web.json_response({"error": str(exc)}, status=exc.status)
        files, notes = from_memory(up.items)
        if not files:
            return web.json_response({"error": "no readable log files in what was dropped ("
                                      + "; ".join(notes[:5]) + ")"}, status=422)
        resp = web.StreamResponse(headers={"Content-Type": "application/x-ndjson; charset=utf-8",
                                           "Cache-Control": "no-store"})
        await resp.prepare(request)
        done = _Counter()
        total = sum(len(d) for _, d in up.items)
        await resp.write(_line({"progress": {"bytes": 0, "total": total}}))  # received; diagnosing
        async with busy:
            work = asyncio.ensure_future(asyncio.to_thread(diagnose_upload, up.items, done))
            while not work.done():
                await asyncio.wait({work}, timeout=PROGRESS_EVERY)
                if not work.done():
                    await resp.write(_line({"progress": {"bytes": done.n, "total": total}}))
            result, meta = work.result()
        rid = results.add(result)
        await resp.write(_line({"result": {"id": rid, "report": result.report, **meta}}))
        await resp.write_eof()
        return resp

    def _report(fmt: str) -> Callable[[web.Request], Any]:
        async def handler(request: web.Request) -> web.Response:
            res = results.get(request.match_info["id"])
            if res is None:
                raise web.HTTPNotFound(text="this report is no longer in memory: diagnose the logs again\n")
            redacted = request.query.get("redact") == "1"
            text = res.render(fmt, redacted)
            headers = {"Cache-Control": "no-store", "Content-Security-Policy": REPORT_CSP}
            if request.query.get("download") == "1":
                name = f"rankwatch-report{'-redacted' if redacted else ''}.{'html' if fmt == 'html' else 'md'}"
                headers["Content-Disposition"] = f'attachment; filename="{name}"'
            return web.Response(text=text, content_type="text/html" if fmt == "html" else "text/markdown",
                                charset="utf-8", headers=headers)
        return handler

    app.router.add_get("/", index)
    app.router.add_get("/static/{name}", static_route)
    app.router.add_get("/api/limits", limits)
    app.router.add_post("/api/diagnose", diagnose)
    app.router.add_get("/report/{id}.html", _report("html"))
    app.router.add_get("/report/{id}.md", _report("markdown"))
    return app


class _Counter:
    """Bytes diagnosed so far (written by the worker thread, read by the loop)."""

    def __init__(self) -> None:
        self.n = 0

    def __call__(self, n: int) -> None:
        self.n += n


def _line(obj: Any) -> bytes:
    return (json.dumps(obj, ensure_ascii=False) + "\n").encode()


def url_of(host: str, port: int) -> str:
    return f"http://{'[' + host + ']' if ':' in host else host}:{port}/"


async def run_server(opts: ServeOptions, log: Callable[[str], None]) -> None:
    """Serve until cancelled (Ctrl-C); says the URL once the socket is bound."""
    # one throw-away diagnosis now (scan database, catalog, renderer), so the first paste is fast
    warm, _ = await asyncio.to_thread(diagnose_upload, [(PASTE_NAME, b"[rank0]: ValueError: warm-up\n")])
    await asyncio.to_thread(warm.render, "html", True)
    runner = web.AppRunner(make_app(opts), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, opts.host, opts.port)
    await site.start()
    sockets = getattr(site._server, "sockets", None) or []
    port = int(sockets[0].getsockname()[1]) if sockets else opts.port
    if not is_loopback(opts.host):
        log(f"rankwatch: warning: listening on {opts.host}, reachable from other machines; anyone who can reach "
            "it can diagnose logs here (uploads stay in memory); a browser that uses a host name needs --allow-host NAME")
    log(f"rankwatch: serving {url_of(opts.host, port)} — paste a log or drop a folder; nothing leaves this machine "
        "(Ctrl-C to stop)")
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
