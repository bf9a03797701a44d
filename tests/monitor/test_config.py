from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from monitor.config import DEFAULT_METRICS_ADDR, ConfigError, load_config
from tests.conftest import REPO


def test_defaults_need_no_file() -> None:
    cfg = load_config()
    assert cfg.metrics_addr == DEFAULT_METRICS_ADDR and cfg.host_port[0] == "127.0.0.1"
    assert not 9100 <= cfg.host_port[1] <= 9999  # Prometheus' allocated exporter range


def test_precedence_file_env_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "rw.yaml"
    f.write_text("job: from-file\nrescan_interval: 7\nstall_floor: 30\nlimits:\n  max_files: 10\n")
    cfg = load_config(str(f))
    assert (cfg.job, cfg.rescan_interval, cfg.limits.max_files) == ("from-file", 7, 10)
    monkeypatch.setenv("RANKWATCH_JOB", "from-env")
    monkeypatch.setenv("RANKWATCH_RESCAN_INTERVAL", "3")
    cfg = load_config(str(f))
    assert (cfg.job, cfg.rescan_interval, cfg.stall_floor) == ("from-env", 3, 30)
    cfg = load_config(str(f), job="from-flag")
    assert cfg.job == "from-flag"


def test_toml_file(tmp_path: Path) -> None:
    f = tmp_path / "rw.toml"
    f.write_text('job = "t"\nlogs = ["/a/*.log", "/b/**/*.log"]\n')
    assert load_config(str(f)).logs == ["/a/*.log", "/b/**/*.log"]


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("metrics_addr: nope\n", "metrics_addr: must be HOST:PORT"),
        ("rescan_interval: -1\n", "rescan_interval"),
        ("limits:\n  max_files: 0\n", "limits.max_files"),
        ("jbo: typo\n", "jbo: unknown setting"),
        ("- a\n- b\n", "must be a mapping"),
        ("job: [unclosed\n", "not valid YAML"),
    ],
)
def test_invalid_config_names_the_field(tmp_path: Path, content: str, needle: str) -> None:
    f = tmp_path / "rw.yaml"
    f.write_text(content)
    with pytest.raises(ConfigError, match=needle.replace("[", r"\[")):
        load_config(str(f))


def test_cli_invalid_config_exit_2_one_message(tmp_path: Path) -> None:
    f = tmp_path / "rw.yaml"
    f.write_text("metrics_addr: 127.0.0.1:99999\n")
    r = subprocess.run([sys.executable, "-m", "monitor", "run", "--config", str(f)], cwd=REPO,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "invalid configuration: metrics_addr: port must be 0-65535" in r.stderr
    assert "Traceback" not in r.stderr


# ---------------------------------------------------------------- issue #14, defects 10 and 11
def test_attack_env_nested_setting_beats_the_file_and_keeps_its_siblings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "rw.yaml"
    f.write_text("limits:\n  max_files: 10\n  max_ranks: 7\n")
    monkeypatch.setenv("RANKWATCH_LIMITS__MAX_FILES", "99")
    cfg = load_config(str(f))
    assert (cfg.limits.max_files, cfg.limits.max_ranks) == (99, 7)
    assert load_config(str(f), limits={"max_files": 5}).limits.max_files == 5  # flags still win


@pytest.mark.parametrize(("var", "value", "needle"), [
    ("RANKWATCH_LOGS", "logs/*.log", "RANKWATCH_LOGS: must be JSON"),
    ("RANKWATCH_LIMITS", "{bad", "RANKWATCH_LIMITS: must be JSON"),
    ("RANKWATCH_FOO", "1", "RANKWATCH_FOO: unknown setting"),
    ("RANKWATCH_LIMITS__MAX_FLIES", "3", "RANKWATCH_LIMITS__MAX_FLIES: unknown setting"),
    ("RANKWATCH_RESCAN_INTERVAL", "fast", "rescan_interval"),
])
def test_attack_bad_environment_is_one_message_naming_it(monkeypatch: pytest.MonkeyPatch, var: str, value: str, needle: str) -> None:
    monkeypatch.setenv(var, value)
    with pytest.raises(ConfigError, match=needle.replace("[", r"\[")):
        load_config()
    r = subprocess.run([sys.executable, "-m", "monitor", "run", "--logs", "/nonexistent/*.log"], cwd=REPO,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr and needle in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_attack_non_utf8_config_file_is_one_message(tmp_path: Path) -> None:
    f = tmp_path / "rw.yaml"
    f.write_bytes(b"job: caf\xe9\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(str(f))
