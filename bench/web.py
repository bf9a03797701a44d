"""Benchmark of ``rankwatch serve``: how long a paste or a dropped folder takes to come back
as a diagnosis, against a real server subprocess on this machine.

- paste: the recorded 4-rank torchrun traceback (tests/e2e/golden/exception-console, 12 KiB)
  POSTed as the page does (multipart ``text``): the first request, then p50 / p99 over N;
- folder: 8 per-rank files of NCCL INFO noise with one fatal line (default 64 MB in all),
  POSTed as ``path`` + ``file`` pairs: seconds and MB/s end to end (upload, diagnosis, reply).
The goal from issue #16: a pasted traceback is diagnosed within a second.

Never asserts: numbers depend on the machine. Run: ``python -m bench.web [--quick]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import aiohttp

REPO = Path(__file__).resolve().parents[1]
PASTE = REPO / "tests" / "e2e" / "golden" / "exception-console" / "logs" / "console.log"
NOISE = "gpu-node-017:469398:469612 [3] NCCL INFO Channel 07/32 :    0   1   2   3   4   5   6   7 [send] via NET/IB/0\n"
FATAL = "[rank5]: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 336.00 MiB.\n"


def start() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "monitor", "serve", "--addr", "127.0.0.1:0", "--max-bytes", str(1 << 30)],
                            cwd=REPO, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    url = line[line.index("http://"):].split()[0]
    return proc, url


async def post(session: aiohttp.ClientSession, url: str, form: aiohttp.FormData) -> dict:
    async with session.post(url + "api/diagnose", data=form) as r:
        text = await r.text()
        assert r.status == 200, text
        return json.loads(text.splitlines()[-1])["result"]  # NDJSON: progress lines, then the result


def paste_form(text: str) -> aiohttp.FormData:
    form = aiohttp.FormData(default_to_multipart=True)
    form.add_field("text", text)
    return form


async def run(n: int, mb: int) -> None:
    proc, url = start()
    try:
        text = PASTE.read_text()
        async with aiohttp.ClientSession() as s:
            t0 = time.perf_counter()
            body = await post(s, url, paste_form(text))
            first = time.perf_counter() - t0
            inc = body["report"]["incidents"][0]
            times = []
            for _ in range(n):
                t0 = time.perf_counter()
                await post(s, url, paste_form(text))
                times.append(time.perf_counter() - t0)
            times.sort()
            print(f"paste ({len(text.encode()) / 1024:.0f} KiB, {inc['failure']} on rank {inc['initiator']['rank']}): "
                  f"first {first * 1000:.0f} ms, p50 {statistics.median(times) * 1000:.0f} ms, "
                  f"p99 {times[min(len(times) - 1, int(len(times) * 0.99))] * 1000:.0f} ms over {n}  (goal: < 1000 ms)")
            per_file = (mb << 20) // 8
            body_bytes = (NOISE * (per_file // len(NOISE))).encode()
            form = aiohttp.FormData()
            for r in range(8):
                form.add_field("path", f"job/rank_{r}.log")
                form.add_field("file", body_bytes + (FATAL.encode() if r == 5 else b""), filename=f"rank_{r}.log")
            t0 = time.perf_counter()
            body = await post(s, url, form)
            dt = time.perf_counter() - t0
            inc = body["report"]["incidents"][0]
            print(f"folder (8 files, {8 * len(body_bytes) / 1e6:.0f} MB, {inc['failure']} on rank {inc['initiator']['rank']}): "
                  f"{dt:.2f} s end to end, {8 * len(body_bytes) / 1e6 / dt:.0f} MB/s (diagnosis alone {body['seconds']:.2f} s)")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10 pastes, 16 MB folder")
    ap.add_argument("-n", type=int, default=50)
    ap.add_argument("--mb", type=int, default=64)
    a = ap.parse_args()
    asyncio.run(run(10 if a.quick else a.n, 16 if a.quick else a.mb))
    return 0


if __name__ == "__main__":
    sys.exit(main())
