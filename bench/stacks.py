"""Stall → incident time with live stacks, on a real torchrun job (printed, never asserted).

For each scenario a real 4-rank gloo job (tests/e2e/scenarios/stuck.py, rank 2 blocks at
step 4, process-group timeout 120 s) runs under a real ``rankwatch run`` with the given
stall floor. Printed per run:

- stall → incident: from the last step line written (file mtime) to the ``rank_hang``
  incident opening (rank unknown), ≈ the stall threshold plus the daemon's tick;
- stall → rank named: to the incident naming the rank from its stack (one py-spy round
  over 4 ranks after the stall opens);
- the py-spy round alone, as the daemon's metric sees it is not timed, so the difference
  of the two is shown;
- the time the process-group timeout would have taken instead.

Run from the repository root with torch and py-spy installed:
``python -m bench.stacks [--floor 3] [--repeat 1] [--faults queue,lock,extra_collective]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from tests.e2e.stuckjob import stuck_job
from tests.reliability.proc import rankwatch


def one(fault: str, floor: float) -> tuple[float, float] | None:
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        logs = tmp / "logs"
        logs.mkdir()
        # the daemon is up before the job starts, as a sidecar is; the job's processes are
        # found by RANK in their environment, narrowed to this job by its command line
        tag = f"rwstk-{uuid.uuid4().hex[:12]}"
        env = {"RANKWATCH_STALL_FLOOR": str(floor), "RANKWATCH_STACKS__ENABLED": "true", "RANKWATCH_STACKS__PATTERN": tag}
        with rankwatch([str(logs / "**" / "*.log")], tmp / "state", "bench", tmp / "out.txt", env=env) as rw:
            rw.get("/healthz")
            with stuck_job(logs, fault, tag=tag) as job:
                opened = named = None
                deadline = time.monotonic() + 180
                while named is None and time.monotonic() < deadline:
                    incs = [i for i in json.loads(rw.get("/api/incidents"))["incidents"] if i["failure"] == "rank_hang"]
                    now = time.time()
                    if incs and opened is None:
                        opened = now
                    if any(i["initiator"]["rank"] is not None for i in incs):
                        named = now
                    time.sleep(0.02)
                last_line = max(p.stat().st_mtime for p in job.rank_logs())
        if opened is None or named is None:
            return None
        return opened - last_line, named - last_line


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--floor", type=float, default=3.0, help="stall_floor seconds")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--faults", default="queue,lock,extra_collective")
    a = p.parse_args()
    print(f"stall floor {a.floor:g} s; process-group timeout 120 s (a typical NCCL timeout: 600-1800 s)")
    print(f"{'fault':<18}{'stall→incident':>16}{'stall→rank named':>18}{'stacks round':>14}")
    for fault in a.faults.split(","):
        runs = [r for r in (one(fault, a.floor) for _ in range(a.repeat)) if r is not None]
        if not runs:
            print(f"{fault:<18}{'no verdict':>16}")
            continue
        o = statistics.median(r[0] for r in runs)
        n = statistics.median(r[1] for r in runs)
        print(f"{fault:<18}{o:>15.2f}s{n:>17.2f}s{n - o:>13.2f}s")


if __name__ == "__main__":
    main()
