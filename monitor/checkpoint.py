"""Crash-safe checkpoints: file positions + engine state, written atomically, as data.

One file, ``<state_dir>/checkpoint.json`` (mode 0600; the directory is made 0700): per-file
identity (device, inode, head fingerprint) and the last offset that ends a line, each
file's parse state, and the engine state, all as versioned JSON (``monitor.snapshot``: a
typed, redacted snapshot, never a pickle), with the SHA-256 of the engine part. Written
as tmp + fsync + rename + fsync(dir), so a crash leaves either the old or the new
checkpoint, never a torn one.

``load`` validates the whole document with ``CheckpointDoc`` and rebuilds the engine with
``snapshot.load`` (which only ever sets fields of rankwatch's own classes): a missing,
corrupt, foreign-job, other-version or wrongly-shaped checkpoint gives ``None`` and one
line saying why; the daemon then starts every file from the beginning and counts it.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from monitor import snapshot

__all__ = ["VERSION", "Checkpoint", "CheckpointDoc", "Position", "StateDirError", "load", "prepare", "save"]

VERSION = 2
NAME = "checkpoint.json"


class Position(BaseModel):
    """One followed file: identity, resumable offset, parse state."""

    model_config = ConfigDict(extra="forbid")
    dev: int = Field(ge=0)
    ino: int = Field(ge=0)
    head: str = Field(max_length=64)
    head_len: int = Field(256, ge=0)
    offset: int = Field(ge=0)
    lines: int = Field(ge=0)
    skipping: bool = False
    generation: int = Field(0, ge=0)
    fstate: Any = None  # a snapshot of detectors.parsers.base.FileState


class CheckpointDoc(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: Literal[2]
    job: str
    positions: dict[str, Position]
    engine_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    engine: Any


@dataclass
class Checkpoint:
    job: str
    positions: dict[str, dict[str, Any]]
    engine: Any


class StateDirError(ValueError):
    """The state directory cannot hold checkpoints; the message says why."""


def prepare(state_dir: Path) -> None:
    """Make ``state_dir`` (0700) and prove a checkpoint can be written there, at startup,
    rather than at the first checkpoint interval."""
    probe = state_dir / f".{NAME}.probe"
    try:
        state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(state_dir, 0o700)
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, b"{}")
            os.fsync(fd)
        finally:
            os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise StateDirError(f"{state_dir} cannot hold checkpoints: {exc.strerror or exc}") from None


def _canonical(engine: Any) -> str:
    return json.dumps(engine, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _digest(engine: Any) -> str:
    return hashlib.sha256(_canonical(engine).encode()).hexdigest()


@dataclass(frozen=True)
class Captured:
    """A checkpoint's content as plain data (``capture``), ready to be encoded and written by
    ``write`` in another thread while the engine goes on."""

    job: str
    positions: dict[str, Any]
    engine: Any
    seq: int = 0  # capture order: an older capture never replaces a newer one on disk


_SEQ = itertools.count(1)


def capture(cp: Checkpoint) -> Captured:
    """The engine and positions as plain data: the only part of a save that must see the state
    as it is (call it where nothing feeds the engine meanwhile)."""
    engine = snapshot.dump(cp.engine)
    positions = {p: {**{k: v for k, v in r.items() if k != "fstate"}, "fstate": snapshot.dump(r.get("fstate"))}
                 for p, r in cp.positions.items()}
    return Captured(cp.job, positions, engine, next(_SEQ))


_WRITING = threading.Lock()  # one writer of the temporary file at a time (a thread's, the final save)
_written: dict[Path, int] = {}  # state dir -> seq of the capture last written there


def write(state_dir: Path, c: Captured) -> Path:
    """Encode, checksum and write a captured checkpoint atomically (tmp + fsync + rename + fsync
    of the directory). Touches no engine state: safe in a worker thread."""
    state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(state_dir, 0o700)
    # the engine is encoded once: its canonical text is both what the checksum covers and
    # what the file holds (the reader parses it and checks the same digest)
    engine_text = _canonical(c.engine)
    doc = {"version": VERSION, "job": c.job, "positions": c.positions,
           "engine_sha256": hashlib.sha256(engine_text.encode()).hexdigest()}
    path = state_dir / NAME
    tmp = state_dir / f".{NAME}.tmp"
    # json.dumps, not json.dump: only the one-shot call uses the C encoder (json.dump to a file
    # runs the pure-Python one, ~10x slower: 7 s for a 4096-rank aggregator's 18 MB state)
    head = json.dumps(doc, allow_nan=False)
    data = f'{head[:-1]}, "engine": {engine_text}}}'.encode()
    with _WRITING:
        if c.seq and c.seq < _written.get(path, 0):
            return path  # a newer capture (the final save at shutdown) was written meanwhile
        _written[path] = c.seq
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with open(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        if (path.stat().st_mode & 0o077) != 0:
            os.chmod(path, 0o600)  # a temporary file that existed before with wider bits
        dfd = os.open(state_dir, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    return path


def save(state_dir: Path, cp: Checkpoint) -> Path:
    """``capture`` then ``write``, in this thread."""
    return write(state_dir, capture(cp))


def load(state_dir: Path, job: str) -> tuple[Checkpoint | None, str]:
    """The checkpoint, or None and why ("no checkpoint" when there is none to read)."""
    path = state_dir / NAME
    if not path.exists():
        return None, "no checkpoint"
    try:
        raw = json.loads(path.read_bytes())
        if isinstance(raw, dict) and raw.get("version") != VERSION:
            return None, f"checkpoint version {raw.get('version')!r} is not {VERSION}"
        doc = CheckpointDoc.model_validate(raw)
        if doc.job != job:
            return None, f"checkpoint belongs to job {doc.job!r}, not {job!r}"
        if _digest(doc.engine) != doc.engine_sha256:
            return None, "checkpoint engine state fails its checksum"
        engine = snapshot.load(doc.engine)
        positions: dict[str, dict[str, Any]] = {}
        for p, pos in doc.positions.items():
            rec = pos.model_dump()
            rec["fstate"] = snapshot.load(pos.fstate)
            positions[p] = rec
        return Checkpoint(doc.job, positions, engine), "resumed"
    except ValidationError as exc:
        e = exc.errors()[0]
        where = ".".join(str(x) for x in e["loc"]) or "checkpoint"
        return None, f"checkpoint invalid ({where}: {e['msg']})"
    except snapshot.SnapshotError as exc:
        return None, f"checkpoint invalid ({exc})"
    except (OSError, ValueError, RecursionError) as exc:
        return None, f"checkpoint unreadable ({type(exc).__name__}: {exc})"
