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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from detectors.prefixes import split_prefixes
from detectors.ranks import GLUED_RANK, message_rank

__all__ = ["LOOKBACK_BYTES", "LOOKBACK_LINES", "LastLine", "OddRank", "is_warning", "lagging_rank", "last_own_lines", "note_template", "odd_rank", "printed_before"]

LOOKBACK_BYTES = 12_288  # the tail of a file kept for this (about 150 lines of 80 characters)
LOOKBACK_LINES = 200
MAX_BODY = 400  # longer lines (dumps, tracebacks glued together) are not a rank's own report

# a rank's own tag inside the message ("rank=3", "[rank 2]", "RANK=1 LOCAL_RANK=1", "[r2/4]",
# "'rank': 1"): removed before lines are compared, since it differs on every rank by design
_RANK_TOKEN = re.compile(
    r"(?i)\b(?:local_|global_|node_)?rank\b['\"]?\s*[:=#]?\s*\d+(?:\s*/\s*\d+)?|\[r\d+(?:/\d+)?\]|\bworld(?:_size)?\b\s*[:=]?\s*\d+")
# a clock or a date left in the message (a format the prefix parser does not strip): differs on every line
_CLOCK = re.compile(r"\d{4}-\d\d-\d\d(?:[T ]|\b)|\b\d\d?:\d\d:\d\d(?:[.,]\d+)?")
_STATUS_CELLS = re.compile(r"\s*[|│]\s*")
_RICH_SAME_SECOND = re.compile(r"\s{4,16}(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) {2,}\S")
_STATUS_ROW = re.compile(r"(?i:heartbeat|status|state|watchdog|monitor)\s{1,4}rank\s{0,2}(\d{1,6})\s{0,2}:\s")
_TAG_LEAD = re.compile(r"^(?:\[[A-Za-z][\w .:-]{0,30}\]\s*)+")
_NUM = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
# not a rank's own report: traceback frames and exception text, which the peers print too with
# their own ports and addresses
_NOT_OWN = re.compile(r"Traceback|File \"|Error|error|Exception|\^\^\^")
_WARN = re.compile(r"\b(?:WARN(?:ING)?|ERROR)\b|\blevel[=:]\s*['\"]?(?:warn(?:ing)?|error)\b", re.I)
# a line's own clock as a field ("ts=1796617838.355", "time=07:05:51"): dropped, the rest compared
_CLOCK_FIELD = re.compile(r"\b(?:ts|time|timestamp)\s*[:=]\s*\S+", re.I)
# a value that differs on every process by nature: the line is not compared at all
_TIMEISH = re.compile(r"\b(?:elapsed|pid|port|tid|secs?|ms|duration|took)\b\s*[:=]?\s*\d", re.I)


@dataclass(frozen=True, slots=True)
class OddRank:
    rank: int  # the rank that stands apart (with ``why`` "pair": the lower of the two)
    line: str  # the line that stands apart
    # "differs" (its numbers differ from every peer's), "warned" (it alone warned) or "pair" (a
    # two-rank job whose two ranks printed the same line with other sizes: which of them is odd is
    # for the caller to tell, from which one aborted; ``other`` is the second rank)
    why: str
    other: int | None = None


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
        got.append((rank, _CLOCK.sub("", _RANK_TOKEN.sub("", _CLOCK_FIELD.sub("", body))).strip(), warned, line.strip()))
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
    if len(seen) == 2:
        return _pair(by_template, seen)
    return None


def _pair(by_template: dict[str, dict[int, tuple[tuple[str, ...], str]]], seen: set[int]) -> OddRank | None:
    """Two ranks, the same line from each with other whole numbers (a vocabulary, an element
    count, ``float64``/``float32``) and the same fractions (a loss of different data differs in
    its fractions): their calls differ in size; which one is odd is for the caller to tell."""
    lo, hi = sorted(seen)
    for per_rank in by_template.values():
        if len(per_rank) != 2:
            continue
        (a, line_a), (b, _) = per_rank[lo], per_rank[hi]
        diff = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
        if diff and all("." not in x and "." not in y and "e" not in x.lower() and "e" not in y.lower() for x, y in diff):
            return OddRank(lo, line_a, "pair", other=hi)
    return None


