"""Ranks that an orchestrator names away from the worker's own lines.

Ray relays every worker's output to the driver under ``(RayTrainWorker pid=N)`` (``, ip=X`` for a
worker on another node): a process, never a rank. The job itself prints the mapping:

- the controller's worker table, one row per worker: ``- (ip=192.0.2.2, pid=10234) world_rank=1,
  local_rank=1, node_rank=0`` (Ray Train v1's ``Started distributed worker processes:`` and v2's
  ``Started training worker group of size 4:``): the pid → rank map that ``ranks.resolve_rank``
  reads for a worker's lines (rank_from ``prefix``, as an NCCL ``host:pid`` tied by a ``comm`` line);
- a failure report's per-rank section header, ``[Rank 1 Error Snippet]:`` (``[Rank 1]`` before Ray
  2.49), alone on its line: the lines of the same
  speaker right below it are that rank's, as in torchrun's failure summary (rank_from ``launcher``);
  a section of several ranks (``[Rank 0,3 Error Snippet]:``, their reports were alike) is a report
  of each of them: a failure line in it is copied to each rank (``spread``).

A pid printed on two nodes (the table's rows differ in ``ip``) is read only with its ip; a worker
line without an ip then names no rank rather than a guess.
"""

from __future__ import annotations

import dataclasses
import re

from detectors.model import Event, EventKind
from detectors.parsers.base import FileState, Rule, Segment

__all__ = ["AMBIGUOUS", "HOST_ONLY", "RULES", "SNIPPET_LINES", "spread"]

AMBIGUOUS = -1  # a pid → rank key that two table rows gave different ranks
SNIPPET_LINES = 60  # a section's lines end at most this far below its header
MAX_SECTION_RANKS = 64  # ranks one section header may name (a pasted header stays bounded)

_ROW = re.compile(r"\((?:ip=(?P<ip>[^,()\s]+), )?pid=(?P<pid>\d{1,9})\) world_rank=(?P<rank>\d{1,6})\b")
# the header alone on its line: Ray 2.44's "[Rank 0]", 2.49+'s "[Rank 1 Error Snippet]:" (errors alike
# deduplicated: "[Rank 0,3 Error Snippet]:")
_SNIPPET = re.compile(r"\s*\[Rank (?P<ranks>\d{1,6}(?:, ?\d{1,6})*)(?: Error Snippet)?\]:?\s*")


def _row(m: re.Match[str], seg: Segment) -> bool:
    rm = _ROW.search(seg.body)
    if rm is None:
        return False
    pid_rank = seg.file.job.pid_rank
    pid, rank = int(rm.group("pid")), int(rm.group("rank"))
    if rm.group("ip"):
        pid_rank[(rm.group("ip"), pid)] = rank
    # the key a worker line without its ip looks up (the driver's own node)
    prev = pid_rank.get(("", pid))
    pid_rank[("", pid)] = rank if prev is None or prev == rank else AMBIGUOUS
    return False


def _snippet(m: re.Match[str], seg: Segment) -> bool:
    sm = _SNIPPET.fullmatch(seg.body)
    if sm is None:
        return False
    ranks = tuple(dict.fromkeys(int(r) for r in sm.group("ranks").replace(" ", "").split(",")))[:MAX_SECTION_RANKS]
    seg.file.snippet = (seg.pre.pid, ranks, seg.source.line)
    return False


def spread(out: list[Event], first: int, state: FileState) -> None:
    """Failure lines read inside a section of several ranks (``state.snippet``, still current for
    this line): one report per rank, each marked as read from the section (``launcher``)."""
    snip = getattr(state, "snippet", None)  # (a FileState pickled by an older version lacks it)
    if snip is None or len(snip[1]) < 2:
        return
    for ev in out[first:]:
        if ev.kind is not EventKind.MATCH or ev.rank is not None or ev.data.get("job_scope"):
            continue
        ev.rank, ev.rank_from = snip[1][0], "launcher"
        out.extend(dataclasses.replace(ev, rank=r, data=dict(ev.data)) for r in snip[1][1:])


# nccl-tests (all_reduce_perf ...) lists its ranks before it runs: "#   Rank  0 Pid 3590428 on
# host3 device  0 [0x07] NVIDIA A100-SXM4-40GB" (newer: "#  Rank  0 Group  0 Pid   7995 on HOST
# device ..."); its failure lines then name only the host and a pid ("host3: Test NCCL failure
# common.cu:1125 'unhandled system error'", " .. host3 pid 3590858: Test failure common.cu:1017"):
# a host with one rank in the table is that rank
_NCCLTESTS_ROW = re.compile(r"#\s*Rank\s+(?P<rank>\d{1,6})\s+(?:Group\s+\d+\s+)?Pid\s+(?P<pid>\d{1,9})\s+on\s+(?P<host>\S+)\s+device\b")
_NCCLTESTS_FAIL = re.compile(r"\s*(?:\.\.\s+)?(?P<host>[\w.-]{1,253})(?: pid (?P<pid>\d{1,9}))?: Test (?:NCCL |CUDA )?failure\b")
HOST_ONLY = -1  # the pid of a pid_rank key that stands for a whole host (its one rank)


def _nccltests_row(m: re.Match[str], seg: Segment) -> bool:
    rm = _NCCLTESTS_ROW.match(seg.body)
    if rm is None:
        return False
    pid_rank = seg.file.job.pid_rank
    host, rank = rm.group("host"), int(rm.group("rank"))
    pid_rank[(host, int(rm.group("pid")))] = rank
    prev = pid_rank.get((host, HOST_ONLY))
    pid_rank[(host, HOST_ONLY)] = rank if prev is None or prev == rank else AMBIGUOUS
    if seg.rank is None:
        # the table lists every rank of the benchmark: each is a rank the job has
        seg.rank, seg.rank_from = rank, "message"
        seg.emit(EventKind.CONTEXT, data={"key": "nccl_tests_rank", "value": rank})
    return False


def _nccltests_fail(m: re.Match[str], seg: Segment) -> bool:
    # (the host may have been peeled off as a runner's host label: "host3: " is one too)
    fm = _NCCLTESTS_FAIL.match(seg.body) or _NCCLTESTS_FAIL.match(seg.raw)
    if fm is None or seg.rank is not None:
        return False
    pid_rank = seg.file.job.pid_rank
    host = fm.group("host")
    rank = pid_rank.get((host, int(fm.group("pid")))) if fm.group("pid") else None
    if rank is None:
        rank = pid_rank.get((host, HOST_ONLY))
    if rank is not None and rank != AMBIGUOUS:
        seg.rank, seg.rank_from = rank, "prefix"  # the failure below is this rank's
    return False


RULES = [
    Rule("workermap.row", r"pid=\d+\) world_rank=\d", _row),
    Rule("workermap.nccltests_row", r"#[ \t]*Rank[ \t]+\d+[ \t]+(?:Group[ \t]+\d+[ \t]+)?Pid[ \t]+\d+[ \t]+on[ \t]", _nccltests_row),
    Rule("workermap.nccltests_fail", r": Test (?:NCCL |CUDA )?failure", _nccltests_fail, on_raw=True),
    Rule("workermap.snippet", r"\[Rank \d+(?:, ?\d+)*(?: Error Snippet)?\]:?[ \t]*\r?$", _snippet),
]
