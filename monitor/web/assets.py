"""The pages' own files (HTML, CSS, JavaScript), shipped as package data and served from memory."""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import files

from aiohttp import web

__all__ = ["asset", "page", "static_route"]

_TYPES = {".html": "text/html", ".css": "text/css", ".js": "text/javascript"}


@lru_cache(maxsize=32)
def asset(name: str) -> bytes:
    """The bytes of ``monitor/web/static/<name>`` (``KeyError`` when there is no such file)."""
    res = files("monitor.web").joinpath("static", name)
    if "/" in name or name.startswith(".") or not res.is_file():
        raise KeyError(name)
    return res.read_bytes()


def _response(name: str) -> web.Response:
    ctype = _TYPES.get(name[name.rfind("."):], "application/octet-stream")
    return web.Response(body=asset(name), content_type=ctype, charset="utf-8",
                        headers={"Cache-Control": "no-cache"})


def page(name: str) -> web.Response:
    return _response(name)


async def static_route(request: web.Request) -> web.Response:
    """``GET /static/{name}``: only the files in the package's static folder."""
    name = request.match_info["name"]
    try:
        return _response(name)
    except KeyError:
        raise web.HTTPNotFound() from None
