"""Finding the rank processes in the real /proc: RANK/LOCAL_RANK in the environment, the
pattern, workers that inherit the environment, processes that come and go."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

import pytest

from monitor.stacks import RankProcesses

# a "rank" that starts one "DataLoader worker" (a child inheriting its environment), then waits
RANK_PY = ("import subprocess, sys, time; "
           "w = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
           "print('up', flush=True); time.sleep(60)")


@pytest.fixture
def tag() -> str:
    return f"rwdisc-{uuid.uuid4().hex[:10]}"


def start(tag: str, rank: int) -> subprocess.Popen[str]:
    env = {**os.environ, "RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": "2"}
    p = subprocess.Popen([sys.executable, "-c", RANK_PY, tag], env=env, stdout=subprocess.PIPE, text=True,
                         start_new_session=True)
    assert p.stdout is not None and p.stdout.readline() == "up\n"  # its worker is running too
    return p


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for p in started:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, 9)  # the rank and its worker: a session of their own
        p.wait()
        if p.stdout is not None:
            p.stdout.close()


def test_ranks_are_found_by_environment_and_pattern_workers_skipped(tag: str, procs: list) -> None:
    procs += [start(tag, 1), start(tag, 0)]
    found = RankProcesses(pattern=tag).refresh()
    assert [(r.rank, r.local_rank, r.pid) for r in found] == [(0, 0, procs[1].pid), (1, 1, procs[0].pid)]
    assert RankProcesses(pattern=tag + "-other-job").refresh() == []


def test_refresh_sees_a_new_process_and_forgets_an_ended_one(tag: str, procs: list) -> None:
    rp = RankProcesses(pattern=tag)
    procs.append(start(tag, 0))
    assert [r.rank for r in rp.refresh()] == [0]
    (old,) = [k for k in rp.cache if k[0] == procs[0].pid]
    os.killpg(procs[0].pid, 9)
    procs[0].wait()
    procs.append(start(tag, 1))
    deadline = time.monotonic() + 30  # the killed worker is reaped by init asynchronously
    while [r.rank for r in rp.refresh()] != [1]:
        assert time.monotonic() < deadline, rp.refresh()
        time.sleep(0.1)
    assert old not in rp.cache
