from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def real_logs() -> Path:
    path = SHARED / "real-logs"
    if not path.is_dir():
        pytest.skip(f"../shared/real-logs not found at {path} (CI and developer machines have it beside the repo)")
    return path
