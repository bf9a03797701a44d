"""``rankwatch demo``: replay a bundled real incident while the daemon watches it live.

No broker, no Prometheus, no config: the recorded logs of a real torchrun job are written
into a temporary folder rank by rank and step by step, the daemon tails them on its
embedded defaults (metrics on a free loopback port), and the console shows each finding
and the incident as they happen, then the final report.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from importlib import resources
from pathlib import Path

from rich.console import Console

from monitor.config import load_config
from monitor.console import LiveConsole
from monitor.daemon import Daemon
from monitor.inputs import path_ranks
from monitor.report import render_text

__all__ = ["run_demo"]


def _example_dir() -> Path:
    root = resources.files("monitor") / "examples"
    cases = sorted((p for p in root.iterdir() if p.is_dir()), key=lambda p: p.name)
    if not cases:
        raise FileNotFoundError("no bundled example under monitor/examples/")
    return Path(str(cases[0]))


async def _replay(src: Path, dst: Path, delay: float) -> None:
    files = sorted(p for p in src.rglob("*.log"))
    ranked = [p for p in files if any(x is not None for x in path_ranks(str(p.relative_to(src)))[:2])]
    others = [p for p in files if p not in ranked]  # launcher consoles: they speak last
    for group in (ranked, others):
        pending = {p: p.read_bytes().splitlines(keepends=True) for p in group}
        while any(pending.values()):
            for p, rest in pending.items():
                if rest:
                    out = dst / p.relative_to(src)
                    out.parent.mkdir(parents=True, exist_ok=True)
                    with open(out, "ab") as fh:
                        fh.write(rest.pop(0))
            await asyncio.sleep(delay)


async def _demo(console: Console, delay: float, serve: float) -> int:
    src = _example_dir()
    work = Path(tempfile.mkdtemp(prefix="rankwatch-demo-"))
    try:
        logs = work / "logs"
        logs.mkdir()
        cfg = load_config(logs=[str(logs / "**" / "*.log")], job="demo-torchrun-hang", metrics_addr="127.0.0.1:0",
                          state_dir=work / "state", rescan_interval=0.2, poll_interval=0.05)
        out = LiveConsole(console)
        daemon = Daemon(cfg, on_change=out.change, on_finding=out.finding, log=lambda m: console.print(m, style="dim", highlight=False))
        task = asyncio.create_task(daemon.run())
        while daemon.bound is None:
            await asyncio.sleep(0.01)
        host, port = daemon.bound
        console.print(f"[bold]Replaying a real torchrun job (4 ranks, gloo) from {src.name} into {logs}[/]")
        console.print(f"Open http://{host}:{port}/metrics or http://{host}:{port}/api/incidents while it runs.")
        await _replay(src, logs, delay)
        await asyncio.sleep(1.0)
        if serve:
            console.print(f"Serving for {serve:g} s more (Ctrl-C to stop)...")
            await asyncio.sleep(serve)
        daemon.stopping.set()
        await task
        console.rule("[bold]final report (same JSON as `rankwatch diagnose`, at /api/incidents)")
        render_text(daemon.engine.report(), console)
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_demo(delay: float = 0.02, serve: float = 0.0) -> int:
    return asyncio.run(_demo(Console(highlight=False), delay, serve))
