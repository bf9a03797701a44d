from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["tests.mqtt_broker"]  # the `broker` fixture: a real Mosquitto on loopback

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture(autouse=True)
def _no_stack_sampling(monkeypatch: pytest.MonkeyPatch) -> None:
    """Daemons started by tests do not py-spy the machine's other processes (a shared host
    runs other jobs with RANK set); the live-stacks tests turn it on for their own job."""
    monkeypatch.setenv("RANKWATCH_STACKS__ENABLED", "false")


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def real_logs() -> Path:
    path = SHARED / "real-logs"
    if not path.is_dir():
        pytest.skip(f"../shared/real-logs not found at {path} (CI and developer machines have it beside the repo)")
    return path
