"""The daemon's own log: stdlib ``logging``, one line per record, never wrapped.

``setup("text")`` writes ``2026-12-03T08:00:00.000Z INFO rankwatch: message`` lines (on a
terminal through rich, which may colour but never reads markup); ``setup("json")`` writes
one JSON object per line (``time``, ``level``, ``logger``, ``message``) for journald,
``kubectl logs`` and log shippers. A message can quote outside text (a path, a job name,
a broker's error): control characters in it are made visible (``\\n``, ``\\x1b``), so a
record is always exactly one line and cannot drive the terminal.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Literal, TextIO

from monitor.report.escape import terminal

__all__ = ["LOGGER", "JsonFormatter", "LineFormatter", "setup"]

LOGGER = "rankwatch"
LogFormat = Literal["text", "json"]


def _when(record: logging.LogRecord) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z"


def _message(record: logging.LogRecord) -> str:
    msg = record.getMessage()
    if record.exc_info:
        msg += " | " + logging.Formatter().formatException(record.exc_info)
    return terminal(msg)


class LineFormatter(logging.Formatter):
    """``<time> <LEVEL> <message>``, one line whatever the message holds."""

    def format(self, record: logging.LogRecord) -> str:
        return f"{_when(record)} {record.levelname} {_message(record)}"


class _Escaped(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return _message(record)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        doc = {"time": _when(record), "level": record.levelname.lower(), "logger": record.name,
               "message": _message(record).removeprefix("rankwatch: ")}
        return json.dumps(doc, ensure_ascii=False)


def setup(fmt: LogFormat = "text", stream: TextIO | None = None, level: int = logging.INFO) -> logging.Logger:
    """The ``rankwatch`` logger, writing to ``stream`` (stderr) in ``fmt``; idempotent."""
    stream = stream or sys.stderr
    handler: logging.Handler
    if fmt == "text" and stream.isatty():
        from rich.console import Console
        from rich.logging import RichHandler

        handler = RichHandler(console=Console(file=stream, highlight=False), markup=False, show_path=False,
                              rich_tracebacks=False, log_time_format="[%X]")
        handler.setFormatter(_Escaped())
    else:
        handler = logging.StreamHandler(stream)
        handler.setFormatter(JsonFormatter() if fmt == "json" else LineFormatter())
    log = logging.getLogger(LOGGER)
    for h in list(log.handlers):
        log.removeHandler(h)
    log.addHandler(handler)
    log.setLevel(level)
    log.propagate = False
    return log
