"""The candidate scan alone: its speed and how many lines it lets through.

``python -m bench.scan DIR [--chunk-mb 8] [--repeat 3]`` reads the ``*.log`` files of DIR in
chunks cut at line ends (as ``diagnose`` does) and, with the parser's own scanner, reports:

* the scan's MB/s (CPU time, best of ``--repeat`` passes over the data; the Hyperscan pass and the
  mapping of matches to lines, before the noise rule), the same without the scan forms of
  ``detectors/scanforms.py`` (each trigger's own pattern), for the catalog fingerprints alone
  and for the parser triggers alone;
* the candidate lines: those a ``maybe`` pattern of a scan form sent to the check, those the scan reports, those left after the noise rule (what reaches
  ``parse_line``), and per rule the lines it was reported on.

Nothing is asserted; the figures tell two builds apart (run it on each).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

from detectors.parse import LogParser
from detectors.scanner import Scanner

MB = 1_000_000


def chunks(files: list[Path], size: int) -> list[bytes]:
    out: list[bytes] = []
    for f in files:
        data = f.read_bytes()
        pos = 0
        while pos < len(data):
            end = data.rfind(b"\n", pos, pos + size)
            end = len(data) if end < 0 or pos + size >= len(data) else end + 1
            out.append(data[pos:end])
            pos = end
    return out


def best_time(scan: Scanner, bufs: list[bytes], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        for b in bufs:
            scan._scan(b)
        best = min(best, time.process_time() - t)
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.scan", description=__doc__.splitlines()[0])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--chunk-mb", type=float, default=8.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--engine", default=None, help="scan engine (default: the best available)")
    a = ap.parse_args(argv)
    files = sorted(a.dir.glob("*.log"))
    if not files:
        print(f"no *.log files in {a.dir}", file=sys.stderr)
        return 2
    bufs = chunks(files, int(a.chunk_mb * MB))
    total = sum(map(len, bufs))
    parser = LogParser(engine=a.engine)
    sc = parser.scanner
    names = [r.name for r in parser.special] + [f"{f.entry.id}#{f.fp.pattern[:40]}" for f in parser.fingerprints]
    names.append("exception")
    n_special = len(parser.special)
    print(f"# {len(files)} files, {total / MB:.1f} MB, engine {sc.engine}, {len(sc.patterns)} rules")
    trig = [*range(n_special), len(sc.patterns) - 1]
    parts = {
        "all rules": sc,
        "all rules, no forms": Scanner(sc.patterns, engine=sc.engine),
        "catalog fingerprints": Scanner(sc.patterns[n_special:-1], engine=sc.engine),
        "parser triggers": Scanner([sc.patterns[i] for i in trig], engine=sc.engine,
                                   forms={j: sc.forms[i] for j, i in enumerate(trig) if i in sc.forms}),
    }
    for label, s in parts.items():
        t = best_time(s, bufs, a.repeat)
        print(f"scan, {label:22} {total / MB / t:8.0f} MB/s  ({t:.3f} CPU s)")
    lines = sum(b.count(b"\n") for b in bufs)
    print(f"lines {lines:,}")
    maybe = [p for f in sc.forms.values() for p in f.maybe]
    if maybe and sc.engine == "hyperscan":
        checked = sum(len(Scanner(maybe, engine=sc.engine)._scan(b)) for b in bufs)
        print(f"lines a maybe pattern of the scan forms matched (checked with the rule's own pattern): {checked:,}")
    plain = Scanner(sc.patterns, engine=sc.engine, noise=sc.noise)
    per_rule: Counter[int] = Counter()
    for label, s in (("with the scan forms", sc), ("no scan forms", plain)):
        raw = kept = 0
        for b in bufs:
            hits = s._scan(b)
            raw += len(hits)
            if s is sc:
                for _, _, ids in hits:
                    per_rule.update(ids)
            kept += len(s.scan(b))
        print(f"candidates, {label:20} from the scan {raw:,} ({raw / lines:.2%}); after the noise rule {kept:,} "
              f"({kept / lines:.2%})")
    for rid, n in per_rule.most_common(15):
        print(f"  {n:>10,}  {names[rid]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
