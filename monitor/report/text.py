"""The report for a terminal (rich)."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.text import Text

from monitor.report import escape

__all__ = ["render_text"]

_STYLE = {"critical": "bold red", "warning": "yellow", "info": "cyan"}


def render_text(report: dict[str, Any], console: Console) -> None:
    """Print the report. Every string of it is shown, never interpreted: control characters
    are made visible (``monitor.report.escape``) and nothing is read as rich markup."""
    report = escape.report(report)
    ctx = report["context"]
    console.print(
        Text.assemble(
            ("rankwatch diagnose ", "bold"), (report["job"], "bold cyan"),
            f"  ranks: {', '.join(map(str, report['ranks'])) or 'none'}  precision: {ctx.get('precision') or '?'}"
            f"  loss scaling: {ctx.get('loss_scaling') if ctx.get('loss_scaling') is not None else '?'}"
            f"  GPU: {ctx.get('gpu') or '?'}  framework: {ctx.get('framework') or '?'}",
        )
    )
    if not report["incidents"]:
        console.print(Text("No incident found.", style="green"))
    for inc in report["incidents"]:
        ini = inc["initiator"]
        rank = "unknown — the logs cannot tell" if ini["rank"] is None else str(ini["rank"])
        body: list[Any] = [
            Text.assemble(("Initiating rank: ", "bold"), rank, ("   step: ", "bold"), str(ini["step"] if ini["step"] is not None else "?"),
                          ("   time: ", "bold"), ini["time"] or "?", ("   ", ""), ("hardware" if inc["hardware"] else "software", "magenta")),
        ]
        body += [Text("• " + line) for line in inc["root_cause"]]
        body.append(Text("Evidence:", style="bold"))
        body += [Text(f"  {e['path']}:{e['line']}: {e['text'][:240]}", style="dim") for e in ini["evidence"][:5]]
        if inc["collateral"]:
            ranks = sorted({c["rank"] for c in inc["collateral"] if c["rank"] is not None})
            body.append(Text.assemble(("Collateral: ", "bold"), f"{len(inc['collateral'])} report(s) from ranks {', '.join(map(str, ranks)) or '?'} — consequences, not causes"))
        body.append(Text.assemble((f"Fix ({inc['fix_stack']}): ", "bold green"), inc["fix"]))
        body.append(Text.assemble(("Verify: ", "bold green"), inc["verify"]))
        title = Text.assemble((inc["severity"].upper(), _STYLE.get(inc["severity"], "")), f" {inc['title']} ({inc['failure']})")
        console.print(Panel(Group(*body), title=title, title_align="left"))
    for note in report.get("notes", []):
        console.print(Text(f"note: {note}", style="dim"))
