"""A training loop's own heartbeat monitor names the rank whose heartbeat went stale.

Scripts run a thread on rank 0 that every rank pings each step and that warns when one rank's
last ping grows old (``rank 3 last heartbeat 11.2 s ago``, ``No heartbeat from rank 2 for 60.0s``,
``rank 5 missed 3 consecutive heartbeats``). The rank named is the one that stopped; the speaker,
often behind its own ``[rank0]`` tag, only noticed (corpus holdout32 g32-002: a CPU ``torchrun``
2.13 job of four ranks, rank 3 deadlocked on a lock, the job stopped by ``timeout 40``).
"""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict

_STOP = ["W1208 00:31:16.834000 25516 torch/distributed/elastic/agent/server/api.py:753] Received 15 death signal, "
         "shutting down workers",
         "torch.distributed.elastic.multiprocessing.api.SignalException: Process 25516 got signal: 15"]


@pytest.mark.parametrize("report", ["[hb-monitor] WARNING rank {r} last heartbeat {t}.2 s ago",
                                    "[rank0] WARNING:monitor:No heartbeat from rank {r} for {t}.0s (timeout 30s)",
                                    "[rank0] 2026-12-08 00:31:0{t} WARNING [watchdog] rank {r} missed {t} consecutive heartbeats"])
def test_the_rank_a_heartbeat_monitor_names_is_the_hung_one(report: str) -> None:
    lines = [f"step {s:5d} | loss 0.{8134 - s * 10} | 00:30:5{s // 10}" for s in (10, 20, 30, 40)]
    lines += [report.format(r=3, t=t) for t in (1, 6)]
    top = engine_verdict(lines + _STOP)[0]
    assert (top.failure, top.rank) == ("rank_hang", 3)


def test_a_rank_that_sends_heartbeats_is_not_named() -> None:
    # (a monitor's own routine line about a live rank names no hang)
    lines = [f"[Monitor] Heartbeat from rank {r}" for r in (1, 2, 3)] + ["step 10 loss 0.5", "step 20 loss 0.4"]
    assert all(inc.failure != "rank_hang" for inc in engine_verdict(lines))
