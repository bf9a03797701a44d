"""``promtool test rules`` files from the hand-written expectations in ``expectations/``.

Which series fire which alert, with which labels, after which ``for:`` is data a person
wrote (``expectations/*.yaml``), never computed from the rule templates, so a wrong rule
fails its test instead of agreeing with itself. What this module adds: one case per
catalog failure from the per-failure table (a new catalog entry is held to the table's
``new_failure`` rule), the info incident of every failure in the benign case, and the
expected annotations: the rule's Go-template text with the expected labels filled in by
:func:`expand`, a renderer written apart from Prometheus' own.
"""

from __future__ import annotations

import re
from importlib import resources
from string import Template
from typing import Any

import yaml

from detectors.catalog import Catalog, Entry
from monitor.kit.alerts import AlertRule, RuleFile
from monitor.kit.options import Options, duration, seconds

__all__ = ["ALL_INCIDENT_ALERTS", "expand", "promtool_tests"]

INTERVAL = 15
ALL_INCIDENT_ALERTS = "ALL_INCIDENT_ALERTS"
_ACTION = re.compile(r'\{\{ (?:\$labels\.(\w+)|or \$labels\.(\w+) "([^"\\]*)"|"(\{\{)") \}\}')


def expand(text: str, labels: dict[str, str]) -> str:
    """What Prometheus renders for these labels. Only the three actions the templates use
    are understood; any other ``{{`` is an error (the expectation could not be checked)."""
    out, pos = [], 0
    for m in _ACTION.finditer(text):
        gap = text[pos:m.start()]
        if "{{" in gap:
            raise ValueError(f"unsupported template action in {gap!r}")
        label, or_label, default, brace = m.groups()
        out += [gap, brace or labels.get(label or or_label, "") or (default or "")]
        pos = m.end()
    if "{{" in text[pos:]:
        raise ValueError(f"unsupported template action in {text[pos:]!r}")
    return "".join(out) + text[pos:]


def _load(name: str) -> Any:
    return yaml.safe_load(resources.files("monitor.kit").joinpath("expectations", name).read_text(encoding="utf-8"))


def _sel(metric: str, labels: dict[str, str]) -> str:
    return metric + "{" + ",".join(f'{k}="{v}"' for k, v in labels.items() if v != "") + "}"


def _expected(rule: AlertRule | None, labels: dict[str, str]) -> dict[str, Any]:
    labels = dict(sorted(labels.items()))
    if rule is None:  # no such alert: the case names one anyway, and promtool fails it
        return {"exp_labels": labels}
    ann = rule.annotations.model_dump()
    return {"exp_labels": labels, "exp_annotations": {k: expand(v, labels) for k, v in ann.items()}}


def _case(name: str, series: list[tuple[str, str]], checks: list[dict[str, Any]]) -> dict[str, Any]:
    return {"name": name, "interval": f"{INTERVAL}s", "input_series": [{"series": s, "values": v} for s, v in series],
            "alert_rule_test": checks}


def _failure_labels(e: Entry, base: dict[str, str], severity: str | None = None) -> dict[str, str]:
    return {**base, "failure": e.id, "hardware": str(e.hardware).lower(), "severity": severity or e.severity}


def _want(e: Entry, x: dict[str, Any]) -> dict[str, Any] | None:
    """The hand-written row of a failure, or the ``new_failure`` rule for an unlisted one."""
    if e.id in x["failures"]:
        row = x["failures"][e.id]
        return row if row["alert"] else None
    if e.severity == "info":
        return None
    camel = "".join(p.capitalize() for p in e.id.split("_"))
    return {"alert": f"Rankwatch{camel}", "for": x["new_failure"]["for"][e.severity], "role": e.role}


