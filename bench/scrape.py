"""How long does a `/metrics` scrape take while the daemon ingests a big append?

Starts a real ``rankwatch run`` (a subprocess), appends ``--size-mb`` of training-log lines
(every line a metrics line, so all of it is parsed) to one watched file in one go, and
scrapes ``/metrics`` back to back until every line is counted. Prints the worst, median
and count of scrape times, and how long the ingest took. Issue #14: before reading moved
off the event loop, 40 MB made one scrape take 36.7 s.

    .venv/bin/python -m bench.scrape --size-mb 200
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from tests.helpers import free_port

REPO = Path(__file__).resolve().parent.parent


def _lines_total(body: str) -> float:
    for line in body.splitlines():
        if line.startswith("rankwatch_lines_total"):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=int, default=200)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        logs = Path(tmp) / "logs"
        logs.mkdir()
        log = logs / "rank_0.log"
        log.write_text("step 0 | loss 1.0\n")
        port = free_port()
        p = subprocess.Popen([sys.executable, "-m", "monitor", "run", "--logs", str(logs / "*.log"), "--quiet",
                              "--metrics-addr", f"127.0.0.1:{port}", "--state-dir", str(Path(tmp) / "state")],
                             cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env=dict(os.environ, RANKWATCH_CHECKPOINT_INTERVAL="3600"))
        try:
            url = f"http://127.0.0.1:{port}/metrics"
            while True:
                try:
                    urllib.request.urlopen(url, timeout=60).read()
                    break
                except OSError:
                    time.sleep(0.1)
            line_bytes = len("step 0000000 | loss 1.000 | grad_norm 0.5\n")
            n = args.size_mb * 1_000_000 // line_bytes
            with open(log, "a") as fh:
                fh.writelines(f"step {i:07d} | loss 1.{i % 1000:03d} | grad_norm 0.5\n" for i in range(1, n + 1))
            t0 = time.monotonic()
            times: list[float] = []
            while True:
                s = time.monotonic()
                body = urllib.request.urlopen(url, timeout=600).read().decode()
                times.append(time.monotonic() - s)
                if _lines_total(body) >= n + 1:
                    break
            ingest = time.monotonic() - t0
        finally:
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=120)
    print(f"appended {args.size_mb} MB ({n} lines); ingest took {ingest:.1f} s; {len(times)} scrapes: "
          f"worst {max(times) * 1000:.0f} ms, median {statistics.median(times) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