# -------------------------------------------------------------------- each rank's last line
# not a rank's own progress note: a traceback and its quoted source, an exception's or a
# timeout's text, a C++ stack frame, a terminate message (every rank prints these as it fails)
# (or a signal's: "Received SIGTERM", "terminating process 14173" come from the teardown)
_NOT_NOTE = re.compile(
    r"Traceback|File \"|Error|error|Exception|\^\^\^|[Tt]imed?[ _-]?out|TIMEOUT|\bframe #\d|\bwhat\(\)|terminate called"
    r"|\bSIG[A-Z]{2,6}\b|[Ss]ignal\b|[Tt]erminat"
    # glog's error and fatal header even where a narrow paste cut it before its closing bracket
    # (``[E419 10:42:28.887728774 ProcessGroupNCCL.cpp``): a failure's report, not a note
    r"|^\[?[EF]\d{3,4} \d\d:\d\d")
# a progress bar's clock and rate ("[00:03, 10.54batch/s]", "[30:06<01:10, 69.48s/batch]"): its unit
# flips between items/s and s/item as the rate drops, so it is no part of the note's words
_BAR_STATS = re.compile(r"\[\d+:\d\d(?::\d\d)?(?:<[^\]]{0,20})?(?:,[^\]]{0,40})?\]")
_ERROR_LEVEL = ("E", "F", "C")  # ERROR, FATAL, CRITICAL and glog's E/F: a failure's report, not a note


@dataclass(frozen=True, slots=True)
class LastLine:
    """A rank's last own line in a window: where it is among the window's lines, the message made
    comparable (its rank tag, clocks and fields that differ by nature removed) and the line."""

    index: int
    body: str
    line: str


def last_own_lines(lines: Sequence[str], year: int = 1970, file_rank: int | None = None) -> dict[tuple[str, int], LastLine]:
    """Each rank's last own progress note among ``lines`` (a file's last lines, oldest first):
    a line that names its rank (its prefix, its message, or ``file_rank``: the rank whose file it
    is) and is a note of the rank's own, not a traceback, an error or a warning every failing
    rank prints alike. Keyed ("g", global rank), or ("l", local rank) where only a local rank
    is named (torchrun's ``[default3]:``; the job's map of local ranks tells the global one)."""
    got: dict[tuple[str, int], LastLine] = {}
    table = False  # below a status table's header whose first column is the rank
    for i, raw in enumerate(lines):
        line = raw.rsplit("\r", 1)[-1] if "\r" in raw else raw
        if ("|" in line or "│" in line) and len(line) <= MAX_BODY:
            # (behind the monitor's own tag: "[monitor] rank | step | phase")
            cells = [c.strip() for c in _STATUS_CELLS.split(_TAG_LEAD.sub("", split_prefixes(line, year).body.strip()))]
            if len(cells) >= 3 and cells[0].casefold() in ("rank", "global rank", "rank id"):
                table = True
                continue
            if table and len(cells) >= 3 and cells[0].isdigit() and len(cells[0]) <= 6:
                # a row of a monitor's status table of every rank ("rank | step | phase | last beat",
                # then "   1 |  121 | data    |   19.5s ago | STALE"): that rank's last state
                norm = " ".join(_CLOCK.sub("", " | ".join(cells[1:])).split())
                got[("g", int(cells[0]))] = LastLine(i, norm, line.strip())
                continue
        table = False
        if ("ank" in line or "default" in line) and GLUED_RANK.search(line):
            # two processes' notes printed into one line: each is its own rank's
            for part in GLUED_RANK.split(line):
                got.update({k: LastLine(i, n.body, n.line) for k, n in last_own_lines([part], year, file_rank).items()})
            continue
        if not line.strip() or len(line) > MAX_BODY:
            continue
        if line[:1].isspace() and _RICH_SAME_SECOND.match(line):
            # rich's handler leaves the time column blank for a record in the same second as the one
            # above ("           ERROR    [r0] heartbeat rank 2: ..."): a record, not a continuation
            line = line.lstrip()
        pre = split_prefixes(line, year)
        body = pre.body
        if not body.strip() or body[:1].isspace():
            continue  # a continuation: an indented frame, a wrapped value
        # (DeepSpeed's log_dist ``[Rank 0] `` and a user's own ``[Rank 2] `` tag: who printed it)
        rank = pre.rank if pre.rank is not None else pre.logging_rank if pre.logging_rank is not None else message_rank(body)[0]
        if (row := _STATUS_ROW.match(body.strip())) is not None:
            # a monitor's status row about one rank ("heartbeat rank 2: step 52 phase data, 20.0s
            # ago", printed by rank 0 for every rank): that rank's last state, whoever printed it
            rank = int(row.group(1))
        if rank is None and pre.local_rank is None:
            rank = file_rank
        key = ("g", rank) if rank is not None else ("l", pre.local_rank) if pre.local_rank is not None else None
        if key is None or (row is None and (_NOT_NOTE.search(body) or (pre.level or " ")[0].upper() in _ERROR_LEVEL)):
            continue
        norm = " ".join(_CLOCK.sub("", _RANK_TOKEN.sub("", _CLOCK_FIELD.sub("", _BAR_STATS.sub("", body)))).split())
        if norm:
            got[key] = LastLine(i, norm, line.strip())
    return got


