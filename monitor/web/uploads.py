"""A ``POST /api/diagnose`` body → files in memory, bounded.

The browser sends ``multipart/form-data``: a ``text`` field (pasted text) and/or pairs of
``path`` (the file's path relative to the dropped folder) and ``file`` (its bytes). Nothing
is written to disk. Past ``max_bytes`` in all, or ``max_files`` files, the upload is
refused with a message that says the limit and what to do instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aiohttp import BodyPartReader, web

__all__ = ["PASTE_NAME", "Upload", "UploadError", "read_upload"]

PASTE_NAME = "pasted text"
_READ = 1 << 20


class UploadError(Exception):
    """The upload cannot be diagnosed; ``status`` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Upload:
    items: list[tuple[str, bytes]] = field(default_factory=list)  # (relative path, content)
    total: int = 0


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.0f} MiB" if n >= 1 << 20 else f"{n} bytes"


def too_large(max_bytes: int) -> str:
    return (f"the logs are larger than this page accepts ({_mib(max_bytes)} in all): diagnose them with "
            "'rankwatch diagnose DIR' on the command line, or start 'rankwatch serve --max-bytes N'")


async def _read_part(part: BodyPartReader, up: Upload, max_bytes: int) -> bytes:
    chunks: list[bytes] = []
    while chunk := await part.read_chunk(_READ):
        up.total += len(chunk)
        if up.total > max_bytes:
            raise UploadError(too_large(max_bytes), status=413)
        chunks.append(chunk)
    return b"".join(chunks)


async def read_upload(request: web.Request, max_bytes: int, max_files: int) -> Upload:
    if request.content_length is not None and request.content_length > max_bytes + 64 * (max_files + 16) + (1 << 20):
        raise UploadError(too_large(max_bytes), status=413)
    try:
        reader = await request.multipart()
    except (AssertionError, ValueError, KeyError):
        raise UploadError("expected multipart/form-data with 'text' or 'path' + 'file' fields") from None
    up = Upload()
    pending_path: str | None = None
    while (part := await reader.next()) is not None:
        if not isinstance(part, BodyPartReader):
            raise UploadError("nested multipart bodies are not accepted")
        if part.name == "path":
            pending_path = (await _read_part(part, up, max_bytes)).decode("utf-8", errors="replace")[:4096]
            continue
        if part.name not in ("text", "file"):
            await part.release()
            continue
        data = await _read_part(part, up, max_bytes)
        if part.name == "text":
            if data.strip():
                up.items.append((PASTE_NAME, data))
            continue
        name = pending_path or part.filename or f"file-{len(up.items)}"
        pending_path = None
        up.items.append((name, data))
        if len(up.items) > max_files:
            raise UploadError(f"more than {max_files} files: drop the job's log folder only, or use "
                              "'rankwatch diagnose DIR' on the command line", status=413)
    if not up.items:
        raise UploadError("nothing to diagnose: paste a log or drop files or a folder")
    return up
