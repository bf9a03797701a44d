"""Live stall detection: no rank has advanced its step for too long (a generic hang detector).

Offline, a hang shows as timeouts and a silent rank (``correlate.hang``). Live, the same
hang can be seen long before any NCCL watchdog speaks: every rank's step counter stopped.
``stall_incident`` is a pure function of the detect state and the wall clock the caller
passes: after ``max(floor, factor x median step time)`` without progress it returns a
``rank_hang`` incident naming the rank that is behind, when exactly one is.
"""

from __future__ import annotations

import hashlib
import statistics

from detectors.detect import JobState
from detectors.model import Incident, Source

__all__ = ["HANG_LIKE", "stall_incident", "suspicion"]

HANG = "rank_hang"
# verdicts a live stack sample can confirm or sharpen (the hang, and its collateral reports)
TIMEOUT = "collective_timeout"
HANG_LIKE = (HANG, TIMEOUT, "peer_connection_lost")


def suspicion(state: JobState, stall_step: int | None) -> tuple[str, int | None] | None:
    """Why a live stack sample is worth taking now: an open stall (after ``stall_step``), or
    the first collective-timeout line; None when there is nothing to look at."""
    if stall_step is not None:
        return ("stall", stall_step)
    if any(f == TIMEOUT for _, f in state.match_counts):
        steps = [rs.last_step for rs in state.ranks.values() if rs.last_step is not None]
        return ("timeout", max(steps) if steps else None)
    return None


def stall_incident(state: JobState, now: float, floor: float, factor: float,
                   incidents: list[Incident]) -> Incident | None:
    if state.finished or any(i.severity == "critical" for i in incidents):
        return None
    progress = {k: rs for k, rs in state.ranks.items() if rs.progress_wall is not None}
    if not progress:
        return None
    intervals = [x for rs in progress.values() for x in rs.step_intervals if x > 0]
    median = statistics.median(intervals) if intervals else 0.0
    threshold = max(floor, factor * median)
    latest = max(rs.progress_wall for rs in progress.values() if rs.progress_wall is not None)
    if now - latest < threshold:
        return None
    steps = {k: rs.last_step for k, rs in progress.items() if rs.last_step is not None}
    behind = None
    if steps and len(set(steps.values())) > 1:
        low = min(steps.values())
        lows = [k for k, s in steps.items() if s == low]
        if len(lows) == 1 and lows[0] is not None and lows[0][0] == "g":
            behind = lows[0][1]
    rs = progress[next(iter(progress))]
    src = rs.samples[-1].source if rs.samples else Source("<live>", 0, "")
    e = state.catalog[HANG]
    last = max(steps.values()) if steps else None
    narrative = [
        f"No rank has made progress for {now - latest:.0f} s (threshold {threshold:.0f} s = "
        f"max({floor:.0f} s, {factor:g} x median step time {median:.1f} s)); last step {last}.",
        (f"Rank {behind} is behind its peers." if behind is not None else
         "Every rank stopped at the same step, so the logs cannot tell yet which one hung: "
         "run `py-spy dump --pid PID` on each rank; the collective timeouts will name it later."),
    ]
    iid = f"{HANG}-" + hashlib.sha1(f"{state.job}|stall|{last}".encode()).hexdigest()[:10]
    data: dict[str, object] = {"stall_seconds": round(now - latest, 1), "threshold_seconds": round(threshold, 1)}
    if behind is not None:
        data["rank_from"] = "progress"
    return Incident(iid, HANG, "critical", e.title, e.hardware, behind, last, None, [src], [], narrative, data)
