"""Safe defaults: loopback HTTP unless configured; a broker password is never echoed."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from monitor.config import DEFAULT_METRICS_ADDR, Settings, load_config
from monitor.daemon import Daemon
from tests.conftest import REPO
from tests.reliability.proc import free_port, rankwatch

PASSWORD = "s3cr3t-Pa55"


def test_default_metrics_addr_is_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("RANKWATCH_METRICS_ADDR",):
        monkeypatch.delenv(var, raising=False)
    assert Settings.model_fields["metrics_addr"].default == DEFAULT_METRICS_ADDR
    host, _ = load_config().host_port
    assert ipaddress.ip_address(host).is_loopback


def _other_address() -> str | None:
    """An address of this machine that is not loopback (the one routing outwards), if any."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: nothing is sent
            addr = s.getsockname()[0]
    except OSError:
        return None
    return None if ipaddress.ip_address(addr).is_loopback else addr


async def test_default_http_listens_on_loopback_only(tmp_path: Path) -> None:
    default_host = load_config().host_port[0]
    cfg = load_config(logs=[str(tmp_path / "*.log")], state_dir=tmp_path / "state", metrics_addr=f"{default_host}:0")
    d = Daemon(cfg, log=lambda m: None)
    host, port = await d.start_http()
    try:
        assert ipaddress.ip_address(host).is_loopback
        other = _other_address()
        if other is not None:
            with pytest.raises(OSError), socket.create_connection((other, port), timeout=2):
                pass
        _reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.close()
        await writer.wait_closed()
    finally:
        assert d.runner is not None
        await d.runner.cleanup()
        d.tailer.close()


def test_config_repr_and_safe_dump_mask_the_broker_password() -> None:
    cfg = load_config(mqtt=f"mqtt://alice:{PASSWORD}@broker.example:1883")
    assert PASSWORD not in repr(cfg) and PASSWORD not in str(cfg)
    dumped = json.dumps(cfg.safe_dump())
    assert PASSWORD not in dumped and "alice:***@broker.example" in dumped


def test_invalid_mqtt_url_error_does_not_echo_it() -> None:
    r = subprocess.run([sys.executable, "-m", "monitor", "run", "--mqtt", f"http://alice:{PASSWORD}@"], cwd=REPO,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "invalid configuration: mqtt" in r.stderr
    assert PASSWORD not in r.stdout + r.stderr


@pytest.mark.slow
def test_startup_log_and_endpoints_mask_the_broker_password(tmp_path: Path) -> None:
    """The broker is down (nothing listens there): retries are logged, never the password."""
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "rank0.log").write_text("step 1 | loss 1.0 | grad_norm 1.0\n")
    url = f"mqtt://alice:{PASSWORD}@127.0.0.1:{free_port()}"
    with rankwatch([str(logs / "*.log")], tmp_path / "state", "masked", tmp_path / "out.txt", extra=["--mqtt", url]) as rw:
        seen = rw.get("/healthz") + rw.get("/metrics") + rw.get("/api/incidents")
        deadline = time.monotonic() + 30
        while "metrics on http://" not in rw.output() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)  # a connection attempt or two
        assert rw.stop() == 0
    out = rw.output()
    assert "metrics on http://127.0.0.1:" in out
    assert "alice:***@127.0.0.1" in out, out
    assert PASSWORD not in out + seen
    assert PASSWORD not in "".join(p.read_text(errors="replace") for p in (tmp_path / "state").rglob("*") if p.is_file())
