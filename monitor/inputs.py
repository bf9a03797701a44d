"""Which files a diagnosis reads, and what their paths say about ranks.

Layouts understood (log-formats.md §1.6, issue #2):
- torchrun ``--log-dir``: ``<run_id>_<rand>/attempt_<n>/<local_rank>/{stdout,stderr}.log``
  plus ``error.json`` (the directory number is the LOCAL rank);
- per-rank files: ``rank3.log``, ``rank_11.log``, ``train-rank-3.out``, ``node1/rank_11.log``
  (GLOBAL rank), ``local_rank_3.log`` (local rank);
- combined console logs (``[defaultN]:`` / ``[rankN]:`` prefixes, ``srun --label``), Slurm
  ``slurm-<id>.out``, DeepSpeed launcher output: no rank in the path, ranks come from
  line prefixes.
Binary files are skipped (and reported), never parsed; FIFOs, sockets and devices are
skipped (and reported) without being opened. What a file is (log, ``error.json``, not a
log) is decided by ``detectors.filekind.classify``, the same call the live tailer makes.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from detectors.filekind import HEAD_BYTES, Kind, classify
from detectors.pathranks import path_ranks

__all__ = ["InputError", "LogFile", "discover", "from_memory", "path_ranks"]

_SKIP_DIRS = {".git", "__pycache__", ".venv", "node_modules"}

class InputError(Exception):
    """A path given on the command line cannot be read; the message says why."""


@dataclass(slots=True)
class LogFile:
    path: Path
    display: str  # path relative to the diagnosed root, for evidence
    rank: int | None = None
    local_rank: int | None = None
    attempt: int | None = None
    kind: str = "log"  # "log" or "error_json"
    notes: list[str] = field(default_factory=list)
    data: bytes | None = None  # the content, for files that exist only in memory (``rankwatch serve``)


def _not_regular(path: Path) -> str:
    """'' for a regular file (a symbolic link is followed), else what it is: FIFOs, sockets
    and devices are never opened (opening a FIFO blocks until a writer comes)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return exc.strerror or "unreadable"
    if stat.S_ISREG(mode):
        return ""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a file"


def _head(path: Path) -> bytes:
    try:
        with path.open("rb") as fh:
            return fh.read(HEAD_BYTES)
    except OSError:
        return b""


def _classified(p: Path, rel: str, head: bytes, data: bytes | None, files: list[LogFile], notes: list[str]) -> None:
    """One file, as ``detectors.filekind.classify`` says (a skipped one is said in ``notes``)."""
    kind, why = classify(rel, head)
    if kind is Kind.SKIP:
        notes.append(f"skipped {rel}: {why}")
        return
    rank, local, attempt = path_ranks(rel)
    files.append(LogFile(p, rel, rank, local, attempt, kind=kind.value, data=data))


def discover(paths: list[str]) -> tuple[list[LogFile], list[str]]:
    """Expand directories recursively. Returns (files, notes about what was skipped)."""
    files: list[LogFile] = []
    notes: list[str] = []
    for raw in paths:
        root = Path(raw)
        if not root.exists():
            raise InputError(f"no such file or directory: {raw}")
        if root.is_file():
            candidates = [(root, root.name)]
        elif root.is_dir():
            candidates = []
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
                for fn in sorted(filenames):
                    p = Path(dirpath) / fn
                    candidates.append((p, str(p.relative_to(root))))
        else:
            raise InputError(f"not a regular file or directory: {raw}")
        for p, rel in candidates:
            kind = _not_regular(p)
            if kind:
                notes.append(f"skipped {rel}: not a regular file ({kind})")  # a FIFO would block the read forever
                continue
            named, why = classify(rel)
            if named is Kind.SKIP and why.startswith("not a text log"):
                notes.append(f"skipped {rel}: {why}")
                continue
            if not os.access(p, os.R_OK):
                notes.append(f"skipped {rel}: permission denied")
                continue
            _classified(p, rel, b"" if named is not Kind.LOG else _head(p), None, files, notes)
    return files, notes


def from_memory(items: list[tuple[str, bytes]]) -> tuple[list[LogFile], list[str]]:
    """The same classification as ``discover`` for files held in memory (relative path, content):
    dropped folders keep their relative paths, so torchrun ``--log-dir`` layouts are understood."""
    files: list[LogFile] = []
    notes: list[str] = []
    for raw, data in items:
        rel = raw.replace("\\", "/").lstrip("/")
        p = Path(rel)
        if any(part in _SKIP_DIRS for part in p.parts[:-1]):
            continue
        _classified(p, rel, data[:HEAD_BYTES], data, files, notes)
    return files, notes
