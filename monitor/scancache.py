"""A file per compiled scan database, so that a process start skips the ~0.3 s Hyperscan compile.

Directory: ``$RANKWATCH_CACHE_DIR``, else ``$XDG_CACHE_HOME/rankwatch``, else
``~/.cache/rankwatch`` (``off`` disables it). Entries are named by a hash of the engine
version, flags and patterns, written atomically; an unreadable, unwritable or damaged entry
only means a compile. Nothing here is needed for correctness.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from detectors.scanner import set_database_cache

__all__ = ["FileDatabaseCache", "cache_dir", "install"]

MAX_ENTRY = 64 << 20


def cache_dir() -> Path | None:
    env = os.environ.get("RANKWATCH_CACHE_DIR")
    if env:
        return None if env == "off" else Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "rankwatch"


class FileDatabaseCache:
    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, key: str) -> Path:
        return self.root / f"scan-{key[:32]}.hsdb"

    def load(self, key: str) -> bytes | None:
        try:
            p = self._path(key)
            if p.stat().st_size > MAX_ENTRY:
                return None
            return p.read_bytes()
        except OSError:
            return None

    def store(self, key: str, data: bytes) -> None:
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".scan-")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                os.replace(tmp, self._path(key))
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError:
            pass


def install() -> None:
    """Use the file cache for scanners built from now on (when a cache directory is known)."""
    root = cache_dir()
    set_database_cache(FileDatabaseCache(root) if root is not None else None)
