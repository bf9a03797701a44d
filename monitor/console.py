"""Live console output: each finding (first of its kind per rank) and each incident change.

One line per item, never wrapped (``soft_wrap``), never markup: every string that came
from the logs is passed through ``monitor.report.escape`` and printed as ``rich.text.Text``."""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.text import Text

from detectors.catalog import load_catalog
from detectors.events import Event
from monitor.live import Change
from monitor.report import escape
from monitor.report.escape import terminal

__all__ = ["LiveConsole"]

_STYLE = {"critical": "bold red", "warning": "yellow", "info": "cyan"}


class LiveConsole:
    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(highlight=False, soft_wrap=True)
        self.seen: Counter[tuple[int | None, str]] = Counter()
        self.catalog = load_catalog()

    def finding(self, ev: Event) -> None:
        key = (ev.rank, ev.failure or "")
        self.seen[key] += 1
        if self.seen[key] > 1:
            return  # the first line of each kind per rank; /metrics counts them all
        entry = self.catalog.get(ev.failure, None)
        role = (ev.data.get("role") or (entry.role if entry else "")) if entry else ""
        rank = "?" if ev.rank is None else str(ev.rank)
        self.console.print(Text.assemble(
            ("finding ", "bold"), (f"rank {rank} ", "cyan"), (terminal(ev.failure or ""), "magenta"), f" ({role}) ",
            (terminal(f"{ev.source.path}:{ev.source.line}"), "dim"),
        ))

    def change(self, c: Change) -> None:
        d = escape.report(c.incident)
        ini = d["initiator"]
        rank = "unknown" if ini["rank"] is None else str(ini["rank"])
        style = _STYLE.get(d["severity"], "")
        self.console.print(Text.assemble(
            (f"incident {c.kind.upper()} ", "bold"), (d["severity"].upper(), style), " ",
            (d["failure"], "bold magenta"), f"  initiating rank {rank}  step {ini['step'] if ini['step'] is not None else '?'}",
            f"  rev {d.get('revision', 1)}  id {d['id']}",
        ))
        if c.kind == "open":
            for line in d["root_cause"][:2]:
                self.console.print(Text("  why: " + line))
            self.console.print(Text("  fix: " + d["fix"].splitlines()[0]))
            self.console.print(Text("  verify: " + d["verify"].splitlines()[0]))
        elif c.kind == "close" and d.get("superseded_by"):
            self.console.print(Text(f"  superseded by {d['superseded_by']}", style="dim"))
