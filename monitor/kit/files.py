"""Which committed files are stale, writing them, and ``rankwatch generate [--check]``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from detectors.catalog import load_catalog
from monitor.kit.options import (
    DASHBOARD_DIR,
    DEFAULT_RUNBOOK_URL,
    MARK,
    REGENERATE,
    RUNBOOK_DIR,
    TESTS_DIR,
    Options,
)

__all__ = ["run", "stale", "write"]

#: what every generated file carries, whichever generator version wrote it
MARK_PREFIX = MARK.split(" from ")[0]


def _owned(root: Path) -> list[Path]:
    """Files in generated-only folders that carry the generated marker (candidates for removal)."""
    out = []
    for d, pat in ((RUNBOOK_DIR, "*.md"), (DASHBOARD_DIR, "rankwatch-*.json"), (TESTS_DIR, "*.test.yml")):
        for p in sorted((root / d).glob(pat)):
            text = p.read_text(encoding="utf-8", errors="replace")
            if MARK_PREFIX in text or p.suffix == ".json":
                out.append(p)
    return out


def stale(root: Path, files: dict[str, str]) -> list[str]:
    """Paths (relative to ``root``) that differ from ``files``, are missing, or are generated leftovers."""
    bad = []
    for rel, content in sorted(files.items()):
        p = root / rel
        if not p.is_file() or p.read_text(encoding="utf-8") != content:
            bad.append(rel)
    for p in _owned(root):
        rel = p.relative_to(root).as_posix()
        if rel not in files:
            bad.append(rel + " (no longer generated)")
    return bad


def write(root: Path, files: dict[str, str]) -> list[str]:
    """Write what changed, remove generated leftovers; return what was touched."""
    touched = []
    for rel, content in sorted(files.items()):
        p = root / rel
        if p.is_file() and p.read_text(encoding="utf-8") == content:
            continue
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content, encoding="utf-8")
        touched.append(rel)
    for p in _owned(root):
        rel = p.relative_to(root).as_posix()
        if rel not in files:
            p.unlink()
            touched.append(rel + " (removed)")
    return touched


def run(root: Path, runbook_url: str | None = None, check: bool = False, out: Any = sys.stdout,
        scrape_job: str | None = None) -> int:
    """``rankwatch generate``: 0 when written (or current with ``check``), 1 when ``check`` finds stale files."""
    from monitor.kit import generate

    opts = Options(runbook_url=runbook_url or DEFAULT_RUNBOOK_URL, scrape_job=scrape_job or Options.scrape_job)
    files = generate(opts=opts)
    if check:
        bad = stale(root, files)
        for b in bad:
            print(f"stale: {b}", file=out)
        if bad:
            print(f"{len(bad)} generated file(s) out of date: run {REGENERATE}", file=out)
            return 1
        print(f"{len(files)} generated files are current", file=out)
        return 0
    touched = write(root, files)
    for t in touched:
        print(f"wrote {t}", file=out)
    print(f"{len(files)} files generated from {len(load_catalog())} catalog entries ({len(touched)} changed)", file=out)
    return 0

