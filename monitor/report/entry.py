"""One catalog entry as Markdown (``rankwatch catalog show``; runbook pages later)."""

from __future__ import annotations

from detectors.catalog import Entry

__all__ = ["render_entry"]


def render_entry(e: Entry) -> str:
    out = [f"# {e.title} (`{e.id}`)", ""]
    out.append(f"*{e.category} · {'hardware' if e.hardware else 'software'} · usually a {e.role} · severity {e.severity}*")
    out += ["", e.summary, "", "## Mechanism", "", e.mechanism, ""]
    if e.observe:
        out += ["## What you will observe", ""] + [f"- {x}" for x in e.observe] + [""]
    out += ["## Symptoms", "", "| symptom | why |", "|---|---|"]
    out += [f"| {s.symptom} | {s.why} |" for s in e.symptoms]
    out += ["", "## Root causes", ""] + [f"- {x}" for x in e.root_causes] + [""]
    if e.confirm:
        out += ["## Confirm", ""] + [f"- [ ] {x}" for x in e.confirm] + [""]
    out += ["## Fix", ""]
    for stack, fix in e.fix.items():
        out += [f"### {stack.value}", "", fix.change, ""]
        if fix.snippet:
            out += ["```", fix.snippet.rstrip(), "```", ""]
        out += [f"Why: {fix.why}", ""]
    if e.prevention:
        out += ["## Prevention", ""] + [f"- [ ] {x}" for x in e.prevention] + [""]
    out += ["## Verify", "", "```", e.verify.rstrip(), "```", ""]
    if e.scale_notes:
        out += ["## At 1 GPU vs 64+ GPUs", "", e.scale_notes, ""]
    if e.data_table:
        keys = list(e.data_table[0].keys())
        out += ["## Reference table", "", "| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
        out += ["| " + " | ".join(row.get(k, "") for k in keys) + " |" for row in e.data_table] + [""]
    if e.fingerprints:
        out += ["## Fingerprints", ""] + [f"- `{f.pattern}` — {f.description}" for f in e.fingerprints] + [""]
    if e.related:
        out += ["## Related", ""] + [f"- `{r}`" for r in e.related] + [""]
    if e.references:
        out += ["## References", ""] + [f"- {r}" for r in e.references] + [""]
    return "\n".join(out)