def _incidents(cat: Catalog, alerts: dict[str, AlertRule]) -> list[dict[str, Any]]:
    x = _load("incidents.yaml")
    kept, base = x["kept"], x["series"]
    tests = []
    for e in sorted(cat, key=lambda e: e.id):
        want = _want(e, x)
        if want is None:
            continue
        lab = _failure_labels(e, {**base, "incident": f"{e.id}-0123456789"})
        fire = seconds(want["for"])
        exp = {k: lab[k] for k in kept if lab.get(k)} | {"role": want["role"]}
        tests.append(_case(
            f"{want['alert']}: one alert per open {e.id} incident, not before {want['for']}, then with its rank, labels and runbook",
            [(_sel("rankwatch_incident_info", lab), "1x40")],
            [{"eval_time": duration(fire - INTERVAL), "alertname": want["alert"], "exp_alerts": []},
             {"eval_time": want["for"], "alertname": want["alert"], "exp_alerts": [_expected(alerts.get(want["alert"]), exp)]}]))
    edge = x["edge_cases"]
    if edge["failure"] in cat:
        e, role = cat[edge["failure"]], x["failures"][edge["failure"]]["role"]
        for c in edge["cases"]:
            series = [_failure_labels(e, {**base, **s["labels"]}) for s in c["input_series"]]
            checks = []
            for t in c["alert_rule_test"]:
                exps = []
                for a in t["exp_alerts"]:
                    lab = {k: series[0][k] for k in kept if series[0].get(k)} | {"role": role}
                    lab = {k: v for k, v in (lab | a["exp_labels"]).items() if v is not None}
                    exps.append(_expected(alerts.get(edge["alert"]), lab))
                checks.append({"eval_time": t["eval_time"], "alertname": edge["alert"], "exp_alerts": exps})
            tests.append(_case(f"{edge['alert']}: {c['name']}",
                               [(_sel("rankwatch_incident_info", lab), s["values"]) for lab, s in zip(series, c["input_series"], strict=True)],
                               checks))
    u = x["unknown_failure"]
    lab = {**base, **u["labels"]}
    fire = seconds(u["for"])
    tests.append(_case(
        f"{u['alert']}: a failure the rules do not know (newer daemon) still pages, pointing at regeneration",
        [(_sel("rankwatch_incident_info", lab), "1x40")],
        [{"eval_time": duration(fire - INTERVAL), "alertname": u["alert"], "exp_alerts": []},
         {"eval_time": u["for"], "alertname": u["alert"],
          "exp_alerts": [_expected(alerts.get(u["alert"]), {k: lab[k] for k in kept if lab.get(k)})]}]))
    return tests


def _subst(obj: Any, values: dict[str, str]) -> Any:
    if isinstance(obj, str):
        return Template(obj).safe_substitute(values)
    if isinstance(obj, list):
        return [_subst(v, values) for v in obj]
    if isinstance(obj, dict):
        return {k: _subst(v, values) for k, v in obj.items()}
    return obj


def _written(name: str, cat: Catalog, rules: RuleFile, opts: Options) -> list[dict[str, Any]]:
    """A file in promtool's format: fill in annotations, incident alerts and info incidents."""
    alerts = rules.alerts()
    incident_alerts = [r.alert for g in rules.groups if g.name == "rankwatch-incidents" for r in g.rules
                       if isinstance(r, AlertRule)]
    tests = []
    for t in _subst(_load(name), {"scrape_job": opts.scrape_job}):
        series = [(s["series"], s["values"]) for s in t.get("input_series", [])]
        if any(not isinstance(v, str) for _, v in series):  # YAML reads an unquoted 0x40 as 64
            raise ValueError(f"{name}: {t['name']}: quote every input series' values")
        base = t.get("info_incidents_of_every_failure")
        if base is not None:
            series += [(_sel("rankwatch_incident_info", _failure_labels(e, {**base, "incident": f"{e.id}-1111111111"}, "info")),
                        "1x80") for e in sorted(cat, key=lambda e: e.id)]
        checks = []
        for c in t["alert_rule_test"]:
            names = incident_alerts if c["alertname"] == ALL_INCIDENT_ALERTS else [c["alertname"]]
            for n in names:
                exps = [_expected(alerts.get(n), a["exp_labels"]) for a in c["exp_alerts"]]
                checks.append({"eval_time": c["eval_time"], "alertname": n, "exp_alerts": exps})
        tests.append(_case(t["name"], series, checks))
    return tests


def promtool_tests(cat: Catalog, rules: RuleFile, opts: Options) -> dict[str, tuple[str, dict[str, Any]]]:
    """File name → (header, promtool test file)."""

    def f(rule_file: str, tests: list[dict[str, Any]]) -> dict[str, Any]:
        return {"rule_files": [f"../rules/{rule_file}"], "evaluation_interval": f"{INTERVAL}s", "tests": tests}

    alerts = "rankwatch-alerts.yml"
    return {
        "incidents.test.yml": ("promtool test rules: every incident alert, before and at its for: window.",
                               f(alerts, _incidents(cat, rules.alerts()))),
        "warnings.test.yml": ("promtool test rules: rate-based training warnings and the sidecar's own alerts.",
                              f(alerts, _written("warnings.yaml", cat, rules, opts))),
        "benign.test.yml": ("promtool test rules: what a healthy job produces never alerts.",
                            f(alerts, _written("benign.yaml", cat, rules, opts))),
        "recording.test.yml": ("promtool test rules: the recording rules the dashboards read.",
                               f("rankwatch-recording.yml", _load("recording.yaml"))),
    }
