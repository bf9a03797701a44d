"""Replay a recorded job's logs into a folder a few lines at a time, as if it were running.

    python replay.py SRC DST [--lines 3] [--delay 0.5]

Every ``*.log`` under SRC is appended to the same relative path under DST, ``--lines``
lines per file per turn, ranks interleaved, with ``--delay`` seconds between turns;
per-rank logs first, launcher consoles (no rank in their path) last, like a real job
where the launcher reports after its ranks. Standard library only: the docker-compose
stack runs it in a plain Python image, and tests/integration use it as a library.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

__all__ = ["replay"]

_RANKED = re.compile(r"rank[_-]?\d+|/\d+/std(out|err)\.log$")


def replay(src: Path, dst: Path, lines: int = 3, delay: float = 0.5) -> int:
    """Append every log of ``src`` into ``dst``; return the number of bytes written."""
    files = sorted(p for p in src.rglob("*.log") if p.is_file())
    ranked = [p for p in files if _RANKED.search(p.relative_to(src).as_posix())]
    groups = [ranked, [p for p in files if p not in ranked]]
    written = 0
    for group in groups:
        pending = {p: p.read_bytes().splitlines(keepends=True) for p in group}
        for p in group:  # every file exists (maybe empty) before the first line arrives
            out = dst / p.relative_to(src)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.touch()
        while any(pending.values()):
            for p, rest in pending.items():
                if not rest:
                    continue
                chunk, pending[p] = rest[:lines], rest[lines:]
                with open(dst / p.relative_to(src), "ab") as fh:
                    fh.write(b"".join(chunk))
                written += sum(map(len, chunk))
            time.sleep(delay)
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src", type=Path)
    ap.add_argument("dst", type=Path)
    ap.add_argument("--lines", type=int, default=3, help="lines per file per turn (default 3)")
    ap.add_argument("--delay", type=float, default=0.5, help="seconds between turns (default 0.5)")
    a = ap.parse_args(argv)
    if not a.src.is_dir():
        print(f"replay: {a.src} is not a directory", file=sys.stderr)
        return 2
    n = replay(a.src, a.dst, a.lines, a.delay)
    print(f"replay: wrote {n} bytes from {a.src} into {a.dst}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
