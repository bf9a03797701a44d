"""The rank whose own lines stand apart from its peers' just before a collective mismatch.

When a collective's sizes disagree, the rank that reports it is the one that *received* a
message of the wrong size (gloo's ``op.preamble.length <= op.nbytes``), not necessarily the one
whose call differs. The lines the ranks printed just before often say which one differs: the
same line from every rank, with the same numbers from all but one (``vocab_size=1000`` three
times and ``vocab_size=1003`` once, ``hidden=48`` / ``hidden=56``), or a warning only one rank
printed (``grad buffer size changed 610 -> 1122``). This module reads those lines; pure, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from detectors.prefixes import split_prefixes
from detectors.ranks import message_rank

__all__ = ["LOOKBACK_BYTES", "LOOKBACK_LINES", "OddRank", "odd_rank"]

LOOKBACK_BYTES = 12_288  # the tail of a file kept for this (about 150 lines of 80 characters)
LOOKBACK_LINES = 200
MAX_BODY = 400  # longer lines (dumps, tracebacks glued together) are not a rank's own report

# a rank's own tag inside the message ("rank=3", "[rank 2]", "RANK=1 LOCAL_RANK=1", "[r2/4]",
# "'rank': 1"): removed before lines are compared, since it differs on every rank by design
_RANK_TOKEN = re.compile(
    r"(?i)\b(?:local_|global_|node_)?rank\b['\"]?\s*[:=#]?\s*\d+(?:\s*/\s*\d+)?|\[r\d+(?:/\d+)?\]|\bworld(?:_size)?\b\s*[:=]?\s*\d+")
# a clock or a date left in the message (a format the prefix parser does not strip): differs on every line
_CLOCK = re.compile(r"\d{4}-\d\d-\d\d(?:[T ]|\b)|\b\d\d?:\d\d:\d\d(?:[.,]\d+)?")
_NUM = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
# not a rank's own report: traceback frames and exception text, which the peers print too with
# their own ports and addresses
_NOT_OWN = re.compile(r"Traceback|File \"|Error|error|Exception|\^\^\^")
_WARN = re.compile(r"\b(?:WARN(?:ING)?|ERROR)\b|\blevel[=:]\s*['\"]?(?:warn(?:ing)?|error)\b", re.I)
_TIMEISH = re.compile(r"\b(?:ts|time|timestamp|elapsed|pid|port|tid|secs?|ms)\b\s*[:=]", re.I)


@dataclass(frozen=True, slots=True)
class OddRank:
    rank: int
    line: str  # the line that stands apart
    why: str  # "differs" (its numbers differ from every peer's) or "warned" (it alone warned)


def _own_lines(lines: Iterable[str], year: int) -> list[tuple[int, str, bool, str]]:
    """(rank, the message with the rank's own tag and any clock removed, whether it is a warning,
    the line) for each line that names its rank and is a report of its own (not a traceback or an
    exception's text)."""
    got: list[tuple[int, str, bool, str]] = []
    for line in lines:
        if not line.strip() or len(line) > MAX_BODY:
            continue
        pre = split_prefixes(line, year)
        body = pre.body.strip()
        rank = pre.rank
        if rank is None:
            rank = message_rank(body)[0]
        if rank is None or _NOT_OWN.search(body):
            continue
        warned = (pre.level or "").upper().startswith(("WARN", "ERR")) or bool(_WARN.search(body[:60]))
        got.append((rank, _CLOCK.sub("", _RANK_TOKEN.sub("", body)).strip(), warned, line.strip()))
    return got


def odd_rank(lines: Iterable[str], year: int = 1970) -> OddRank | None:
    """The one rank whose lines stand apart from its peers' (``lines``: the file's lines just
    before the mismatch, oldest first), or None when none does or several do.

    A line every rank printed (the same words) with the same numbers on all ranks but one, three
    ranks at least, names that one; the lines that carry a clock, a pid or a port are left out
    (they differ everywhere). With no such line, the one rank that printed a warning while its
    peers printed none names itself."""
    own = _own_lines(list(lines)[-LOOKBACK_LINES:], year)
    by_template: dict[str, dict[int, tuple[tuple[str, ...], str]]] = {}
    for rank, body, _, line in own:
        if _TIMEISH.search(body):
            continue
        template = _NUM.sub("#", body)
        if "#" not in template:
            continue
        by_template.setdefault(template, {})[rank] = (tuple(_NUM.findall(body)), line)
    odd: dict[int, str] = {}
    for per_rank in by_template.values():
        if len(per_rank) < 3:
            continue
        counts: dict[tuple[str, ...], list[int]] = {}
        for rank, (values, _) in per_rank.items():
            counts.setdefault(values, []).append(rank)
        if len(counts) != 2:
            continue
        lone = [ranks for ranks in counts.values() if len(ranks) == 1]
        if len(lone) != 1 or len(per_rank) - 1 < 2:
            continue
        r = lone[0][0]
        odd.setdefault(r, per_rank[r][1])
    if len(odd) == 1:
        ((r, line),) = odd.items()
        return OddRank(r, line, "differs")
    if odd:
        return None  # several ranks stand apart in different lines: no one of them is named
    warned = {rank for rank, _, w, _ in own if w}
    seen = {rank for rank, _, _, _ in own}
    if len(warned) == 1 and len(seen) >= 2:
        r = next(iter(warned))
        line = next(text for rank, _, w, text in own if w and rank == r)
        return OddRank(r, line, "warned")
    return None
