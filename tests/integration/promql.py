"""Just enough PromQL reading to check what rules and dashboards use: metric names, the
labels they match, group by, or print — not a parser, but strict: an identifier that is
not a known function or keyword is taken as a metric name and must exist.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["FUNCTIONS", "Usage", "instantiate", "usage"]

FUNCTIONS = {
    # aggregations and operators
    "sum", "min", "max", "avg", "count", "stddev", "stdvar", "topk", "bottomk", "quantile", "count_values",
    "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset",
    # functions
    "rate", "irate", "increase", "delta", "idelta", "deriv", "time", "vector", "scalar", "clamp_min", "clamp_max",
    "abs", "absent", "label_replace", "histogram_quantile", "timestamp", "sort", "sort_desc", "changes", "resets",
    "avg_over_time", "max_over_time", "min_over_time", "count_over_time", "last_over_time", "sum_over_time",
    # Grafana variable queries
    "label_values", "query_result",
    "inf", "nan",
}

_GRAFANA_VARS = {
    "$__rate_interval": "1m", "$__interval": "1m", "$__range": "1h",
}


def instantiate(expr: str, values: dict[str, str] | None = None) -> str:
    """Replace Grafana variables: ``$__rate_interval`` → ``1m``; ``$job`` etc. → ``values`` or ``.*``."""
    for k, v in _GRAFANA_VARS.items():
        expr = expr.replace(k, v)
    values = values or {}
    return re.sub(r"\$\{?(\w+)\}?", lambda m: values.get(m.group(1), ".*"), expr)


@dataclass
class Usage:
    metrics: set[str] = field(default_factory=set)
    matchers: list[tuple[str, str]] = field(default_factory=list)  # (metric, label) in a selector
    grouping: set[str] = field(default_factory=set)  # labels in by/without/on/ignoring/group_*
    unknown_functions: set[str] = field(default_factory=set)


_SELECTOR = re.compile(r"([a-zA-Z_:][\w:]*)?\s*\{([^}]*)\}")
_MATCHER = re.compile(r'(\w+)\s*(?:=~|!~|!=|=)\s*"(?:[^"\\]|\\.)*"')
_GROUPING = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)")
_IDENT = re.compile(r"(?<![\w.:$])([a-zA-Z_:][\w:]*)(\s*\()?")


def usage(expr: str) -> Usage:
    u = Usage()
    for m in _SELECTOR.finditer(expr):
        name = m.group(1) or "__any__"
        if name in FUNCTIONS:  # a function applied to a bare selector: `sum{...}` does not exist
            name = "__any__"
        for lm in _MATCHER.finditer(m.group(2)):
            u.matchers.append((name, lm.group(1)))
    rest = _SELECTOR.sub(lambda m: m.group(1) or "", expr)
    for g in _GROUPING.finditer(rest):
        u.grouping |= {x.strip() for x in g.group(2).split(",") if x.strip()}
    rest = _GROUPING.sub(lambda g: g.group(1), rest)
    rest = re.sub(r'"(?:[^"\\]|\\.)*"', "", rest)  # strings (label_replace arguments)
    rest = re.sub(r"\[[^\]]*\]", "", rest)  # range and subquery windows
    rest = re.sub(r"\b\d+(\.\d+)?(e[+-]?\d+)?\b", "", rest)  # numbers
    for im in _IDENT.finditer(rest):
        name, call = im.group(1), im.group(2)
        if name in FUNCTIONS:
            continue
        if call:
            u.unknown_functions.add(name)
        else:
            u.metrics.add(name)
    return u
