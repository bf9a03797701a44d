"""A rank's own note that it caught an error and skipped a batch or step and went on.

Training loops wrap a step in ``try``/``except`` and go on with the next batch
(``skipping bad batch at step 33: Expected input batch_size (8) to match target batch_size (7)``,
``Skipping batch due to: ...``, fairseq's and many scripts' ``| WARNING: ran out of memory, skipping
this batch``). In a data-parallel job the rank that skipped left out the collectives of that step
(its backward's all-reduces, a metric's reduce) while its peers ran them: from then on the ranks
wait in different collectives, and the job ends in collective timeouts on every rank
(pytorch/pytorch#44353: "If you skip comm or redo comm after OOM, it will lead to collective
communication desync, which leads to the hang"). The note is kept (a CONTEXT ``skipped_batch``
event: its rank and arrival order) for ``correlate.hang``, which names the one rank that skipped
when every rank timed out; on its own it is no failure. A loss scaler's overflow skip (every rank
skips that step together, by design) is not such a note.
"""

from __future__ import annotations

import re

from detectors.model import EventKind
from detectors.parsers.base import Rule, Segment

__all__ = ["RULES"]

# a dynamic loss scaler's skipped step ("OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536"),
# a non-finite value the loop skips on purpose (every rank sees the all-reduced value alike), or a
# collective's timeout the loop swallowed (the desync's consequence on a waiting rank, not its cause)
_NOT_OWN = re.compile(r"(?i)overflow|loss[ _-]?scal|\bnan\b|\binf\b|non-?finite|timed?[ _-]?out")


def _skipped(m: re.Match[str], seg: Segment) -> bool:
    if not _NOT_OWN.search(seg.body):
        seg.emit(EventKind.CONTEXT, data={"key": "skipped_batch", "value": seg.body[m.start():m.start() + 200]})
    return False  # the line may still match a failure's fingerprint (an OOM, a timeout it swallowed)


# "skipping bad batch at step 33: <the error>", "Skipping batch due to: <the error>", "skipping this
# batch because ...", "ran out of memory, skipping this batch": one skip, with its reason after it or
# before it (a plural is a count: Megatron's "number of skipped iterations: 0" is no skip)
RULES = [Rule("skips.skipped_batch",
              r"[Ss]kip(?:ping|ped)? (?:(?:this|the|a|bad|current|invalid|broken|corrupt(?:ed)?) ){0,2}"
              r"(?:batch|step|iteration|micro-?batch)\b(?:[^:\n]{0,40}(?:: ?\S|\bdue to\b|\bbecause\b)|\.?[ \t]*\r?$)",
              _skipped)]
