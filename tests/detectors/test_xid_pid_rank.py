"""A kernel report that names its process (the NVIDIA driver's ``NVRM: Xid (PCI:...): 13,
pid=15095, name=python3, ...``) is the rank a launcher's report gave that pid (correlate
``pid_rank``, ``rank_from: pid``).

Formats: the Xid line as dmesg prints it (NVIDIA's Xid catalog; tinygrad/tinygrad#6947,
PaddlePaddle users' dmesg in the corpus, h19b-021), torchrun's error summary (torch 2.x
``elastic/multiprocessing/errors``: ``rank : 2 (local_rank: 2)`` / ``exitcode : -15 (pid:
15095)``) and its agent's ``failed (exitcode: -6) local_rank: 1 (pid: 15094)`` line. The
worker the driver names is not always the one torchrun's summary calls the root cause: a peer
that aborted while tearing down can exit first."""

from __future__ import annotations

import pytest

from detectors.diagnosis import build_report
from tests.helpers import engine_verdict, fed_state, torchrun_summary

_STEPS = [f"| step {s:5d} | loss  6.4{s % 7:02d} | ppl   603.73 |   28.9 ms/step" for s in (10, 20, 30)]

_PEERS = [
    "[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection "
    "closed by peer [127.0.0.1]:11681",
    "[rank1]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection "
    "closed by peer [127.0.0.1]:11681",
    "terminate called without an active exception",
]


def _xid(pid: int) -> list[str]:
    return [
        f"[Mon Dec  7 22:07:04 2026] NVRM: Xid (PCI:0000:41:00): 13, pid={pid}, name=python3, Graphics SM Warp "
        "Exception on (GPC 4, TPC 2, SM 0): Out Of Range Address",
        f"[Mon Dec  7 22:07:04 2026] NVRM: Xid (PCI:0000:41:00): 43, pid={pid}, name=python3, Ch 00000008",
    ]


_PIDS = {0: 15093, 1: 15094, 2: 15095}
_CODES = {0: -15, 1: -6, 2: -15}


@pytest.mark.parametrize("culprit", [0, 2])
def test_the_xid_names_the_rank_whose_pid_it_gives(culprit: int) -> None:
    lines = _STEPS + _PEERS + torchrun_summary(1, _CODES, _PIDS, clock="2026-12-07_22:07:04") + ["", "dmesg on the node:", *_xid(_PIDS[culprit])]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank, top.data.get("rank_from")) == ("gpu_xid", culprit, "pid")
    report = build_report(fed_state(lines, "train.log"))["incidents"][0]
    assert report["initiator"]["rank_from"] == "pid"
    assert f"rank {culprit}'s process" in report["root_cause"][0]


def test_the_agent_line_alone_gives_a_pid_its_rank() -> None:
    # only the agent's own line (a local rank and its pid) before the dmesg lines
    lines = [*_STEPS, "E1207 22:07:04.347000 15083 torch/distributed/elastic/multiprocessing/api.py:1002] failed "
             "(exitcode: -6) local_rank: 1 (pid: 15094) of binary: /usr/bin/python3", *_xid(15094)]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("gpu_xid", 1)


def test_a_pid_no_launcher_line_gives_names_no_rank() -> None:
    lines = _STEPS + _PEERS + torchrun_summary(1, _CODES, _PIDS, clock="2026-12-07_22:07:04") + _xid(22222)
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("gpu_xid", None)
