"""A recorded torchrun failure, replayed live, pages the right team with the right rank.

Real processes on loopback, nothing mocked: three ``rankwatch run`` sidecars, each
watching a folder into which a golden torchrun job is replayed a few lines at a time
(a hang where rank 1 went silent, an fp16 loss-scale collapse, a healthy fp16 job whose
scaler only warmed up); a real Prometheus scraping them every second and evaluating the
generated rules (``for:`` 60 times shorter in a test copy, everything else as shipped); a
real Alertmanager with the example routing (receivers pointed at a local webhook, the
stack's own alert bridge). Then:

- Prometheus scrapes every sidecar (``up == 1``);
- the hang pages the job's owner with ``RankwatchRankHang``, ``initiator_rank="1"`` and
  the runbook link; the collapse pages with no initiator (the logs cannot tell), and its
  skipped-steps warning is inhibited by that page instead of opening a ticket too;
- the healthy fp16 job exports its ``info`` warm-up incident but never alerts;
- every dashboard panel query returns data, or is a panel that says what no data means.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from monitor import kit
from monitor.kit.dashboards import JOB_VAR_QUERY, dashboard_queries
from tests.conftest import REPO
from tests.integration.conftest import Procs, binary, free_port, needs
from tests.integration.promql import instantiate

GOLDEN = REPO / "tests" / "e2e" / "golden"
CASES = {"hang": "hang-perrank", "collapse": "scale_collapse-perrank", "warmup": "healthy_fp16_scaler-perrank"}
TEAM = {"hang": "llm-pretraining"}  # a target label, like a pod label would give
SPEED = {"hang": (5, 0.05), "collapse": (3, 0.3), "warmup": (3, 0.3)}  # (lines per turn, seconds between turns)


def _load(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _get(url: str, timeout: float = 5) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        body = r.read()
    return json.loads(body) if body[:1] in (b"{", b"[") else body.decode()


def _wait(what: str, probe: Callable[[], Any], procs: Procs, timeout: float = 30, every: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        procs.check_alive()
        try:
            last = probe()
        except OSError as exc:  # not listening yet
            last = exc
        else:
            if last:
                return last
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:g}s waiting for {what} (last: {last!r})")


def _test_rules(dst: Path) -> list[str]:
    """The shipped rule files with every for: 60 times shorter (1m → 1s, 10m → 10s), so the
    test runs in seconds and the windows keep their order (a page outruns the tickets it inhibits)."""
    seconds = {"s": 1, "m": 60, "h": 3600}
    out = []
    for f in (kit.ALERTS_FILE, kit.RECORDING_FILE):
        doc = yaml.safe_load((REPO / f).read_text())
        for g in doc["groups"]:
            for r in g["rules"]:
                if "for" in r:
                    total = sum(int(n) * seconds[u] for n, u in re.findall(r"(\d+)([smh])", r["for"]))
                    r["for"] = f"{max(1, total // 60)}s"
        p = dst / Path(f).name
        p.write_text(yaml.safe_dump(doc, sort_keys=False))
        out.append(str(p))
    return out


def _test_alertmanager_config(dst: Path, webhook_port: int) -> Path:
    """The example routing as shipped, with the alert bridge on loopback and 1s waits."""
    cfg = yaml.safe_load((REPO / "deploy/alertmanager/alertmanager.yml").read_text())

    def shorten(route: dict[str, Any]) -> None:
        for k in ("group_wait", "group_interval"):
            if k in route or route is cfg["route"]:
                route[k] = "1s"
        for child in route.get("routes", []):
            shorten(child)

    shorten(cfg["route"])
    for rc in cfg["receivers"]:
        for w in rc.get("webhook_configs", []):
            w["url"] = re.sub(r"^http://[^/]+", f"http://127.0.0.1:{webhook_port}", w["url"])
    p = dst / "alertmanager.yml"
    p.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return p


@pytest.mark.skipif(not GOLDEN.is_dir(), reason="no golden torchrun cases recorded (tests/e2e/golden)")
@needs("prometheus", "alertmanager")
def test_replayed_failures_page_with_initiating_rank_and_dashboards_have_data(tmp_path: Path, procs: Procs) -> None:
    bridge = _load(REPO / "deploy/docker/alert_bridge.py")
    replay = _load(REPO / "deploy/docker/replay.py")
    received: list[tuple[str, dict[str, Any]]] = []
    lock = threading.Lock()

    def on_notification(path: str, payload: dict[str, Any]) -> None:
        with lock:
            received.extend((path, a) for a in payload.get("alerts", []))

    webhook_port = free_port()
    server = bridge.serve("127.0.0.1", webhook_port, on_notification)
    try:
        _run_stack(tmp_path, procs, replay, received, lock, webhook_port)
    finally:
        server.shutdown()
        server.server_close()


def _run_stack(tmp: Path, procs: Procs, replay: Any, received: list[tuple[str, dict[str, Any]]],
               lock: threading.Lock, webhook_port: int) -> None:
    # ---- Alertmanager
    am_port = free_port()
    am_cfg = _test_alertmanager_config(tmp, webhook_port)
    (tmp / "am-data").mkdir()
    procs.start("alertmanager", [binary("alertmanager") or "", f"--config.file={am_cfg}", f"--storage.path={tmp / 'am-data'}",
                                 f"--web.listen-address=127.0.0.1:{am_port}", "--cluster.listen-address=", "--log.level=warn"])
    # ---- the sidecars
    exe = Path(sys.executable).with_name("rankwatch")
    rankwatch = [str(exe)] if exe.exists() else [sys.executable, "-m", "monitor"]
    env = dict(os.environ, RANKWATCH_RESCAN_INTERVAL="0.2", RANKWATCH_POLL_INTERVAL="0.05",
               RANKWATCH_STALL_FLOOR="3600", RANKWATCH_CLOSE_AFTER="600", RANKWATCH_CHECKPOINT_INTERVAL="1")
    ports: dict[str, int] = {}
    for job in CASES:
        ports[job] = free_port()
        (tmp / "logs" / job).mkdir(parents=True)
        procs.start(f"rankwatch-{job}", [*rankwatch, "run", "--logs", str(tmp / "logs" / job / "**" / "*.log"), "--job", job,
                                         "--metrics-addr", f"127.0.0.1:{ports[job]}", "--state-dir", str(tmp / "state" / job),
                                         "--quiet"], env=env, cwd=tmp)
    # ---- Prometheus
    prom_port = free_port()
    prom_cfg = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "900ms"},
        "rule_files": _test_rules(tmp),
        "alerting": {"alertmanagers": [{"static_configs": [{"targets": [f"127.0.0.1:{am_port}"]}]}]},
        "scrape_configs": [{
            "job_name": "rankwatch", "honor_labels": True,
            "static_configs": [{"targets": [f"127.0.0.1:{ports[j]}"], "labels": {"team": TEAM[j]} if j in TEAM else {}}
                               for j in CASES],
        }],
    }
    (tmp / "prometheus.yml").write_text(yaml.safe_dump(prom_cfg, sort_keys=False))
    procs.start("prometheus", [binary("prometheus") or "", f"--config.file={tmp / 'prometheus.yml'}",
                               f"--storage.tsdb.path={tmp / 'prom-data'}", f"--web.listen-address=127.0.0.1:{prom_port}",
                               "--log.level=warn"])
    prom = f"http://127.0.0.1:{prom_port}"

    def query(expr: str) -> list[dict[str, Any]]:
        r = _get(f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
        assert r["status"] == "success", (expr, r)
        return r["data"]["result"]  # type: ignore[no-any-return]

    for job, port in ports.items():
        _wait(f"sidecar {job} /healthz", lambda p=port: _get(f"http://127.0.0.1:{p}/healthz")["status"] == "ok", procs)
    _wait("Prometheus ready", lambda: "Ready" in _get(f"{prom}/-/ready"), procs)
    _wait("Alertmanager ready", lambda: "OK" in _get(f"http://127.0.0.1:{am_port}/-/ready"), procs)

    # ---- Prometheus scrapes every sidecar
    up = _wait("up == 1 for every sidecar", lambda: [r for r in query('up{job="rankwatch"} == 1')]
               if len(query('up{job="rankwatch"} == 1')) == len(CASES) else None, procs)
    assert {r["metric"]["instance"] for r in up} == {f"127.0.0.1:{p}" for p in ports.values()}

    # ---- the jobs "run": every golden case is appended into its folder a few lines per rank per
    # turn, slowly enough for the fp16 ones to span several scrapes (rates, ratios, derivatives)
    threads = [threading.Thread(target=replay.replay, args=(GOLDEN / case / "logs", tmp / "logs" / job, *SPEED[job]))
               for job, case in CASES.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)

    # ---- the alerts reach Alertmanager, routed, with the initiating rank
    def alert(name: str, job: str) -> list[tuple[str, dict[str, Any]]]:
        with lock:
            return [(p, a) for p, a in received if a["labels"].get("alertname") == name and a["labels"].get("job") == job
                    and a["status"] == "firing"]

    path, hang = _wait("RankwatchRankHang for job hang at the webhook", lambda: alert("RankwatchRankHang", "hang"),
                       procs, timeout=45)[0]
    assert path == "/page/llm-pretraining"  # software, critical, the owning team's pager
    assert hang["labels"] == {"alertname": "RankwatchRankHang", "job": "hang", "failure": "rank_hang", "initiator_rank": "1",
                              "hardware": "false", "severity": "critical", "role": "cause", "team": "llm-pretraining",
                              "incident": hang["labels"]["incident"]}
    assert hang["labels"]["incident"].startswith("rank_hang-")
    assert hang["annotations"]["runbook_url"] == f"{kit.DEFAULT_RUNBOOK_URL}/rank_hang.md"
    assert hang["annotations"]["summary"].startswith("hang: Rank hang") and "(initiating rank 1)" in hang["annotations"]["summary"]
    assert f"Incident {hang['labels']['incident']} (critical, software" in hang["annotations"]["description"]

    path, collapse = _wait("RankwatchLossScaleCollapse for job collapse", lambda: alert("RankwatchLossScaleCollapse", "collapse"),
                           procs, timeout=30)[0]
    assert path == "/page/job-owner"  # no team label on that target: the default owner route
    assert "initiator_rank" not in collapse["labels"]  # the scaler is all-reduced: the logs cannot tell
    assert "(initiating rank unknown)" in collapse["annotations"]["summary"]

    # ---- the collapse also skips most steps: that warning reaches Alertmanager, which holds it
    # back (inhibited by the page for the same job) instead of opening a ticket as well
    am = f"http://127.0.0.1:{am_port}/api/v2/alerts?" + urllib.parse.urlencode({"filter": 'job="collapse"'})

    def skipped_inhibited() -> list[dict[str, Any]]:
        return [a for a in _get(am) if a["labels"]["alertname"] == "RankwatchSkippedStepsHigh"
                and a["status"]["state"] == "suppressed" and a["status"]["inhibitedBy"]]

    _wait("RankwatchSkippedStepsHigh for job collapse, inhibited by the page", skipped_inhibited, procs, timeout=30)
    assert not alert("RankwatchSkippedStepsHigh", "collapse")

    # ---- the incident series the alerts came from, and one alert per incident
    info = query("rankwatch_incident_info")
    by_job = {(r["metric"]["job"], r["metric"]["failure"], r["metric"].get("severity")) for r in info}
    assert ("hang", "rank_hang", "critical") in by_job
    assert ("warmup", "loss_scale_warmup", "info") in by_job  # exported, shown on dashboards...
    firing = query('ALERTS{alertstate="firing", alertname=~"Rankwatch.*", incident!=""}')
    per_incident: dict[str, int] = {}
    for r in firing:
        per_incident[r["metric"]["incident"]] = per_incident.get(r["metric"]["incident"], 0) + 1
    assert per_incident and set(per_incident.values()) == {1}, per_incident

    # ---- dashboards: every panel query returns data or says what no data means
    _wait("recording rules with two samples", lambda: query("job_rank:rankwatch_step:deriv5m"), procs)
    _wait("increase() over two samples of every job", lambda: len(query("job:rankwatch_skipped_steps:rate5m")) == len(CASES),
          procs)
    empty = []
    checked = 0
    for board in sorted((REPO / kit.DASHBOARD_DIR).glob("*.json")):
        dash = json.loads(board.read_text())
        for title, expr, may_be_empty in dashboard_queries(dash):
            checked += 1
            if not query(instantiate(expr, {"scrape_job": "rankwatch"})) and not may_be_empty:
                empty.append(f"{board.name}: {title}: {expr}")
        for v in dash["templating"]["list"]:
            if v["type"] == "query":
                q = v["query"]
                inner = q[len("query_result("):-1] if q.startswith("query_result(") else q[len("label_values("):q.rfind(",")]
                if not query(instantiate(inner, {"scrape_job": "rankwatch"})):
                    empty.append(f"{board.name}: variable ${v['name']}: {q}")
    assert checked > 30
    assert not empty, "panels without data:\n" + "\n".join(empty)
    jobs = {r["metric"]["job"] for r in query(instantiate(JOB_VAR_QUERY[len("query_result("):-1]))}
    assert jobs == set(CASES)

    # ---- ...but the benign warm-up never alerted, at any time during the run
    assert query('count_over_time(ALERTS{job="warmup"}[10m])') == []
    with lock:
        assert not [a for _, a in received if a["labels"].get("job") == "warmup"]
