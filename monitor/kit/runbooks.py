"""Runbook pages (``docs/runbooks/``): one per catalog failure, one for the sidecar, an index.

The prose is in ``templates/*.md.j2``; a failure's page embeds its catalog entry as the
report renders it, then how it alerts (read off the generated rules, so the page says
what the rules do).
"""

from __future__ import annotations

from detectors.catalog import Catalog
from monitor.kit.alerts import RuleFile
from monitor.kit.options import ALERTS_FILE, DAEMON_PAGE, MARK, REGENERATE, RUNBOOK_DIR, Options, alert_name
from monitor.kit.render import markdown
from monitor.metric_table import METRICS
from monitor.report.entry import render_entry

__all__ = ["runbooks"]


def runbooks(cat: Catalog, rules: RuleFile, opts: Options) -> dict[str, str]:
    """Repository-relative path → page."""
    alerts = rules.alerts()
    pages = {}
    for e in sorted(cat, key=lambda e: e.id):
        pages[f"{RUNBOOK_DIR}/{e.id}.md"] = markdown(
            "runbook.md.j2", mark=MARK, e=e, body=render_entry(e).rstrip("\n"), alert=alerts.get(alert_name(e.id)),
            alerts_file=ALERTS_FILE, owner_label=opts.owner_label, related=[r for r in e.related if r in cat])
    pages[f"{RUNBOOK_DIR}/{DAEMON_PAGE}.md"] = markdown("daemon.md.j2", mark=MARK, a=alerts, metrics=METRICS)
    rows = [(e, alert_name(e.id) if alert_name(e.id) in alerts else None)
            for e in sorted(cat, key=lambda e: (e.category, e.id))]
    pages[f"{RUNBOOK_DIR}/README.md"] = markdown("index.md.j2", mark=MARK, rows=rows, daemon_page=DAEMON_PAGE,
                                                 regenerate=REGENERATE)
    return pages
