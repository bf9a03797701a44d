"""A real Mosquitto broker on loopback for the tests that speak MQTT (``make test`` installs
the Debian package; the tests that need it are skipped, saying so, when it is missing)."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import free_port

__all__ = ["MOSQUITTO", "Broker", "broker"]

MOSQUITTO = shutil.which("mosquitto") or ("/usr/sbin/mosquitto" if Path("/usr/sbin/mosquitto").exists() else None)


class Broker:
    def __init__(self, tmp: Path) -> None:
        self.port = free_port()
        self.dir = tmp / "mosquitto"
        self.dir.mkdir(parents=True, exist_ok=True)
        conf = self.dir / "mosquitto.conf"
        conf.write_text(
            f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence true\n"
            f"persistence_location {self.dir}/\nautosave_interval 1\n"
            # started as root, mosquitto would drop to its own user, which cannot write here
            + (f"user {pwd.getpwuid(os.getuid()).pw_name}\n" if os.getuid() == 0 else "")
        )
        self.conf = conf
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        assert MOSQUITTO
        self.proc = subprocess.Popen([MOSQUITTO, "-c", str(self.conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise RuntimeError("mosquitto did not start")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    if MOSQUITTO is None:
        pytest.skip("mosquitto not installed (make test installs it)")
    b = Broker(tmp_path)
    b.start()
    yield b
    b.stop()
