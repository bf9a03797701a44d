"""The report as Markdown, for pasting into an issue or a postmortem.

Everything that came from the logs (job name, context, evidence, narrative, notes) is
escaped by ``monitor.report.escape``: it shows as itself and never becomes a link, an
image, raw HTML or a closed code fence. Fixes and verify commands are fenced.
"""

from __future__ import annotations

from typing import Any

from monitor.report.escape import code_span, fence, markdown

__all__ = ["render_markdown"]


def _rank(r: Any) -> str:
    return "unknown (the logs cannot tell)" if r is None else markdown(r)


def _or(v: Any, default: str = "unknown") -> str:
    return default if v is None or v == "" else markdown(v)


def render_markdown(report: dict[str, Any]) -> str:
    ctx = report["context"]
    out = [f"# rankwatch diagnosis: {code_span(report['job'])}", ""]
    out.append(
        f"Ranks seen: {markdown(', '.join(map(str, report['ranks']))) or 'none'} · precision: {_or(ctx.get('precision'))}"
        f" · loss scaling: {_or(ctx.get('loss_scaling'))}"
        f" · GPU: {_or(ctx.get('gpu'))} · framework: {_or(ctx.get('framework'))}"
    )
    out.append("")
    if not report["incidents"]:
        out += ["**No incident found.**", ""]
    for n, inc in enumerate(report["incidents"], 1):
        ini = inc["initiator"]
        out.append(f"## {n}. \\[{markdown(inc['severity'].upper())}\\] {markdown(inc['title'])} ({code_span(inc['failure'])})")
        out.append("")
        hw = "hardware" if inc["hardware"] else "software"
        out.append(f"- **Initiating rank:** {_rank(ini['rank'])} · step: {_or(ini['step'])}"
                   f" · time: {_or(ini['time'])} · {hw} · id {code_span(inc['id'])}")
        if inc["collateral"]:
            coll = ", ".join(f"rank {c['rank'] if c['rank'] is not None else '?'} ({c['failure']})" for c in inc["collateral"][:24])
            out.append(f"- **Collateral (consequences, not causes):** {markdown(coll)}")
        out += ["", "**Why**", ""]
        out += [f"- {markdown(line)}" for line in inc["root_cause"]]
        out += ["", "**Evidence**", ""]
        out += fence([f"{e['path']}:{e['line']}: {e['text'][:300]}" for e in inc["initiator"]["evidence"]])
        out += ["", f"**Fix ({markdown(inc['fix_stack'])})**", ""]
        out += fence([inc["fix"]], multiline=True)
        out += ["", f"_Why it works:_ {markdown(inc['fix_why'])}", ""]
        out += ["**Verify**", "", *fence([inc["verify"]], multiline=True), ""]
    if report.get("notes"):
        out += ["## Notes", ""] + [f"- {markdown(n)}" for n in report["notes"]] + [""]
    return "\n".join(out)
