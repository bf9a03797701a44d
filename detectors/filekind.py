"""What a file of a job is, and what torchrun's ``error.json`` says: the pure part of reading files.

``rankwatch diagnose`` (``monitor/inputs.py``, ``monitor/diagnose.py``) and the live tailer
(``monitor/tailer.py``) both decide here, from a file's name and first bytes, whether it is a
log, torchrun's ``error.json`` or something to skip (binary, an archive, a checkpoint), and both
turn an ``error.json`` into the same events through ``error_json_events``. No I/O: callers read
the bytes.

torchrun's ``error.json`` (``torch.distributed.elastic``'s ``@record``, one per local rank that
raised: ``.../attempt_N/<local_rank>/error.json``) is
``{"message": {"message": "<Type>: <text>", "extraInfo": {"py_callstack": ..., "timestamp": "<epoch s>"}}}``
(older versions: ``"message"`` is a plain string). Its exception line is parsed like a log line
of that rank; the catalog match carries the file's timestamp, so the same exception found first
live or last offline is ordered the same way.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from detectors.model import Event, EventKind

if TYPE_CHECKING:  # the parser is handed in by the engine; no import of a later stage
    from detectors.parse import LogParser
    from detectors.parsers.base import FileState

__all__ = ["HEAD_BYTES", "SOURCE_SUFFIX", "ErrorReport", "Kind", "binary_head", "classify", "error_json_events", "read_error_json"]

HEAD_BYTES = 8192  # how much of a file's start decides whether it is text
ERROR_JSON = "error.json"
SKIP_SUFFIX = frozenset({
    ".gz", ".bz2", ".xz", ".zst", ".zip", ".tar", ".png", ".jpg", ".jpeg", ".pt", ".pth", ".bin", ".safetensors",
    ".ckpt", ".npy", ".npz", ".pkl", ".so", ".pyc", ".parquet", ".arrow",
})
# a job folder's source code and scripts: their string literals ("raise RuntimeError('CUDA out of
# memory')", a guard's f"non-finite grad norm on {n} rank(s)") read like log lines, and are none
SOURCE_SUFFIX = frozenset({
    ".py", ".pyi", ".ipynb", ".sh", ".bash", ".zsh", ".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".cu", ".cuh",
    ".rs", ".go", ".java", ".js", ".ts", ".lua",
})
_MAGIC = (b"\x7fELF", b"PK\x03\x04", b"\x1f\x8b", b"\x89PNG", b"\x80\x02", b"\x80\x04")
_TEXT_LINE = re.compile(rb"(?m)^[\t -~]{16,}\r?$")  # a whole line of printable ASCII


class Kind(Enum):
    LOG = "log"
    ERROR_JSON = "error_json"
    SKIP = "skip"


def binary_head(head: bytes) -> bool:
    """The first bytes of a file are not text: a known magic number, or many NULs or control
    bytes and not one whole line of text among them (a log that starts with a crash's NULs
    or a burst of garbage is still a log: its lines are read)."""
    head = head[:HEAD_BYTES]
    if not head:
        return False
    if head.startswith(_MAGIC):
        return True
    nul = head.count(b"\x00")
    control = sum(1 for b in head if b < 9 or 13 < b < 32)
    if nul <= len(head) // 10 and control <= len(head) // 3:
        return False
    return not any(b" " in m.group() for m in _TEXT_LINE.finditer(head))


def classify(name: str, head: bytes | None = None) -> tuple[Kind, str]:
    """``(kind, why)`` for a file named ``name`` whose first bytes are ``head`` (None: not read
    yet, judged by its name only). ``why`` is the reason a skipped file is skipped."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    dot = base.rfind(".")
    suffix = base[dot:].lower() if dot > 0 else ""
    if suffix in SKIP_SUFFIX:
        return Kind.SKIP, f"not a text log ({base[dot:]})"
    if suffix in SOURCE_SUFFIX:
        return Kind.SKIP, f"not a text log: source code ({base[dot:]})"
    if base == ERROR_JSON:
        return Kind.ERROR_JSON, ""
    if suffix == ".json" or (head is not None and binary_head(head)):
        return Kind.SKIP, "binary or not a log"
    return Kind.LOG, ""


@dataclass(frozen=True, slots=True)
class ErrorReport:
    """What one ``error.json`` says: the exception line and when it was written (epoch s)."""

    line: str
    time: float | None


def read_error_json(raw: bytes) -> ErrorReport | None:
    """The exception of a complete ``error.json``; None when it is not one (or not complete yet:
    the live tailer tries again when the file grows)."""
    try:
        doc = json.loads(raw.decode("utf-8", errors="replace"))
        msg = doc["message"]
    except (ValueError, KeyError, TypeError):
        return None
    text = msg.get("message") if isinstance(msg, dict) else msg
    if not isinstance(text, str):
        return None
    when: float | None = None
    extra = msg.get("extraInfo") if isinstance(msg, dict) else None
    if isinstance(extra, dict):
        try:
            when = float(extra.get("timestamp"))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            when = None
    lines = text.splitlines()
    return ErrorReport(lines[0] if lines else "", when)


def error_json_events(parser: LogParser, raw: bytes, file: FileState) -> list[Event] | None:
    """The catalog matches of one ``error.json`` (its rank comes from ``file``, the path); None
    when ``raw`` is not a complete ``error.json``."""
    rep = read_error_json(raw)
    if rep is None:
        return None
    events = [ev for ev in parser.parse_line(rep.line, 1, file) if ev.kind is EventKind.MATCH]
    if rep.time is not None:
        for ev in events:
            if ev.time is None:
                ev.time = rep.time
    return events
