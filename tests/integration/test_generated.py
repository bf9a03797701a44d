"""The generated monitoring kit is current, complete, and uses only what the daemon exports.

- the committed rules, promtool cases, runbooks and dashboards equal the generator's
  output (so they cannot drift from the catalog); the failure says which command to run;
- every catalog failure that can page or warn has an alert, a runbook and promtool cases;
  ``info`` failures have none;
- every metric name and label used by a rule, a dashboard panel, a legend or a template
  variable is one the daemon exports (read from a real daemon fed a golden torchrun case),
  a target label Prometheus adds, or a recording rule's output.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from detectors.catalog import load_catalog
from monitor import kit
from monitor.kit.dashboards import dashboard_queries
from tests.conftest import REPO
from tests.integration.promql import instantiate, usage

GOLDEN = REPO / "tests" / "e2e" / "golden"
TARGET_LABELS = {"job", "instance", kit.Options().owner_label}  # added by the scrape config


def test_generated_files_are_current() -> None:
    stale = kit.stale(REPO, kit.generate())
    assert not stale, (
        f"{len(stale)} generated file(s) differ from the catalog: {', '.join(stale[:8])}{' …' if len(stale) > 8 else ''}\n"
        f"Regenerate with: {kit.REGENERATE}  (then review the diff)"
    )


def test_stale_detection_names_files_and_command(tmp_path: Path) -> None:
    files = kit.generate()
    kit.write(tmp_path, files)
    assert kit.stale(tmp_path, files) == []
    (tmp_path / kit.ALERTS_FILE).write_text("edited by hand\n")
    (tmp_path / "docs/runbooks/removed_failure.md").write_text(f"<!-- {kit.MARK} -->\n")
    assert kit.stale(tmp_path, files) == [kit.ALERTS_FILE, "docs/runbooks/removed_failure.md (no longer generated)"]
    out: list[str] = []

    class W:
        def write(self, s: str) -> None:
            out.append(s)

    assert kit.run(tmp_path, check=True, out=W()) == 1
    assert "rankwatch generate" in "".join(out)
    assert kit.run(tmp_path, out=W()) == 0  # rewrites, removes the leftover
    assert kit.stale(tmp_path, files) == []
    assert not (tmp_path / "docs/runbooks/removed_failure.md").exists()


def test_cli_generate_check_passes_on_the_tree() -> None:
    exe = Path(sys.executable).with_name("rankwatch")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "monitor"]
    r = subprocess.run([*cmd, "generate", "--check", "--root", str(REPO)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "current" in r.stdout


def _rules() -> list[dict[str, Any]]:
    out = []
    for f in (kit.ALERTS_FILE, kit.RECORDING_FILE):
        for g in yaml.safe_load((REPO / f).read_text())["groups"]:
            out += g["rules"]
    return out


def _alert_tests() -> dict[str, set[str]]:
    """alertname → names of the promtool tests that expect it to fire."""
    fired: dict[str, set[str]] = {}
    for f in sorted((REPO / kit.TESTS_DIR).glob("*.test.yml")):
        for t in yaml.safe_load(f.read_text())["tests"]:
            for c in t.get("alert_rule_test", []):
                if c["exp_alerts"]:
                    fired.setdefault(c["alertname"], set()).add(t["name"])
    return fired


def test_every_paging_failure_has_an_alert_runbook_and_promtool_case() -> None:
    cat = load_catalog()
    alerts = {r["alert"]: r for r in _rules() if "alert" in r}
    fired = _alert_tests()
    for e in cat:
        name = kit.alert_name(e.id)
        assert (REPO / kit.RUNBOOK_DIR / f"{e.id}.md").is_file(), e.id
        if e.severity == "info":
            assert name not in alerts, f"{e.id} is info and must never alert"
            continue
        rule = alerts[name]
        assert f'failure="{e.id}"' in rule["expr"] and 'severity=~"critical|warning"' in rule["expr"]
        assert rule["annotations"]["runbook_url"].endswith(f"/{e.id}.md")
        assert {"summary", "description", "runbook_url"} <= set(rule["annotations"])
        assert name in fired, f"no promtool case expects {name} to fire"
    for name, rule in alerts.items():
        assert name in fired, f"no promtool case expects {name} to fire"
        assert rule.get("for"), f"{name} has no for: window"
        assert {"summary", "description", "runbook_url"} <= set(rule["annotations"]), name
        sev = rule["labels"].get("severity")
        assert sev in (None, "critical", "warning"), name  # None: the incident's own severity label
        url = rule["annotations"]["runbook_url"].split("#")[0]
        page = url.removeprefix(kit.DEFAULT_RUNBOOK_URL + "/")
        assert (REPO / kit.RUNBOOK_DIR / page).is_file(), f"{name}: runbook {page} missing"


def _dashboards() -> dict[str, dict[str, Any]]:
    return {p.name: json.loads(p.read_text()) for p in sorted((REPO / kit.DASHBOARD_DIR).glob("*.json"))}


def test_dashboards_are_provisionable_grafana_json() -> None:
    boards = _dashboards()
    assert set(boards) == {"rankwatch-job.json", "rankwatch-fleet.json", "rankwatch-daemon.json"}
    assert len({b["uid"] for b in boards.values()}) == len(boards)
    prov = yaml.safe_load((REPO / "grafana/provisioning/dashboards/rankwatch.yaml").read_text())
    assert prov["providers"][0]["options"]["path"].endswith("/rankwatch")
    ds = yaml.safe_load((REPO / "grafana/provisioning/datasources/rankwatch.yaml").read_text())
    assert ds["datasources"][0]["type"] == "prometheus"
    for name, b in boards.items():
        variables = {v["name"] for v in b["templating"]["list"]}
        assert "datasource" in variables, name
        cells: set[tuple[int, int]] = set()
        ids = [p["id"] for p in b["panels"]]
        assert len(ids) == len(set(ids)), f"{name}: duplicate panel ids"
        for p in b["panels"]:
            g = p["gridPos"]
            assert g["x"] + g["w"] <= 24, f"{name}: {p['title']} overflows the grid"
            mine = {(x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])}
            assert not mine & cells, f"{name}: {p['title']} overlaps another panel"
            cells |= mine
            if p["type"] == "row":
                continue
            assert p["datasource"]["uid"] == "${datasource}", f"{name}: {p['title']}"
            assert p["targets"], f"{name}: {p['title']} has no query"
            for t in p["targets"]:
                used = set(re.findall(r"\$\{?(\w+)", t["expr"])) - {"__rate_interval", "__interval", "__range"}
                assert used <= variables, f"{name}: {p['title']} uses undefined variables {used - variables}"


# --------------------------------------------------------------------------- exported metrics
def _collect(case: str, tmp: Path) -> tuple[dict[str, set[str]], str]:
    """Run the daemon in-process on a golden case; return (sample name → labels, /metrics text)."""
    from prometheus_client.exposition import generate_latest

    from monitor.config import load_config
    from monitor.daemon import Daemon

    src = GOLDEN / case / "logs"
    logs = tmp / case
    shutil.copytree(src, logs)

    async def run() -> tuple[list[Any], str]:
        cfg = load_config(logs=[str(logs / "**" / "*.log")], job=case, metrics_addr="127.0.0.1:0",
                          state_dir=tmp / f"{case}-state", rescan_interval=0.05, poll_interval=0.02, stall_floor=3600)
        d = Daemon(cfg, log=lambda m: None)
        task = asyncio.create_task(d.run())
        for _ in range(200):
            await asyncio.sleep(0.02)
            if d.tailer.stats.lines and not d.tailer.lag_bytes() and d.engine.published:
                break
        await asyncio.sleep(0.2)
        fams = list(d.collector.collect())
        text = generate_latest(d.registry).decode()
        d.stopping.set()
        await task
        return fams, text

    fams, text = asyncio.run(run())
    exported: dict[str, set[str]] = {}
    for f in fams:
        name = f.name + ("_total" if f.type == "counter" else "")
        labels = set(getattr(f, "_labelnames", ()))
        for s in f.samples:
            labels |= set(s.labels)
        exported.setdefault(name, set()).update(labels)
    return exported, text


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[str]]:
    if not GOLDEN.is_dir():
        pytest.skip("no golden torchrun cases recorded (tests/e2e/golden)")
    tmp = tmp_path_factory.mktemp("exported")
    out: dict[str, set[str]] = {}
    for case in ("hang-perrank", "scale_collapse-perrank"):
        names, text = _collect(case, tmp)
        for n, labels in names.items():
            out.setdefault(n, set()).update(labels)
        # what Prometheus would scrape names the same series
        for n in names:
            if n in text:
                continue
            assert f"# TYPE {n.removesuffix('_total')} " in text, f"{n} not in the exposition"
    out["up"] = {"job", "instance"}
    return out


def _recorded(exported: dict[str, set[str]]) -> dict[str, set[str]]:
    """Output labels of each recording rule: its by() labels, else its inputs' labels."""
    known = dict(exported)
    out: dict[str, set[str]] = {}
    for rule in kit.recording_rules().groups[0].rules:
        record, expr = rule.record, rule.expr  # type: ignore[union-attr]
        u = usage(expr)
        if re.search(r"\bby\s*\(", expr):
            labels = set(u.grouping)
        else:
            labels = set().union(*(known.get(m, set()) for m in u.metrics)) | TARGET_LABELS
        known[record] = out[record] = labels
    return out


