"""What keeps the pages safe on a shared node: a Host-header check against DNS rebinding, an
Origin check on requests that change something, and strict response headers.

A DNS-rebinding page reaches a loopback server under its own host name, so a request whose
Host is not a name this server answers to is refused (403). IP literals and ``localhost``
are always accepted (a rebinding attack needs a DNS name of its own); other names must be
allowed explicitly. Every response carries a Content-Security-Policy that allows no
external fetch at all: pages load their scripts and styles from this server only, and the
rendered report (inline styles, no scripts) is sandboxed.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable, Iterable
from urllib.parse import urlsplit

from aiohttp import web

__all__ = ["PAGE_CSP", "REPORT_CSP", "guard_middleware", "host_name", "is_loopback"]

PAGE_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            "frame-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'")
# the report is one self-contained document: inline CSS and SVG, never a script
REPORT_CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; base-uri 'none'; "
              "frame-ancestors 'self'; sandbox")

_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def host_name(host_header: str) -> str:
    """The name part of a Host header (``[::1]:80`` → ``::1``, ``Example.org.:8080`` → ``example.org``)."""
    h = host_header.strip().lower()
    if h.startswith("["):
        return h[1:h.find("]")] if "]" in h else h[1:]
    if h.count(":") == 1:
        h = h.rsplit(":", 1)[0]
    return h.rstrip(".")


def is_loopback(host: str) -> bool:
    if host in ("localhost", "") or host.endswith(".localhost"):
        return host != ""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _host_ok(name: str, allowed: frozenset[str]) -> bool:
    if name in allowed or name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def guard_middleware(allowed_hosts: Iterable[str], exempt: Iterable[str] = ()) -> Callable[..., Awaitable[web.StreamResponse]]:
    """A middleware that checks Host (and Origin on POST) and adds the security headers.

    ``exempt``: paths served to machines rather than browsers (``/metrics``, ``/healthz``),
    whose callers (Prometheus, kubelet probes) may use any name; they get the headers only.
    """
    allowed = frozenset(host_name(h) for h in allowed_hosts if h)
    skip = frozenset(exempt)

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path not in skip:
            name = host_name(request.headers.get("Host", ""))
            if not name or not _host_ok(name, allowed):
                return _secure(web.Response(status=403, text=f"rankwatch: host {name!r} is not allowed "
                                            "(DNS rebinding protection; see --allow-host)\n"))
            origin = request.headers.get("Origin")
            if (request.method not in ("GET", "HEAD", "OPTIONS") and origin is not None
                    and urlsplit(origin).netloc.lower() != request.headers.get("Host", "").strip().lower()):
                return _secure(web.Response(status=403, text="rankwatch: cross-origin request refused\n"))
        resp = await handler(request)
        return _secure(resp)

    return guard


def _secure(resp: web.StreamResponse) -> web.StreamResponse:
    for k, v in _HEADERS.items():
        resp.headers.setdefault(k, v)
    resp.headers.setdefault("Content-Security-Policy", PAGE_CSP)
    return resp
