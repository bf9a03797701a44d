"""The monitoring kit (monitor/kit) as a mixin: a new catalog entry needs no code, the
promtool expectations are an oracle apart from the rules, and every shipped artefact passes
its ecosystem's validator (promtool for rules, the SDK's schema for dashboards, bundled
Kubernetes schemas for manifests).
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.dashboard import Dashboard

from detectors.catalog import Catalog, load_catalog
from monitor import kit
from monitor.kit.dashboards import panels
from monitor.kit.promtool import expand
from monitor.metric_table import METRICS
from tests.conftest import REPO
from tests.integration.conftest import binary, needs

PROM = REPO / "deploy" / "prometheus"


def _promtool(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([binary("promtool") or "", *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def _with_new_entries() -> Catalog:
    """The shipped catalog plus a warning and an info failure no code has heard of."""
    cat = load_catalog()
    base = cat["gpu_xid"]
    flap = replace(base, id="nvlink_flap", title="NVLink flapping", severity="warning", category="hardware", related=[])
    wobble = replace(base, id="clock_wobble", title="Clock wobble", severity="info", role="benign", category="performance",
                     related=[])
    return Catalog([*cat, flap, wobble])


@needs("promtool")
def test_a_new_catalog_entry_gets_alert_promtool_case_runbook_and_dashboard_row(tmp_path: Path) -> None:
    files = kit.generate(_with_new_entries())
    kit.write(tmp_path, files)
    alerts = {r["alert"]: r for g in yaml.safe_load(files[kit.ALERTS_FILE])["groups"] for r in g["rules"]}
    assert alerts["RankwatchNvlinkFlap"]["for"] == "2m"
    assert "RankwatchClockWobble" not in alerts  # info never alerts
    cases = yaml.safe_load(files[f"{kit.TESTS_DIR}/incidents.test.yml"])["tests"]
    assert [c["name"] for c in cases if "nvlink_flap" in c["name"]]
    benign = yaml.safe_load(files[f"{kit.TESTS_DIR}/benign.test.yml"])["tests"][0]
    assert any('failure="clock_wobble"' in s["series"] for s in benign["input_series"])
    r = _promtool("test", "rules", "incidents.test.yml", "benign.test.yml", cwd=tmp_path / kit.TESTS_DIR)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "nvlink_flap" in files[f"{kit.RUNBOOK_DIR}/nvlink_flap.md"]
    assert "RankwatchNvlinkFlap" in files[f"{kit.RUNBOOK_DIR}/README.md"]
    job = json.loads(files[f"{kit.DASHBOARD_DIR}/rankwatch-job.json"])
    titles = {p["title"]: p for p in panels(job)}
    assert 'failure="nvlink_flap"' in titles["nvlink_flap"]["targets"][0]["expr"]
    assert "clock_wobble" in titles


def _mutate(tmp_path: Path, old: str, new: str) -> subprocess.CompletedProcess[str]:
    dst = tmp_path / "prometheus"
    if not dst.exists():
        import shutil

        shutil.copytree(PROM, dst)
    rules = dst / "rules" / "rankwatch-alerts.yml"
    good = (PROM / "rules" / "rankwatch-alerts.yml").read_text()
    assert good.count(old) >= 1, old
    rules.write_text(good.replace(old, new, 1))
    return _promtool("test", "rules", "incidents.test.yml", "warnings.test.yml", cwd=dst / "tests")


@needs("promtool")
@pytest.mark.parametrize(("old", "new"), [
    ("role: cause", "role: collateral"),  # the first incident alert names the wrong role
    ("      - alert: RankwatchRankHang", "      - alert: RankwatchRankStuck"),  # renamed: users' routes break
    ("rankwatch_skipped_steps_total[10m]", "rankwatch_skipped_steps_total[1m]"),  # a different window fires at another time
    ("for: 2m", "for: 5m"),  # a warning pages later than promised
], ids=["label", "name", "expr", "for"])
def test_expectations_catch_a_wrong_rule(tmp_path: Path, old: str, new: str) -> None:
    """The expectations are written apart from the rules: an edited rule fails them."""
    r = _mutate(tmp_path, old, new)
    assert r.returncode != 0 and "FAILED" in r.stdout + r.stderr


def test_expand_renders_the_three_actions_and_refuses_others() -> None:
    labels = {"job": "j", "initiator_rank": ""}
    assert expand('{{ $labels.job }} rank {{ or $labels.initiator_rank "unknown" }} {{ "{{" }} x }}', labels) == \
        "j rank unknown {{ x }}"
    with pytest.raises(ValueError, match="unsupported"):
        expand("{{ $value }}", labels)


@pytest.mark.parametrize("name", ["rankwatch-job.json", "rankwatch-fleet.json", "rankwatch-daemon.json"])
def test_dashboard_round_trips_through_the_grafana_sdk(name: str) -> None:
    """Every field of the committed dashboard is one the SDK's schema knows, with its type."""
    raw = json.loads((REPO / kit.DASHBOARD_DIR / name).read_text())
    back = json.loads(json.dumps(Dashboard.from_json(raw), cls=JSONEncoder))
    assert back == raw
    ids = [p["id"] for p in panels(raw)]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("where", ["dashboard", "panel", "field config", "variable"])