def _check_expr(where: str, expr: str, known: dict[str, set[str]], extra_labels: set[str] = frozenset()) -> list[str]:  # type: ignore[assignment]
    u = usage(instantiate(expr))
    problems = [f"{where}: unknown function {f}()" for f in sorted(u.unknown_functions)]
    for m in sorted(u.metrics):
        if m not in known:
            problems.append(f"{where}: metric {m} is not exported by the daemon nor recorded")
    available = set().union(*(known.get(m, set()) for m in u.metrics)) | TARGET_LABELS | extra_labels
    for metric, label in u.matchers:
        allowed = (known.get(metric, set()) | TARGET_LABELS) if metric in known else available
        if label not in allowed:
            problems.append(f"{where}: label {label!r} is not a label of {metric}")
    for label in sorted(u.grouping - available):
        problems.append(f"{where}: groups by {label!r}, which no metric in the expression has")
    return problems


def test_rules_and_dashboards_use_only_exported_metrics_and_labels(exported: dict[str, set[str]]) -> None:
    known = {**exported, **_recorded(exported)}
    problems: list[str] = []
    for r in _rules():
        where = r.get("alert") or r.get("record")
        problems += _check_expr(f"rule {where}", r["expr"], known)
        if "alert" in r:
            u = usage(r["expr"])
            result = (set(u.grouping) if re.search(r"\bby\s*\(", r["expr"]) else
                      set().union(*(known.get(m, set()) for m in u.metrics)) | TARGET_LABELS)
            for text in r["annotations"].values():
                for label in re.findall(r"\$labels\.(\w+)", text):
                    if label not in result:
                        problems.append(f"rule {where}: annotation uses $labels.{label}, not a label of the result")
    for name, board in _dashboards().items():
        for v in board["templating"]["list"]:
            if v["type"] != "query":
                continue
            q = v["query"]
            m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", q)
            inner = m.group(1) if m else re.fullmatch(r"query_result\((.*)\)", q).group(1)  # type: ignore[union-attr]
            problems += _check_expr(f"{name} variable ${v['name']}", inner, known)
            if m:
                metric = usage(instantiate(inner)).metrics
                if not any(m.group(2) in known.get(x, set()) | TARGET_LABELS for x in metric):
                    problems.append(f"{name} variable ${v['name']}: label {m.group(2)} not on {metric}")
        for title, expr, _ in dashboard_queries(board):
            problems += _check_expr(f"{name}: {title}", expr, known)
        for p in board["panels"]:
            for t in p.get("targets", []):
                u = usage(instantiate(t["expr"]))
                result = set().union(*(known.get(m, set()) for m in u.metrics)) | TARGET_LABELS
                for label in re.findall(r"\{\{\s*(\w+)\s*\}\}", t.get("legendFormat", "")):
                    if label not in result:
                        problems.append(f"{name}: {p['title']}: legend uses {label}, not a label of the result")
    assert not problems, "\n".join(problems)


def test_checker_catches_what_the_daemon_does_not_export(exported: dict[str, set[str]]) -> None:
    known = {**exported, **_recorded(exported)}
    assert _check_expr("x", 'rankwatch_loss{job="j", gpu="0"}', known)  # no gpu label
    assert _check_expr("x", "sum by (node) (rankwatch_step)", known)
    assert _check_expr("x", "rate(rankwatch_losses_total[5m])", known)
    assert _check_expr("x", "frobnicate(rankwatch_loss)", known)
    assert not _check_expr("x", 'sum by (job, rank) (rate(rankwatch_skipped_steps_total{job=~"$job"}[$__rate_interval]))', known)


def test_exporter_exports_exactly_the_metric_table(exported: dict[str, set[str]]) -> None:
    """One table for both sides: a metric the daemon exports is in monitor/metric_table.py
    (which the kit documents and checks against), and the reverse."""
    from monitor.metric_table import METRICS

    table = {m.sample_name: set(m.labels) for m in METRICS}
    assert {n: labels for n, labels in exported.items() if n != "up"} == table
