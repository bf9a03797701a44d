"""A rank's progress counter on a line with no metric: heartbeats and per-step notes.

``[heartbeat] rank=3 epoch=0 batch=20``, ``r1 | step 44: batch ready``, ``[rank2] iter 1200
saving checkpoint``: the rank got that far. No loss, so no SAMPLE; a PROGRESS event keeps the
counter for the hang analysis (``correlate.hang``: of the ranks its timeout reports leave
silent, the one whose counter stopped short is the one the others wait for). Only lines
whose rank is known (a prefix, the message, the path) say anything; an epoch on the line
orders its per-epoch counter.
"""

from __future__ import annotations

import re

from detectors.model import EventKind
from detectors.parsers.base import Rule, Segment

__all__ = ["RULES", "bar_before"]

# the counter, not a count of things ("step 44: batch ready (16 samples)": 16 is no batch index)
_COUNTER = re.compile(
    r"\b(?:[Gg]lobal[_ ]step|[Ss]tep|STEP|[Ii]ter(?:ation)?|ITER|[Bb]atch|BATCH)\b['\"]?\s{0,2}[=:#]?\s{0,2}\[?\s{0,4}(?P<n>\d{1,9})\b(?!\.\d)"
    r"(?!\s*(?:samples|images|tokens|sequences|examples|items|elements)\b)"
)
_EPOCH = re.compile(r"\b(?:[Ee]poch|EPOCH)\b\s{0,2}[=:#]?\s{0,2}\[?\s{0,4}(?P<e>\d{1,6})\b")
EPOCH_WEIGHT = 10**9  # an epoch outranks any counter within it


def _counter(m: re.Match[str], seg: Segment) -> bool:
    if seg.sampled or (seg.rank is None and seg.local_rank is None):
        return False
    cm = _COUNTER.search(seg.body)
    if cm is None:
        return False
    n = int(cm.group("n"))
    em = _EPOCH.search(seg.body)
    at = n + (int(em.group("e")) * EPOCH_WEIGHT if em else 0)
    seg.emit(EventKind.PROGRESS, data={"progress_at": at})
    return False


def _bar_edge(m: re.Match[str], seg: Segment) -> bool:
    return False  # the parse reads the bar itself (parse.py ``_bar_edge``); the line only had to reach it


# a tqdm bar still running ("11%|#1        | 34081/300000 [9:57:53<76:49:37,  1.04s/it]"): its counter
_RUNNING_BAR = re.compile(rb"\d{1,3}%\|[^|\r\n]{0,80}\| ?(\d{1,9})/(\d{1,9}) \[")
BAR_LOOKBACK = 4096  # bytes above a line searched for the bar (within the parse's kept tail)


def bar_before(before: bytes) -> int | None:
    """The counter of the last running tqdm bar in ``before`` (the text just above a line): where
    the loop was when the line was printed. A bar at its end (n = total: a finished pass over a
    dataset, a tokenizer's map) says nothing about the training loop; only the scan's edge bars
    reach the parse, so a line between refreshes of a bar looks back for it itself."""
    last = None
    for m in _RUNNING_BAR.finditer(before[-BAR_LOOKBACK:]):
        last = m
    if last is None:
        return None
    n, total = int(last.group(1)), int(last.group(2))
    return n if 0 < n < total else None


# the scan's trigger: the key as a word of its own ("optimizer_step: 12.6" is a timer), then an
# integer ("step: 58.03" is a duration)
RULES = [Rule("progress.counter", r"(?:^|[^A-Za-z_])(?:[Ss]tep|STEP|[Ii]ter|ITER|[Bb]atch|BATCH)['\"]?[ =:#\[]{1,5}[0-9]{1,9}(?:[^0-9.]|$)",
              _counter),
         # a bar at its start (0%), its end (100%) or its first few steps: so few lines of a bar that
         # the parse can see whether a loop's bar ever moved past 0 (the rest of a bar is noise)
         Rule("progress.bar_edge", r"(?:^|[^0-9])0%\||100%\||\| ?[1-9]/[0-9]+ \[", _bar_edge, on_raw=True)]
