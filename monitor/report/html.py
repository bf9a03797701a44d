"""The report as one self-contained HTML file (``rankwatch diagnose --format html``).

Everything is inline (CSS, SVG; no scripts, fonts, images or links to fetch), so the file
opens offline and can be attached to a ticket. Content: the verdict, the job context, a
per-rank timeline (ranks as rows, steps — or time, or line order — as the axis; each
finding a mark; initiators highlighted, collateral greyed), the incidents with their root
cause, evidence, fix and verify command, and per-rank loss / loss-scale charts.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from detectors.detect import JobState
from detectors.timeline import Mark, Point, Timeline, build_timeline
from monitor.report.escape import html as escape_html
from monitor.report.escape import terminal

__all__ = ["render_html", "render_report_html"]

_SEV = {"critical": "#c62828", "warning": "#d98e04", "info": "#2f6fca"}
_MAX_CHARTS = 24
_CSS = """
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:#1d232b;background:#f4f6f9}
header{background:#17212f;color:#fff;padding:18px 28px 14px}
header h1{margin:0 0 8px;font-size:20px;font-weight:600}
header h1 .job{color:#8fc1ff}
.chips{display:flex;flex-wrap:wrap;gap:6px}
.chip{background:#263447;border:1px solid #3a4b63;border-radius:12px;padding:2px 10px;font-size:12.5px;color:#d6e2f0}
.chip b{color:#fff;font-weight:600}
main{padding:18px 28px 28px;max-width:1280px}
section{background:#fff;border:1px solid #dde3ea;border-radius:8px;padding:14px 18px;margin:0 0 16px}
h2{font-size:16px;margin:0 0 10px}
.verdict{display:flex;align-items:center;gap:14px;border-left:6px solid var(--sev);}
.verdict .big{font-size:17px;font-weight:600}
.verdict .sub{color:#4b5563}
.ok{--sev:#2e7d32}
.badge{display:inline-block;border-radius:4px;padding:1px 7px;font-size:11.5px;font-weight:700;color:#fff;letter-spacing:.03em;background:var(--sev)}
.inc{border:1px solid #dde3ea;border-left:5px solid var(--sev);border-radius:6px;padding:10px 14px;margin:0 0 12px}
.inc h3{margin:0 0 6px;font-size:15px}
.inc h3 code{font-weight:400;color:#52606d}
.meta{color:#374151;margin:0 0 6px}
.meta b{color:#111827}
.inc ul{margin:4px 0 8px;padding-left:20px}
.inc li{margin:2px 0}
pre{background:#f6f8fa;border:1px solid #e5e9ef;border-radius:5px;padding:7px 9px;margin:4px 0 8px;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;white-space:pre-wrap;word-break:break-word;max-height:260px;overflow:auto}
.label{font-weight:600;font-size:12.5px;color:#374151;margin-top:6px}
.coll{color:#6b7280;font-size:13px}
svg text{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif}
.legend{display:flex;flex-wrap:wrap;gap:14px;font-size:12.5px;color:#4b5563;margin:6px 0 0}
.legend span{display:inline-flex;align-items:center;gap:5px}
.dot{width:11px;height:11px;border-radius:50%;display:inline-block}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(380px,1fr));gap:12px}
.chart{border:1px solid #e5e9ef;border-radius:6px;padding:6px 8px}
.chart h4{margin:0 0 2px;font-size:13px}
.notes li{color:#4b5563}
footer{color:#6b7280;font-size:12px;padding:0 28px 24px}
"""


# ----------------------------------------------------------------------------- helpers
def _e(v: Any) -> str:
    return escape_html(v)


def _nice_ticks(lo: float, hi: float, n: int = 7) -> list[float]:
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(1, n - 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.ceil(lo / step) * step
    out: list[float] = []
    v = start
    while v <= hi + step * 1e-9 and len(out) < 50:
        out.append(v)
        v += step
    return out


def _fmt_x(v: float, axis: str) -> str:
    if axis == "time":
        return datetime.fromtimestamp(v, UTC).strftime("%H:%M:%S")
    return f"{v:,.0f}" if abs(v) >= 1 or v == 0 else f"{v:g}"


def _fmt(v: float) -> str:
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1e5 or a < 1e-3:
        return f"{v:.1e}"
    return f"{v:.4g}"


def _rank_name(r: int | None) -> str:
    return "job" if r is None else f"rank {r}"


# ----------------------------------------------------------------------------- timeline
def _timeline_svg(tl: Timeline) -> str:
    left, right, top, row_h = 82, 24, 30, 30
    width = 1180
    rows = tl.rows or [None]
    height = top + row_h * len(rows) + 34
    span = tl.x_max - tl.x_min
    pad = span * 0.02

    def sx(x: float) -> float:
        return left + (x - tl.x_min + pad) / (span + 2 * pad) * (width - left - right)

    ry = {r: top + i * row_h + row_h / 2 for i, r in enumerate(rows)}
    out = [f'<svg viewBox="0 0 {width} {height}" width="100%" role="img" aria-label="per-rank timeline">']
    for i, r in enumerate(rows):
        fill = "#f7f9fb" if i % 2 == 0 else "#ffffff"
        out.append(f'<rect x="0" y="{top + i * row_h}" width="{width}" height="{row_h}" fill="{fill}"/>')
        out.append(f'<text x="{left - 10}" y="{ry[r] + 4:.1f}" text-anchor="end" font-size="12" fill="#374151">{_e(_rank_name(r))}</text>')
    for t in _nice_ticks(tl.x_min, tl.x_max):
        x = sx(t)
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + row_h * len(rows)}" stroke="#e3e8ee"/>')
        out.append(f'<text x="{x:.1f}" y="{top - 9}" text-anchor="middle" font-size="11" fill="#6b7280">{_e(_fmt_x(t, tl.axis))}</text>')
    axis_name = {"step": "training step", "time": "time (UTC)", "order": "line order"}[tl.axis]
    out.append(f'<text x="{width - right}" y="{height - 8}" text-anchor="end" font-size="11.5" fill="#6b7280">{axis_name} →</text>')
    # activity: where each rank logged training metrics
    for r, pts in tl.series.items():
        if r not in ry or not pts:
            continue
        x0, x1 = sx(pts[0].x), sx(pts[-1].x)
        out.append(f'<line x1="{x0:.1f}" y1="{ry[r]:.1f}" x2="{max(x1, x0 + 1):.1f}" y2="{ry[r]:.1f}" stroke="#9fb3c8" '
                   f'stroke-width="4" stroke-linecap="round"><title>{_e(_rank_name(r))}: metrics logged from '
                   f'{_e(_fmt_x(pts[0].x, tl.axis))} to {_e(_fmt_x(pts[-1].x, tl.axis))}</title></line>')
        bad = [p for p in pts if p.loss is not None and not math.isfinite(p.loss)]
        if bad:
            bx = sx(bad[0].x)
            out.append(f'<path d="M{bx - 4:.1f},{ry[r] - 4:.1f}l8,8m0,-8l-8,8" stroke="#c62828" stroke-width="1.6">'
                       f'<title>first non-finite loss at {_e(_fmt_x(bad[0].x, tl.axis))}</title></path>')
    # collateral first (underneath), then initiators; a label goes right of its mark, else
    # left, else (no room on the row) it is left out and only the tooltip names the mark
    taken: dict[int | None, list[tuple[float, float]]] = {}
    for m in sorted(tl.marks, key=lambda m: (m.kind == "initiator", m.x or 0.0)):
        if m.rank not in ry or m.x is None:
            continue
        x, y = sx(m.x), ry[m.rank]
        tip = f"{m.title} [{m.failure}] — {_rank_name(m.rank)} at {_fmt_x(m.x, tl.axis)}"
        tip += " (no step/time of its own: placed at the rank's last position)" if m.approx else ""
        tip += f"\n{m.text[:300]}"
        dash = ' stroke-dasharray="2 2"' if m.approx else ""
        if m.kind == "initiator":
            color = _SEV.get(m.severity, "#c62828")
            out.append(f'<g><title>{_e(tip)}</title><circle cx="{x:.1f}" cy="{y:.1f}" r="12" fill="{color}" opacity=".18"/>'
                       f'<circle cx="{x:.1f}" cy="{y:.1f}" r="7.5" fill="{color}" stroke="#fff" stroke-width="2"{dash}/></g>')
            label_w = 6.6 * len(m.failure) + 4
            row = taken.setdefault(m.rank, [])
            spans = [(x + 14, x + 14 + label_w, "start", 14), (x - 14 - label_w, x - 14, "end", -14)]
            if x > width * 0.72:
                spans.reverse()
            for a, b, anchor, dx in spans:
                if a >= left and b <= width - 2 and all(b < c or a > d for c, d in row):
                    row.append((a, b))
                    out.append(f'<text x="{x + dx:.1f}" y="{y + 4:.1f}" text-anchor="{anchor}" font-size="11.5" '
                               f'font-weight="600" fill="{color}">{_e(m.failure)}</text>')
                    break
        else:
            out.append(f'<g><title>{_e(tip)}</title><circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="#9aa5b1" '
                       f'stroke="#6b7785" stroke-width="1"{dash} opacity=".85"/></g>')
    out.append("</svg>")
    return "".join(out)


# ----------------------------------------------------------------------------- charts
def _chart_svg(rank: int | None, pts: list[Point], marks: list[Mark], axis: str) -> str:
    w, h, left, right, top, bottom = 380, 170, 46, 46, 10, 24
    finite = [(p.x, p.loss) for p in pts if p.loss is not None and math.isfinite(p.loss)]
    scales = [(p.x, p.loss_scale) for p in pts if p.loss_scale is not None and math.isfinite(p.loss_scale) and p.loss_scale > 0]
    xs = [p.x for p in pts]
    x0, x1 = min(xs), max(xs)
    if x1 <= x0:
        x1 = x0 + 1

    def sx(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * (w - left - right)

    out = [f'<svg viewBox="0 0 {w} {h}" width="100%" role="img" aria-label="loss of {_e(_rank_name(rank))}">',
           f'<rect x="{left}" y="{top}" width="{w - left - right}" height="{h - top - bottom}" fill="#fbfcfd" stroke="#e5e9ef"/>']
    for t in _nice_ticks(x0, x1, 5):
        out.append(f'<text x="{sx(t):.1f}" y="{h - 8}" text-anchor="middle" font-size="10" fill="#6b7280">{_e(_fmt_x(t, axis))}</text>')
    if finite:
        lo, hi = min(v for _, v in finite), max(v for _, v in finite)
        if hi <= lo:
            hi = lo + (abs(lo) or 1) * 0.1

        def sy(v: float) -> float:
            return top + (1 - (v - lo) / (hi - lo)) * (h - top - bottom)

        for t in _nice_ticks(lo, hi, 4):
            out.append(f'<line x1="{left}" y1="{sy(t):.1f}" x2="{w - right}" y2="{sy(t):.1f}" stroke="#eef1f5"/>')
            out.append(f'<text x="{left - 5}" y="{sy(t) + 3:.1f}" text-anchor="end" font-size="10" fill="#2f6fca">{_e(_fmt(t))}</text>')
        path = " ".join(f"{sx(x):.1f},{sy(v):.1f}" for x, v in finite)
        out.append(f'<polyline points="{path}" fill="none" stroke="#2f6fca" stroke-width="1.6"/>')
    if scales:
        llo = math.log2(min(v for _, v in scales))
        lhi = math.log2(max(v for _, v in scales))
        if lhi <= llo:
            lhi = llo + 1

        def sy2(v: float) -> float:
            return top + (1 - (math.log2(v) - llo) / (lhi - llo)) * (h - top - bottom)

        x_first, v_first = scales[0]
        d = [f"M{sx(x_first):.1f},{sy2(v_first):.1f}"] + [f"H{sx(x):.1f}V{sy2(v):.1f}" for x, v in scales[1:]]
        out.append(f'<path d="{"".join(d)}" fill="none" stroke="#d98e04" stroke-width="1.4" stroke-dasharray="4 2"/>')
        for v in {2 ** round(llo), 2 ** round(lhi)}:
            out.append(f'<text x="{w - right + 4}" y="{sy2(v) + 3:.1f}" font-size="10" fill="#b77900">{_e(_fmt(v))}</text>')
    for p in pts:
        if p.loss is not None and not math.isfinite(p.loss):
            x = sx(p.x)
            out.append(f'<path d="M{x - 3:.1f},{top + 3}l6,6m0,-6l-6,6" stroke="#c62828" stroke-width="1.5">'
                       f'<title>loss {_e(p.loss)} at {_e(_fmt_x(p.x, axis))}</title></path>')
    for m in marks:
        if m.x is None or not (x0 <= m.x <= x1):
            continue
        color = _SEV.get(m.severity, "#c62828") if m.kind == "initiator" else "#9aa5b1"
        out.append(f'<line x1="{sx(m.x):.1f}" y1="{top}" x2="{sx(m.x):.1f}" y2="{h - bottom}" stroke="{color}" '
                   f'stroke-width="1.3" stroke-dasharray="3 2"><title>{_e(m.failure)} ({_e(m.kind)})</title></line>')
    out.append("</svg>")
    return "".join(out)


# ----------------------------------------------------------------------------- page
def _incident_html(inc: dict[str, Any]) -> str:
    ini = inc["initiator"]
    sev = _SEV.get(inc["severity"], "#6b7280")
    rank = "unknown — the logs cannot tell" if ini["rank"] is None else str(ini["rank"])
    parts = [f'<div class="inc" style="--sev:{sev}">',
             f'<h3><span class="badge">{_e(inc["severity"].upper())}</span> {_e(inc["title"])} <code>{_e(inc["failure"])}</code></h3>',
             f'<p class="meta"><b>Initiating rank:</b> {_e(rank)} · <b>step:</b> {_e(ini["step"] if ini["step"] is not None else "?")}'
             f' · <b>time:</b> {_e(ini["time"] or "?")} · {"hardware" if inc["hardware"] else "software"} · <code>{_e(inc["id"])}</code></p>',
             "<ul>" + "".join(f"<li>{_e(line)}</li>" for line in inc["root_cause"]) + "</ul>"]
    if ini.get("evidence"):
        parts.append('<div class="label">Evidence</div><pre>'
                     + "\n".join(_e(terminal(f"{e['path']}:{e['line']}: {e['text'][:400]}")) for e in ini["evidence"][:8]) + "</pre>")
    if inc.get("collateral"):
        coll = ", ".join(f"rank {c['rank'] if c['rank'] is not None else '?'} ({c['failure']}"
                         + (f", step {c['step']}" if c.get("step") is not None else "") + ")" for c in inc["collateral"][:40])
        more = f" … and {len(inc['collateral']) - 40} more" if len(inc["collateral"]) > 40 else ""
        parts.append(f'<p class="coll"><b>Collateral (consequences, not causes):</b> {_e(coll)}{_e(more)}</p>')
    parts.append(f'<div class="label">Fix ({_e(inc.get("fix_stack", ""))})</div><pre>{_e(inc["fix"])}</pre>')
    if inc.get("fix_why"):
        parts.append(f'<p class="coll"><i>Why it works:</i> {_e(inc["fix_why"])}</p>')
    parts.append(f'<div class="label">Verify</div><pre>{_e(inc["verify"])}</pre></div>')
    return "".join(parts)


def render_html(report: dict[str, Any], timeline: Timeline | None = None) -> str:
    """The report (the JSON contract) and, when given, its timeline as one self-contained HTML page."""
    ctx = report.get("context", {})
    incs = report.get("incidents", [])
    chips = [("ranks", ", ".join(map(str, report.get("ranks", [])[:64])) or "none"),
             ("precision", ctx.get("precision") or "unknown"),
             ("loss scaling", "unknown" if ctx.get("loss_scaling") is None else str(ctx.get("loss_scaling")).lower()),
             ("GPU", ctx.get("gpu") or "unknown"), ("framework", ctx.get("framework") or "unknown"),
             ("world size", ctx.get("world_size") or "unknown"), ("files", report.get("files", "?"))]
    h = ['<!doctype html><html lang="en"><head><meta charset="utf-8">',
         '<meta name="viewport" content="width=device-width, initial-scale=1">',
         f"<title>rankwatch diagnosis: {_e(report['job'])}</title><style>{_CSS}</style></head><body>",
         f'<header><h1>rankwatch diagnosis <span class="job">{_e(report["job"])}</span></h1><div class="chips">',
         "".join(f'<span class="chip">{_e(k)}: <b>{_e(v)}</b></span>' for k, v in chips),
         "</div></header><main>"]
    if incs:
        top = incs[0]
        ini = top["initiator"]
        who = "the logs cannot tell which rank" if ini["rank"] is None else f"rank {ini['rank']}"
        at = f" at step {ini['step']}" if ini["step"] is not None else ""
        h.append(f'<section class="verdict" style="--sev:{_SEV.get(top["severity"], "#6b7280")}"><span class="badge">'
                 f'{_e(top["severity"].upper())}</span><div><div class="big">{_e(top["title"])}</div>'
                 f'<div class="sub">Initiated by {_e(who)}{_e(at)} · <code>{_e(top["failure"])}</code> · '
                 f'{len(incs)} incident(s) in this job</div></div></section>')
    else:
        h.append('<section class="verdict ok"><span class="badge" style="--sev:#2e7d32">OK</span>'
                 '<div class="big">No incident found.</div></section>')
    if timeline is not None and (timeline.marks or timeline.series):
        h.append("<section><h2>Timeline</h2>" + _timeline_svg(timeline))
        h.append('<div class="legend"><span><i class="dot" style="background:#c62828"></i>initiator (critical)</span>'
                 '<span><i class="dot" style="background:#d98e04"></i>initiator (warning)</span>'
                 '<span><i class="dot" style="background:#2f6fca"></i>initiator (info)</span>'
                 '<span><i class="dot" style="background:#9aa5b1"></i>collateral report</span>'
                 '<span><i class="dot" style="background:#9fb3c8;border-radius:2px;height:5px"></i>rank logging metrics</span>'
                 '<span style="color:#c62828">✕ first non-finite loss</span></div></section>')
    h.append("<section><h2>Incidents</h2>" + ("".join(_incident_html(i) for i in incs) or "<p>None.</p>") + "</section>")
    if timeline is not None and timeline.has_loss:
        ranks = [r for r in timeline.rows if timeline.series.get(r)]
        h.append('<section><h2>Loss and loss scale per rank</h2><div class="legend" style="margin:0 0 8px">'
                 '<span><i class="dot" style="background:#2f6fca"></i>loss (left axis)</span>'
                 '<span><i class="dot" style="background:#d98e04"></i>loss scale (right axis, log scale)</span>'
                 '<span>dashed verticals: incident marks</span></div><div class="grid">')
        for r in ranks[:_MAX_CHARTS]:
            pts = timeline.series[r]
            marks = [m for m in timeline.marks if m.rank == r or m.rank is None]
            h.append(f'<div class="chart"><h4>{_e(_rank_name(r))}</h4>{_chart_svg(r, pts, marks, timeline.axis)}</div>')
        h.append("</div>")
        if len(ranks) > _MAX_CHARTS:
            h.append(f"<p class='coll'>{len(ranks) - _MAX_CHARTS} more rank(s) not charted.</p>")
        h.append("</section>")
    if report.get("notes"):
        h.append('<section class="notes"><h2>Notes</h2><ul>' + "".join(f"<li>{_e(n)}</li>" for n in report["notes"]) + "</ul></section>")
    h.append("</main><footer>Generated by rankwatch from the job's own logs; self-contained, nothing is fetched.</footer>"
             "</body></html>\n")
    return "".join(h)


def render_report_html(report: dict[str, Any], state: JobState | None) -> str:
    """``render_html`` with the timeline built from the detect stage's state (when there is one)."""
    return render_html(report, build_timeline(state, report.get("incidents", [])) if state is not None else None)
