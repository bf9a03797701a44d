"""A stall inspector's list block: a header line, then one ``N: [name, name, ...]`` line per rank.

Horovod prints ``Missing ranks:`` (``Stalled ranks:`` before 0.21) and below it each rank that
has not submitted some tensors, with their names. On a Slurm job whose output carries
``srun --label`` task ids, ``0: [HorovodBroadcast_x, ...]`` reads like a task label ``0: ``
before the text; inside the list it is the list's own rank. This rule keeps the block's
context and gives such a line its body back, so that the catalog fingerprint (presence
``missing``) reads the rank the list names, and the line is not said to be that rank's.
"""

from __future__ import annotations

import re

from detectors.parsers.base import Rule, Segment

__all__ = ["RULES"]

GAP = 2  # lines (blank or wrapped) allowed between the header and an entry, or between entries


def _head(m: re.Match[str], seg: Segment) -> bool:
    seg.file.stall_list = seg.source.line
    return False


def _entry(m: re.Match[str], seg: Segment) -> bool:
    last = getattr(seg.file, "stall_list", None)  # a FileState pickled by an older version lacks it
    if last is None or not 0 < seg.source.line - last <= GAP:
        return False
    seg.file.stall_list = seg.source.line
    entry = seg.raw[m.start():].rstrip()
    if not seg.body.startswith(entry[: m.end() - m.start()]):
        # the list's rank was read as a task label: the line is the list's, not that rank's
        seg.body = entry
        if seg.rank_from == "prefix" and seg.pre.rank == int(m.group("n")):
            seg.rank, seg.rank_from = None, None
    return False


HEAD_RULE = Rule("stall_list.head", r"(?:Missing|Stalled) ranks:\s*$", _head)
ENTRY_RULE = Rule("stall_list.entry", r"(?P<n>\d{1,6})!?: \[[^\s,\[\]]*[_./][^\s,\[\]]*(?:\]|, | \.\.\.)", _entry,
                  on_raw=True)
RULES = [HEAD_RULE, ENTRY_RULE]
