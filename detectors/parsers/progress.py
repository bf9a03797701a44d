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

__all__ = ["RULES"]

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


# the scan's trigger: the key as a word of its own ("optimizer_step: 12.6" is a timer), then an
# integer ("step: 58.03" is a duration)
RULES = [Rule("progress.counter", r"(?:^|[^A-Za-z_])(?:[Ss]tep|STEP|[Ii]ter|ITER|[Bb]atch|BATCH)['\"]?[ =:#\[]{1,5}[0-9]{1,9}(?:[^0-9.]|$)",
              _counter),
         # a bar at its start (0%), its end (100%) or its first few steps: so few lines of a bar that
         # the parse can see whether a loop's bar ever moved past 0 (the rest of a bar is noise)
         Rule("progress.bar_edge", r"(?:^|[^0-9])0%\||100%\||\| ?[1-9]/[0-9]+ \[", _bar_edge, on_raw=True)]
