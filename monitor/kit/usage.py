"""The kit may only use metrics the exporter has: every ``rankwatch_*`` name in a rule or a
dashboard query must be a row of :mod:`monitor.metric_table` (recording rule names, which
embed a metric name between colons, are not metrics)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from monitor.kit.alerts import RuleFile
from monitor.metric_table import METRICS

__all__ = ["KitError", "check_metrics", "unknown_metrics"]

_NAME = re.compile(r"(?<![:\w])rankwatch_\w+(?![:\w])")


class KitError(ValueError):
    """The kit refers to something the daemon does not export."""


def unknown_metrics(exprs: Iterable[str]) -> set[str]:
    exported = {m.sample_name for m in METRICS}
    return {name for e in exprs for name in _NAME.findall(e)} - exported


def check_metrics(rule_files: Iterable[RuleFile], dashboards: Iterable[str]) -> None:
    exprs = [r.expr for f in rule_files for g in f.groups for r in g.rules]
    for text in dashboards:
        exprs += re.findall(r'"(?:expr|query)": ("(?:[^"\\]|\\.)*")', text)
    exprs = [json.loads(e) if e.startswith('"') else e for e in exprs]
    bad = unknown_metrics(exprs)
    if bad:
        raise KitError(f"not in monitor/metric_table.py (the daemon does not export them): {', '.join(sorted(bad))}")