def printed_before(lines: Sequence[str], year: int, file_rank: int | None, template: str) -> set[int]:
    """The global ranks with a note of ``template`` (``note_template``) anywhere in ``lines``: the
    ranks that took part in earlier rounds of a roll call whose last round some of them missed."""
    got: set[int] = set()
    for i in range(len(lines)):
        for (kind, n), note in last_own_lines(lines[i:i + 1], year, file_rank).items():
            if kind == "g" and note_template(note.body) == template:
                got.add(n)
    return got


def lagging_rank(last: Mapping[int, str]) -> tuple[int, str] | None:
    """The one rank whose last note (``last``: rank → its comparable message, see
    ``last_own_lines``) stands apart from every other rank's, with why: "apart" (three ranks at
    least; every other rank's last note is one line, numbers aside, and this one's another: it
    went somewhere else, ``running validation`` while its peers print ``epoch 1 done``) or
    "behind" (every rank's last note is the same line, and this one's whole numbers are below
    the others', which all agree: ``step 43`` while they print ``step 44``; with two ranks, the
    one whose note is one count short in a single place, ``"micro": 1`` against ``"micro": 2``).
    None otherwise."""
    if len(last) == 2:
        return _behind_of_two(last)
    if len(last) < 3:
        return None
    by_template: dict[str, list[int]] = {}
    for rank, body in last.items():
        by_template.setdefault(_NUM.sub("#", body), []).append(rank)
    if len(by_template) == 2:
        lone = [ranks for ranks in by_template.values() if len(ranks) == 1]
        if len(lone) == 1:
            return lone[0][0], "apart"
        return None
    if len(by_template) != 1:
        return None
    whole = {rank: _whole_numbers(body) for rank, body in last.items()}
    values: dict[tuple[int, ...], list[int]] = {}
    for rank, v in whole.items():
        values.setdefault(v, []).append(rank)
    if len(values) != 2:
        return None
    single = [(v, ranks[0]) for v, ranks in values.items() if len(ranks) == 1]
    if len(single) != 1:
        return None
    mine, rank = single[0]
    others = next(o for o in values if o != mine)
    return (rank, "behind") if len(mine) == len(others) and mine < others else None


_NONFINITE = re.compile(r"(?i)(?<![\w.])[-+]?(?:nan|inf(?:inity)?)(?![\w.])")


def note_template(body: str) -> str:
    """A last note's words with its numbers masked (a NaN or an infinity is a number too): the
    notes of one round, whatever rank, sample, step or value each printed, share it."""
    return _NUM.sub("#", _NONFINITE.sub("#", body))


def is_warning(line: str, year: int = 1970) -> bool:
    """A line logged as a warning or an error (its header's level, or the word in its first
    words): a report every rank may print alike, not a note of its own progress."""
    pre = split_prefixes(line, year)
    return (pre.level or " ")[0].upper() in ("W", "E", "F", "C") or bool(_WARN.search(pre.body[:60]))


def _whole_numbers(body: str) -> tuple[int, ...]:
    return tuple(int(v) for v in _NUM.findall(body) if v.lstrip("+-").isdigit())


def _behind_of_two(last: Mapping[int, str]) -> tuple[int, str] | None:
    """Two ranks whose last notes are one line with the same whole numbers but one, lower on
    one rank: that rank is behind (which of two that differ in words is odd, none can say)."""
    (ra, a), (rb, b) = sorted(last.items())
    if _NUM.sub("#", a) != _NUM.sub("#", b):
        return None
    va, vb = _whole_numbers(a), _whole_numbers(b)
    diff = [i for i, (x, y) in enumerate(zip(va, vb, strict=False)) if x != y]
    if len(va) != len(vb) or len(diff) != 1:
        return None
    return (ra, "behind") if va[diff[0]] < vb[diff[0]] else (rb, "behind")
