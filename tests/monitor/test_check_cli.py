"""``rankwatch check`` as a user runs it: a subprocess, real config files, exit codes, text and JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

CONFIGS = REPO / "tests" / "detectors" / "fixtures" / "configs"


def rw(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "monitor", "check", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120, env=env)


def test_errors_exit_1_with_a_clear_report() -> None:
    r = rw(str(CONFIGS / "lightning_cli.yaml"), "--gpu", "Tesla V100-SXM2-16GB")
    assert r.returncode == 1, r.stderr
    assert "ERROR   fp16_no_loss_scaling  [trainer.precision]" in r.stdout
    assert "fix: use trainer.precision: \"16-mixed\"" in r.stdout
    assert "see: rankwatch catalog show amp_bf16_vs_fp16" in r.stdout
    assert "1 problem(s): 1 error(s), 0 warning(s)." in r.stdout


def test_warnings_only_exit_0_and_json() -> None:
    r = rw(str(CONFIGS / "hf_training_args.json"), "--gpu", "NVIDIA A100-SXM4-80GB", "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["kind"] == "hf_trainer" and doc["compute_capability"] == 8.0 and doc["gpu_source"] == "--gpu"
    assert [p["id"] for p in doc["problems"]] == ["fp16_on_ampere", "nan_inf_filter_hides_nan"]
    assert set(doc["problems"][0]) == {"id", "severity", "message", "fix", "field", "catalog"}


def test_clean_config_says_ok() -> None:
    r = rw(str(CONFIGS / "ds_bf16.json"), "--gpu", "NVIDIA H100 80GB HBM3")
    assert r.returncode == 0 and "OK: no problems found." in r.stdout


def test_no_gpu_given_and_no_nvidia_smi(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": str(tmp_path)}  # an empty PATH: no nvidia-smi
    r = rw(str(CONFIGS / "ds_fp16_static.json"), env=env)
    assert r.returncode == 0, r.stderr
    assert "note: GPU unknown (give --gpu NAME)" in r.stdout and "fp16_static_loss_scale" in r.stdout


def test_gpu_from_nvidia_smi(tmp_path: Path) -> None:
    fake = tmp_path / "nvidia-smi"  # answers like `nvidia-smi --query-gpu=name --format=csv,noheader`
    fake.write_text("#!/bin/sh\necho 'Tesla T4'\necho 'Tesla T4'\n")
    fake.chmod(0o755)
    r = rw(str(CONFIGS / "ds_bf16.json"), "-f", "json", env={**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"})
    doc = json.loads(r.stdout)
    assert r.returncode == 1 and doc["gpu"] == "Tesla T4" and doc["gpu_source"] == "nvidia-smi"
    assert doc["problems"][0]["id"] == "bf16_on_pre_ampere"


def test_invalid_and_unreadable_configs_exit_2_with_one_message(tmp_path: Path) -> None:
    r = rw(str(CONFIGS / "ds_invalid_loss_scale.json"), "--gpu", "A100")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    msg = " ".join(r.stderr.split())
    assert "ds_invalid_loss_scale.json: field 'fp16.loss_scale': expected a number, got 'dynamic'" in msg
    r = rw(str(tmp_path / "missing.json"))
    assert r.returncode == 2 and f"{tmp_path / 'missing.json'}: no such file" in r.stderr
    (tmp_path / "notes.txt").write_text("just some notes\n")
    r = rw(str(tmp_path / "notes.txt"))
    assert r.returncode == 2 and "not a DeepSpeed" in " ".join(r.stderr.split())
