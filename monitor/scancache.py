"""Files that let a process start skip work done by an earlier one: a file per compiled scan
database (the ~0.3 s Hyperscan compile) and one per validated failure catalog (YAML parsing
and pydantic validation, ~0.1-0.2 s with pydantic's import).

Directory: ``$RANKWATCH_CACHE_DIR``, else ``$XDG_CACHE_HOME/rankwatch``, else
``~/.cache/rankwatch`` (``off`` disables it). Entries are named by a hash of the engine
version, flags and patterns, written atomically; an unreadable, unwritable or damaged entry
only means a compile. Nothing here is needed for correctness.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from detectors.catalog import set_catalog_cache
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
    """Entries ``<prefix>-<key>.<suffix>`` in ``root``: scan databases by default."""

    def __init__(self, root: Path, prefix: str = "scan", suffix: str = "hsdb") -> None:
        self.root = root
        self.prefix = prefix
        self.suffix = suffix

    def _path(self, key: str) -> Path:
        return self.root / f"{self.prefix}-{key[:32]}.{self.suffix}"

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
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=f".{self.prefix}-")
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
    """Use the file cache for scanners built and catalogs loaded from now on (when a cache
    directory is known)."""
    root = cache_dir()
    set_database_cache(FileDatabaseCache(root) if root is not None else None)
    set_catalog_cache(FileDatabaseCache(root, "catalog", "json") if root is not None else None)
