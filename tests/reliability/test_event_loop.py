"""The event loop never blocks on a big ingest (issue #14, defect 4): reading and scanning
run off the loop in slices, so `/metrics` answers while a large append is being read.
The worst scrape time is measured by `bench/scrape.py`, not asserted here."""

from __future__ import annotations

import asyncio
import urllib.request
from pathlib import Path

from monitor.config import Limits
from tests.reliability.proc import one_log_daemon

LINES = 60_000


def _lines_total(body: str) -> float:
    for line in body.splitlines():
        if line.startswith("rankwatch_lines_total"):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_attack_big_append_does_not_freeze_metrics(tmp_path: Path) -> None:
    d, log = one_log_daemon(tmp_path, "big", "step 0 | loss 1.0\n", limits=Limits(read_chunk_bytes=64 << 10))

    def scrape(port: int) -> tuple[int, float]:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=300) as r:
            return r.status, _lines_total(r.read().decode())

    async def scenario() -> list[tuple[int, float]]:
        task = asyncio.create_task(d.run())
        while d.bound is None:
            await asyncio.sleep(0.01)
        with open(log, "a") as fh:  # every line is a metrics line: all of it is parsed
            fh.writelines(f"step {i} | loss 1.{i % 1000:03d} | grad_norm 0.5\n" for i in range(1, LINES + 1))
        d.wake.set()
        seen: list[tuple[int, float]] = []
        while True:
            status, n = await asyncio.to_thread(scrape, d.bound[1])
            seen.append((status, n))
            if n >= LINES + 1:
                break
        d.stopping.set()
        await task
        return seen

    seen = asyncio.run(scenario())
    assert all(status == 200 for status, _ in seen)
    during = {n for _, n in seen if 1 < n < LINES + 1}
    assert len(during) >= 2, f"no scrape was answered while the append was being read: {seen}"
