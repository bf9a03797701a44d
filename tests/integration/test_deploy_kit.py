"""The deploy kit can be used as it is: each file parses, wires the sidecar the way the
docs say (read-only logs, a state volume, /healthz probes, scraping with honor_labels,
a non-root user), and refers only to files that exist. Tools that validate for real run
where installed: ``systemd-analyze verify`` for the unit, ``bash -n`` for the Slurm script.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from monitor.config import load_config
from tests.conftest import REPO

DEPLOY = REPO / "deploy"


def _docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def test_kubernetes_sidecar_manifest() -> None:
    docs = {d["kind"]: d for d in _docs(DEPLOY / "kubernetes/trainer-with-rankwatch.yaml")}
    pod = docs["Job"]["spec"]["template"]
    spec = pod["spec"]
    (sidecar,) = [c for c in spec["initContainers"] if c["name"] == "rankwatch"]
    assert sidecar["restartPolicy"] == "Always"  # a native sidecar: the Job still completes
    mounts = {m["name"]: m for m in sidecar["volumeMounts"]}
    assert mounts["logs"]["readOnly"] is True
    assert mounts["state"]["mountPath"] == "/var/lib/rankwatch"
    trainer = spec["containers"][0]
    assert any(m["name"] == "logs" and not m.get("readOnly") for m in trainer["volumeMounts"])
    sc = sidecar["securityContext"]
    assert sc["runAsNonRoot"] is True and sc["runAsUser"] != 0 and sc["allowPrivilegeEscalation"] is False
    assert sc["readOnlyRootFilesystem"] is True and sc["capabilities"]["drop"] == ["ALL"]
    (port,) = sidecar["ports"]
    assert len(port["name"]) <= 15  # an IANA service name
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert sidecar[probe]["httpGet"] == {"path": "/healthz", "port": port["name"]}
    ann = pod["metadata"]["annotations"]
    assert ann["prometheus.io/scrape"] == "true" and ann["prometheus.io/port"] == str(port["containerPort"])
    # the ConfigMap is a valid rankwatch configuration that binds the pod IP on that port
    cfg_text = docs["ConfigMap"]["data"]["rankwatch.yaml"]
    cfg = yaml.safe_load(cfg_text)
    settings = load_config(None, **cfg)
    assert settings.host_port == ("0.0.0.0", port["containerPort"])
    assert str(settings.state_dir) == mounts["state"]["mountPath"]
    assert all(g.startswith(mounts["logs"]["mountPath"]) for g in settings.logs)
    assert "--config" in sidecar["args"] and mounts["config"]["mountPath"] in sidecar["args"][-1]


def test_podmonitor_and_scrape_job_keep_the_training_job_label() -> None:
    (pm,) = _docs(DEPLOY / "kubernetes/podmonitor.yaml")
    ep = pm["spec"]["podMetricsEndpoints"][0]
    assert ep["honorLabels"] is True and ep["port"] == "rankwatch" and ep["path"] == "/metrics"
    job = {d["kind"]: d for d in _docs(DEPLOY / "kubernetes/trainer-with-rankwatch.yaml")}["Job"]
    labels = job["spec"]["template"]["metadata"]["labels"]
    assert labels[pm["spec"]["jobLabel"]] == "rankwatch"  # up{job="rankwatch"}: RankwatchDown
    assert all(labels[k] == v for k, v in pm["spec"]["selector"]["matchLabels"].items())
    (scrape,) = yaml.safe_load((DEPLOY / "kubernetes/prometheus-scrape-job.yaml").read_text())
    assert scrape["honor_labels"] is True
    assert {"target_label": "job", "replacement": "rankwatch"} in scrape["relabel_configs"]
    (rule,) = _docs(DEPLOY / "kubernetes/prometheusrule.yaml")
    assert rule["kind"] == "PrometheusRule" and len(rule["spec"]["groups"]) == 4


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")
def test_systemd_unit_verifies(tmp_path: Path) -> None:
    unit = (DEPLOY / "systemd/rankwatch@.service").read_text()
    assert re.search(r"^StateDirectory=rankwatch/%i$", unit, re.M)
    assert re.search(r"^DynamicUser=yes$", unit, re.M)
    assert "--state-dir /var/lib/rankwatch/%i" in unit  # = StateDirectory
    exe = shutil.which("rankwatch") or str(REPO / ".venv/bin/rankwatch")
    (tmp_path / "rankwatch@.service").write_text(unit.replace("/opt/rankwatch/bin/rankwatch", exe))
    (tmp_path / "rankwatch@demo.service").symlink_to("rankwatch@.service")
    r = subprocess.run(["systemd-analyze", "verify", str(tmp_path / "rankwatch@demo.service")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and not r.stderr.strip() and not r.stdout.strip(), r.stdout + r.stderr
    shared = load_config(str(DEPLOY / "systemd/rankwatch.yaml"))
    assert shared.host_port[0] == "0.0.0.0"


def test_slurm_script_starts_a_sidecar_step_per_node() -> None:
    script = DEPLOY / "slurm/train-with-rankwatch.sbatch"
    r = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    text = script.read_text()
    assert re.search(r"srun --overlap .*--ntasks-per-node=1", text)
    assert "rankwatch-$SLURM_JOB_ID.json" in text  # file_sd for Prometheus
    assert 'kill -TERM "$SIDECAR"' in text  # drained at the end, not killed


def test_compose_stack_and_dockerfile() -> None:
    d = DEPLOY / "docker"
    compose = yaml.safe_load((d / "docker-compose.yml").read_text())
    services = compose["services"]
    assert {"rankwatch", "prometheus", "alertmanager", "grafana", "mosquitto"} <= set(services)
    for name, svc in services.items():
        for v in svc.get("volumes", []):
            src = v.split(":")[0]
            if src.startswith("."):
                assert (d / src).resolve().exists(), f"{name}: {src} does not exist"
        build = svc.get("build")
        if build:
            assert (d / build["context"] / build["dockerfile"]).resolve().is_file()
    rw = services["rankwatch"]
    assert "logs:/logs:ro" in rw["volumes"] and any(v.startswith("state:") for v in rw["volumes"])
    dockerfile = (d / "Dockerfile").read_text()
    users = re.findall(r"^USER\s+(\S+)", dockerfile, re.M)
    assert users and users[-1].split(":")[0] not in ("0", "root")
    assert "HEALTHCHECK" in dockerfile and "/healthz" in dockerfile
    assert re.search(r'^ENTRYPOINT \["rankwatch"\]', dockerfile, re.M)


def test_compose_helpers_replay_a_job(tmp_path: Path) -> None:
    src = REPO / "tests/e2e/golden/hang-perrank/logs"
    if not src.is_dir():
        pytest.skip("no golden torchrun cases recorded")
    r = subprocess.run([sys.executable, str(DEPLOY / "docker/replay.py"), str(src), str(tmp_path), "--lines", "50", "--delay", "0"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    for p in src.rglob("*.log"):
        assert (tmp_path / p.relative_to(src)).read_bytes() == p.read_bytes()