def test_dashboard_round_trip_catches_a_misspelt_field(where: str) -> None:
    """A key the schema does not know is dropped by the SDK, so the round trip differs.
    (The SDK does not check value types; targets are passed through as they are.)"""
    raw = json.loads((REPO / kit.DASHBOARD_DIR / "rankwatch-fleet.json").read_text())
    target = {"dashboard": raw, "panel": raw["panels"][1], "field config": raw["panels"][1]["fieldConfig"]["defaults"],
              "variable": raw["templating"]["list"][0]}[where]
    target["noVlaue"] = "x"
    back = json.loads(json.dumps(Dashboard.from_json(raw), cls=JSONEncoder))
    assert back != raw


def _k8s_docs(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((REPO / "deploy/kubernetes" / name).read_text()) if d]


def test_kubernetes_manifests_validate_against_bundled_schemas() -> None:
    kv = pytest.importorskip("kubernetes_validate")
    docs = _k8s_docs("trainer-with-rankwatch.yaml")
    assert {d["kind"] for d in docs} == {"ConfigMap", "Job"}
    for d in docs:
        kv.validate(d, kv.latest_version(), strict=True)  # raises ValidationError
    job = next(d for d in docs if d["kind"] == "Job")
    job["spec"]["template"]["spec"]["initContainers"][0]["restartPolicy"] = 3
    with pytest.raises(kv.ValidationError):
        kv.validate(job, kv.latest_version(), strict=True)


@needs("promtool")
def test_prometheusrule_holds_rules_promtool_accepts(tmp_path: Path) -> None:
    """The Operator's PrometheusRule (a CRD: no bundled schema) carries Prometheus rule groups."""
    (rule,) = _k8s_docs("prometheusrule.yaml")
    assert rule["apiVersion"] == "monitoring.coreos.com/v1" and rule["metadata"]["name"]
    f = tmp_path / "operator.rules.yml"
    f.write_text(yaml.safe_dump({"groups": rule["spec"]["groups"]}))
    r = _promtool("check", "rules", str(f))
    assert r.returncode == 0, r.stdout + r.stderr


def test_metric_table_is_what_the_kit_documents() -> None:
    page = (REPO / kit.RUNBOOK_DIR / "rankwatch-daemon.md").read_text()
    for m in METRICS:
        assert f"| `{m.sample_name}` | {m.type} |" in page


@needs("promtool")
def test_a_deployment_with_its_own_scrape_job_and_runbook_url_still_passes(tmp_path: Path) -> None:
    opts = kit.Options(runbook_url="https://wiki.example.com/rankwatch/runbooks/", scrape_job="sidecars")
    files = kit.generate(opts=opts)
    kit.write(tmp_path, files)
    alerts = {r["alert"]: r for g in yaml.safe_load(files[kit.ALERTS_FILE])["groups"] for r in g["rules"]}
    assert alerts["RankwatchDown"]["expr"] == 'up{job="sidecars"} == 0'
    assert alerts["RankwatchRankHang"]["annotations"]["runbook_url"] == "https://wiki.example.com/rankwatch/runbooks/rank_hang.md"
    tests = sorted(p.name for p in (tmp_path / kit.TESTS_DIR).glob("*.test.yml"))
    r = _promtool("test", "rules", *tests, cwd=tmp_path / kit.TESTS_DIR)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert r.stdout.count("SUCCESS") == len(tests) == 4


def test_the_kit_only_uses_metrics_of_the_table() -> None:
    from monitor.kit.usage import KitError, check_metrics, unknown_metrics

    assert unknown_metrics(["job:rankwatch_incidents_open:count", "rate(rankwatch_lines_total[5m])"]) == set()
    assert unknown_metrics(['sum(rankwatch_gpu_temp{job="j"})']) == {"rankwatch_gpu_temp"}
    board = json.dumps({"panels": [{"targets": [{"expr": "rankwatch_losses_total"}]}]})
    with pytest.raises(KitError, match="rankwatch_losses_total"):
        check_metrics([], [board])
