"""The report as Markdown, for pasting into an issue or a postmortem."""

from __future__ import annotations

from typing import Any

__all__ = ["render_markdown"]


def _rank(r: Any) -> str:
    return "unknown (the logs cannot tell)" if r is None else str(r)


def render_markdown(report: dict[str, Any]) -> str:
    ctx = report["context"]
    out = [f"# rankwatch diagnosis: `{report['job']}`", ""]
    out.append(
        f"Ranks seen: {', '.join(map(str, report['ranks'])) or 'none'} · precision: {ctx.get('precision') or 'unknown'}"
        f" · loss scaling: {ctx.get('loss_scaling') if ctx.get('loss_scaling') is not None else 'unknown'}"
        f" · GPU: {ctx.get('gpu') or 'unknown'} · framework: {ctx.get('framework') or 'unknown'}"
    )
    out.append("")
    if not report["incidents"]:
        out += ["**No incident found.**", ""]
    for n, inc in enumerate(report["incidents"], 1):
        ini = inc["initiator"]
        out.append(f"## {n}. [{inc['severity'].upper()}] {inc['title']} (`{inc['failure']}`)")
        out.append("")
        hw = "hardware" if inc["hardware"] else "software"
        out.append(f"- **Initiating rank:** {_rank(ini['rank'])} · step: {ini['step'] if ini['step'] is not None else 'unknown'}"
                   f" · time: {ini['time'] or 'unknown'} · {hw} · id `{inc['id']}`")
        if inc["collateral"]:
            coll = ", ".join(f"rank {c['rank'] if c['rank'] is not None else '?'} ({c['failure']})" for c in inc["collateral"][:24])
            out.append(f"- **Collateral (consequences, not causes):** {coll}")
        out += ["", "**Why**", ""]
        out += [f"- {line}" for line in inc["root_cause"]]
        out += ["", "**Evidence**", "", "```"]
        out += [f"{e['path']}:{e['line']}: {e['text'][:300]}" for e in inc["initiator"]["evidence"]]
        out += ["```", "", f"**Fix ({inc['fix_stack']})**", "", inc["fix"], "", f"_Why it works:_ {inc['fix_why']}", ""]
        out += ["**Verify**", "", "```", inc["verify"], "```", ""]
    if report.get("notes"):
        out += ["## Notes", ""] + [f"- {n}" for n in report["notes"]] + [""]
    return "\n".join(out)
