"""Crash-safe checkpoints: file positions + engine state, written atomically.

One file, ``<state_dir>/checkpoint.json``: per-file identity (device, inode, head
fingerprint) and the last offset that ends a line, plus the engine state (pickled,
base64) and its SHA-256. Written as tmp + fsync + rename + fsync(dir), so a crash leaves
either the old or the new checkpoint, never a torn one. ``load`` returns None (and a
reason) for a missing, corrupt, foreign-job or other-version checkpoint: the daemon then
starts from the beginning of every file and says so.

The engine state is a pickle of rankwatch's own objects, read only from the daemon's
own state directory (keep it private to the daemon's user).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["VERSION", "Checkpoint", "load", "save"]

VERSION = 1
NAME = "checkpoint.json"


@dataclass
class Checkpoint:
    job: str
    positions: dict[str, dict[str, Any]]
    engine: Any


def save(state_dir: Path, cp: Checkpoint) -> Path:
    state_dir.mkdir(parents=True, exist_ok=True)
    blob = pickle.dumps({"engine": cp.engine, "fstates": {p: r.get("fstate") for p, r in cp.positions.items()}},
                        protocol=pickle.HIGHEST_PROTOCOL)
    positions = {p: {k: v for k, v in r.items() if k != "fstate"} for p, r in cp.positions.items()}
    doc = {
        "version": VERSION,
        "job": cp.job,
        "positions": positions,
        "engine_sha256": hashlib.sha256(blob).hexdigest(),
        "engine": base64.b64encode(blob).decode(),
    }
    path = state_dir / NAME
    tmp = state_dir / f".{NAME}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(doc, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    dfd = os.open(state_dir, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)
    return path


def load(state_dir: Path, job: str) -> tuple[Checkpoint | None, str]:
    path = state_dir / NAME
    if not path.exists():
        return None, "no checkpoint"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if doc.get("version") != VERSION:
            return None, f"checkpoint version {doc.get('version')} is not {VERSION}"
        if doc.get("job") != job:
            return None, f"checkpoint belongs to job {doc.get('job')!r}, not {job!r}"
        blob = base64.b64decode(doc["engine"])
        if hashlib.sha256(blob).hexdigest() != doc["engine_sha256"]:
            return None, "checkpoint engine state fails its checksum"
        payload = pickle.loads(blob)
        positions = doc["positions"]
        for p, rec in positions.items():
            rec["fstate"] = payload["fstates"].get(p)
        return Checkpoint(doc["job"], positions, payload["engine"]), "resumed"
    except (OSError, ValueError, KeyError, TypeError, pickle.UnpicklingError, EOFError, AttributeError) as exc:
        return None, f"checkpoint unreadable ({type(exc).__name__}: {exc})"
