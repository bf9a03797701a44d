"""The deploy kit lets the sidecar sample the ranks' stacks (docs/stacks.md)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

DEPLOY = REPO / "deploy"


def test_kubernetes_pod_shares_its_pid_namespace_and_the_sidecar_may_ptrace() -> None:
    docs = {d["kind"]: d for d in yaml.safe_load_all((DEPLOY / "kubernetes/trainer-with-rankwatch.yaml").read_text()) if d}
    spec = docs["Job"]["spec"]["template"]["spec"]
    assert spec["shareProcessNamespace"] is True
    (sidecar,) = [c for c in spec["initContainers"] if c["name"] == "rankwatch"]
    caps = sidecar["securityContext"]["capabilities"]
    assert caps == {"drop": ["ALL"], "add": ["SYS_PTRACE"]}


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")
def test_systemd_stacks_drop_in_verifies(tmp_path: Path) -> None:
    unit = (DEPLOY / "systemd/rankwatch@.service").read_text()
    exe = shutil.which("rankwatch") or str(REPO / ".venv/bin/rankwatch")
    (tmp_path / "rankwatch@.service").write_text(unit.replace("/opt/rankwatch/bin/rankwatch", exe))
    (tmp_path / "rankwatch@.service.d").mkdir()
    drop_in = (DEPLOY / "systemd/rankwatch@.service.d/stacks.conf").read_text()
    assert "AmbientCapabilities=CAP_SYS_PTRACE" in drop_in and "CapabilityBoundingSet=CAP_SYS_PTRACE" in drop_in
    (tmp_path / "rankwatch@.service.d" / "stacks.conf").write_text(drop_in)
    (tmp_path / "rankwatch@demo.service").symlink_to("rankwatch@.service")
    r = subprocess.run(["systemd-analyze", "verify", str(tmp_path / "rankwatch@demo.service")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and not r.stderr.strip() and not r.stdout.strip(), r.stdout + r.stderr
