"""promtool and amtool on everything shipped under deploy/ and grafana/.

- ``promtool check rules`` and ``promtool test rules`` on every rule and test file;
- every dashboard panel query (Grafana variables filled in) is valid PromQL: they are
  written into a throw-away rule file and checked by ``promtool check rules``;
- the example Prometheus configurations load (``promtool check config``);
- ``amtool check-config`` on the Alertmanager example and ``amtool config routes test``
  on the routing it promises: critical → page, warning → ticket, hardware → the
  infrastructure team, software → the job owner (or the owner's own pager), the sidecar
  itself → the platform team, info → nowhere.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from monitor import kit
from monitor.kit.dashboards import dashboard_queries
from tests.conftest import REPO
from tests.integration.conftest import binary, needs
from tests.integration.promql import instantiate

PROM = REPO / "deploy" / "prometheus"
RULE_FILES = sorted((PROM / "rules").glob("*.yml"))
TEST_FILES = sorted((PROM / "tests").glob("*.test.yml"))
AM_CONFIG = REPO / "deploy" / "alertmanager" / "alertmanager.yml"


def _run(argv: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=cwd)


@needs("promtool")
def test_promtool_check_rules() -> None:
    assert RULE_FILES, "no rule files under deploy/prometheus/rules"
    r = _run([binary("promtool") or "", "check", "rules", *map(str, RULE_FILES)])  # type: ignore[list-item]
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("SUCCESS") == len(RULE_FILES)


@needs("promtool")
def test_promtool_test_rules() -> None:
    assert TEST_FILES, "no promtool tests under deploy/prometheus/tests"
    r = _run([binary("promtool") or "", "test", "rules", *(p.name for p in TEST_FILES)], cwd=PROM / "tests")
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    assert r.stdout.count("SUCCESS") == len(TEST_FILES), r.stdout


@needs("promtool")
def test_promtool_tests_fail_when_a_rule_misbehaves(tmp_path: Path) -> None:
    """The cases are not vacuous: an alert without its for: window, or one that would page
    for an info incident, makes them fail."""
    shutil.copytree(PROM, tmp_path / "prometheus")
    rules = tmp_path / "prometheus" / kit.ALERTS_FILE.removeprefix("deploy/prometheus/")
    good = rules.read_text()
    for broken, test in ((good.replace("for: 1m", "for: 0s"), "incidents.test.yml"),
                         (good.replace(', severity=~"critical|warning"', ""), "benign.test.yml")):
        rules.write_text(broken)
        r = _run([binary("promtool") or "", "test", "rules", test], cwd=tmp_path / "prometheus" / "tests")
        assert r.returncode != 0 and "FAILED" in r.stdout + r.stderr, test


@needs("promtool")
def test_dashboard_queries_are_valid_promql(tmp_path: Path) -> None:
    rules = []
    for board in sorted((REPO / kit.DASHBOARD_DIR).glob("*.json")):
        dash = json.loads(board.read_text())
        for i, (_title, expr, _) in enumerate(dashboard_queries(dash)):
            rules.append({"record": f"dashboard:{board.stem.replace('-', '_')}:q{i}", "expr": instantiate(expr)})
        for v in dash["templating"]["list"]:
            if v["type"] == "query":
                inner = v["query"].removeprefix("query_result(").removeprefix("label_values(")
                inner = inner[: inner.rfind(",")] if v["query"].startswith("label_values(") else inner[:-1]
                rules.append({"record": f"dashboard:var:{v['name']}", "expr": instantiate(inner)})
    f = tmp_path / "dashboards.rules.yml"
    f.write_text(yaml.safe_dump({"groups": [{"name": "dashboards", "rules": rules}]}))
    r = _run([binary("promtool") or "", "check", "rules", str(f)])
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{len(rules)} rules found" in r.stdout


@needs("promtool")
@pytest.mark.parametrize("config", ["deploy/prometheus/prometheus.example.yml", "deploy/docker/prometheus.yml"])
def test_example_prometheus_configs_load(config: str, tmp_path: Path) -> None:
    # as deployed: the generated rules in rules/ beside the configuration
    shutil.copy(REPO / config, tmp_path / "prometheus.yml")
    shutil.copytree(PROM / "rules", tmp_path / "rules")
    r = _run([binary("promtool") or "", "check", "config", str(tmp_path / "prometheus.yml")])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SUCCESS: 2 rule files found" in r.stdout
    cfg = yaml.safe_load((REPO / config).read_text())
    jobs = {j["job_name"]: j for j in cfg["scrape_configs"]}
    assert jobs["rankwatch"]["honor_labels"] is True  # the training job's `job` label survives


@needs("amtool")
def test_amtool_check_config() -> None:
    r = _run([binary("amtool") or "", "check-config", str(AM_CONFIG)])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SUCCESS" in r.stdout


ROUTES = [
    ({"alertname": "RankwatchGpuXid", "severity": "critical", "hardware": "true", "failure": "gpu_xid", "job": "j"},
     "infrastructure-page"),
    ({"alertname": "RankwatchRankHang", "severity": "critical", "hardware": "false", "failure": "rank_hang", "job": "j"},
     "job-owner-page"),
    ({"alertname": "RankwatchCudaOom", "severity": "critical", "hardware": "false", "team": "llm-pretraining", "job": "j"},
     "llm-pretraining-page"),
    ({"alertname": "RankwatchLossSpike", "severity": "warning", "hardware": "false", "job": "j"}, "job-owner-ticket"),
    ({"alertname": "RankwatchSkippedStepsHigh", "severity": "warning", "job": "j"}, "job-owner-ticket"),
    ({"alertname": "RankwatchGpuXid", "severity": "warning", "hardware": "true", "job": "j"}, "infrastructure-ticket"),
    ({"alertname": "RankwatchDown", "severity": "warning", "component": "rankwatch", "job": "rankwatch"}, "platform-ticket"),
    ({"alertname": "RankwatchLossScaleWarmup", "severity": "info", "job": "j"}, "blackhole"),
]


@needs("amtool")
@pytest.mark.parametrize(("labels", "receiver"), ROUTES, ids=[r for _, r in ROUTES])
def test_alertmanager_routes(labels: dict[str, str], receiver: str) -> None:
    r = _run([binary("amtool") or "", "config", "routes", "test", f"--config.file={AM_CONFIG}",
              *(f"{k}={v}" for k, v in labels.items())])
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == receiver


def test_alertmanager_groups_by_job_and_incident_and_inhibits_collateral() -> None:
    cfg = yaml.safe_load(AM_CONFIG.read_text())
    assert cfg["route"]["group_by"] == ["job", "incident"]
    inhibit = [(r["source_matchers"], r["target_matchers"], r["equal"]) for r in cfg["inhibit_rules"]]
    assert (['role="cause"', 'severity="critical"'], ['role="collateral"'], ["job"]) in inhibit
    assert (['severity="critical"'], ['severity="warning"'], ["job"]) in inhibit


@needs("promtool")
def test_catalog_text_with_template_syntax_is_escaped(tmp_path: Path) -> None:
    """Catalog prose may contain Go-template syntax (Jinja or Helm snippets): it reaches the
    annotations literally, and the generated promtool cases still pass."""
    from dataclasses import replace

    from detectors.catalog import Catalog, load_catalog

    tricky = 'Set {{ .Values.lr }} and {{ $labels.job }} in "values.yaml"; }} stays {{- literal -}}.'
    entries = [replace(e, summary=tricky) if e.id == "rank_hang" else e for e in load_catalog()]
    files = kit.generate(Catalog(entries))
    kit.write(tmp_path, files)
    alerts = yaml.safe_load((tmp_path / kit.ALERTS_FILE).read_text())
    (hang,) = [r for g in alerts["groups"] for r in g["rules"] if r.get("alert") == "RankwatchRankHang"]
    assert '{{ "{{" }} .Values.lr }}' in hang["annotations"]["description"]
    r = _run([binary("promtool") or "", "test", "rules", "incidents.test.yml"], cwd=tmp_path / kit.TESTS_DIR)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
