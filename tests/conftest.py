from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# property tests draw the same examples on every run and machine (`make test` must not pass or fail
# by chance); `HYPOTHESIS_PROFILE=explore` draws fresh ones, to hunt for new counterexamples, which
# then join the test as explicit @example cases
settings.register_profile("ci", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

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
