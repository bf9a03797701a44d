"""A reporter's caption over a pasted dump: ``The stack for rank0:`` above a py-spy dump.

People who paste the stacks of a hung job into an issue put each process's dump under a line of
their own that says whose it is (``The stack for rank0:``, ``rank 3 stack:``, ``py-spy dump of
rank 1:``): the dump's lines carry no rank of their own (py-spy prints none), so the caption is
the only thing that says which rank was waiting where. The lines below it that carry no rank, no
time and no host of their own are that rank's (``rank_from: block``, as an untagged line pasted
right above a rank-tagged traceback), up to ``detectors.ranks.CAPTION_LINES`` lines (a py-spy
dump of a few threads), the next caption, or the first timed log record (the job's own log goes
on there, not the paste).

A hang watchdog of the program's own announces its dump the same way, on a line of its own that
carries its rank (``[watchdog rank=1] no training step finished in 15s, dumping all thread
stacks``, ``rank 2: still running after 600s. Dumping stack traces...``, ``thread stacks follow``)
before ``faulthandler.dump_traceback(all_threads=True)`` prints blocks that carry none.
"""

from __future__ import annotations

import re

from detectors.parsers.base import Rule, Segment, plausible

__all__ = ["RULES"]

_WHAT = r"(?:py-?spy\s+)?(?:(?:call\s?)?stacks?(?:\s?traces?)?|(?:back)?traces?|tracebacks?|dumps?|logs?|outputs?)"
# the whole line: "[the] [<what> for|of|from] rank N[ <what>]:"
_CAPTION = re.compile(rf"(?:(?:the|a)\s+)?(?:{_WHAT}\s+(?:for|of|from|on)\s+)?rank\s?#?(?P<n>\d{{1,5}})(?:'s)?(?:\s+{_WHAT})?\s*:",
                      re.IGNORECASE)


def _caption(m: re.Match[str], seg: Segment) -> bool:
    cm = _CAPTION.fullmatch(seg.body.strip())
    pre = seg.pre
    if cm is None or pre.time is not None or pre.host is not None or pre.pid is not None or pre.rank is not None:
        return False  # (a log record whose message ends in a colon goes on below as its own)
    n = int(cm.group("n"))
    if not plausible(n, seg.file.job.trusted_ws):
        return False
    seg.file.caption = (n, seg.source.line)
    return True


# a line announcing the stack dump printed below it: "dumping all thread stacks", "Dumping stack
# traces...", "dump tracebacks of all threads", "thread stacks follow", "Stacks follow."
_ANNOUNCE = re.compile(r"\b(?:[Dd]ump(?:ing|s)?\b[\w ]{0,30}?\b(?:stack|traceback|thread)s?\b"
                       r"|(?:[Ss]tack|[Tt]raceback)s? (?:traces? )?follow\b)")


def _announce(m: re.Match[str], seg: Segment) -> bool:
    """A rank's own line announcing the stack dump below it: its rank is the dump's."""
    if seg.rank is not None and _ANNOUNCE.search(seg.body):
        seg.file.caption = (seg.rank, seg.source.line)
    return False


RULES = [Rule("section.dump_caption", r"[Dd]ump(?:ing|s)? |[Ss]tacks follow|[Tt]racebacks follow|[Ss]tack traces follow", _announce),
         Rule("section.caption", r"[Rr]ank ?#?\d{1,5}(?:'s)?(?: [A-Za-z -]{1,30})?:\s*$", _caption)]
