"""A processor-sharing model of parallel ``diagnose``: where the wall time goes, without timing.

Wall time on a shared 2-CPU machine moves with the other processes' load; this model does not.
Two workers claim files in order and parse them batch by batch (``w`` CPU seconds a batch);
the main process adds file 0's batches, then file 1's, ... (``m`` CPU seconds a batch); a
worker stops while ``ahead`` batches of its file wait unread (``monitor.parallel.AHEAD``).
Runnable processes share the ``cpus`` equally. The defaults are round 5's per-process profile
of the 1 GB noisy corpus (bench/README.md): 8 files of 16 chunks, ~3.7 CPU s per 4 files a
worker (58 ms a batch), ~2.45 CPU s of adding in the main process (19 ms a batch).

    python -m bench.pipeline_model            # AHEAD 4, 8, 16 with the defaults
"""

from __future__ import annotations

import argparse


def simulate(ahead: int, cpus: float = 2.0, files: int = 8, batches: int = 16, w: float = 0.058,
             m: float = 0.019, workers: int = 2, dt: float = 0.0005) -> float:
    """Seconds from the workers' start to the main process's last batch."""
    t = 0.0
    claimed = 0
    jobs: list[list[float] | None] = [None] * workers  # [file, batches done, CPU s into the batch]
    produced = [0] * files
    consumed = [0] * files
    cur = 0
    main_done = 0.0
    while cur < files:
        for i in range(workers):
            if jobs[i] is None and claimed < files:
                jobs[i] = [claimed, 0, 0.0]
                claimed += 1
        running = [j for j in jobs if j is not None and produced[int(j[0])] - consumed[int(j[0])] < ahead]
        main_runs = produced[cur] > consumed[cur]
        n = len(running) + main_runs
        share = min(1.0, cpus / n) if n else 0.0
        for j in running:
            j[2] += share * dt
            if j[2] >= w:
                produced[int(j[0])] += 1
                j[1] += 1
                j[2] = 0.0
        jobs = [j if j is None or j[1] < batches else None for j in jobs]
        if main_runs:
            main_done += share * dt
            if main_done >= m:
                consumed[cur] += 1
                main_done = 0.0
                if consumed[cur] == batches:
                    cur += 1
        t += dt
    return t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ahead", default="4,8,16", help="AHEAD values, comma-separated")
    ap.add_argument("--cpus", type=float, default=2.0)
    ap.add_argument("--w", type=float, default=0.058, help="worker CPU s a batch")
    ap.add_argument("--m", type=float, default=0.019, help="main-process CPU s a batch")
    args = ap.parse_args()
    serial = 8 * 16 * (args.w + args.m)
    print(f"one process (every batch w + m on one CPU): {serial:.2f} s")
    for a in (int(x) for x in args.ahead.split(",")):
        print(f"AHEAD={a}: {simulate(a, cpus=args.cpus, w=args.w, m=args.m):.2f} s (plus start-up)")


if __name__ == "__main__":
    main()
