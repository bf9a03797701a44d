"""Several files pasted as one: the ``==> path <==`` headers of ``tail``/``head`` given many files.

``tail -n 50 logs/*/stderr.log`` (GNU coreutils, and busybox) prints each file under a header
line ``==> logs/none_x/attempt_0/1/stderr.log <==``. What the named path says about ranks
(``detectors.pathranks``: torchrun's ``attempt_N/<local_rank>/``, ``rank_3.log``, ...) holds
for the lines below it, up to the next header, exactly as it would for that file read on its
own; a header whose path names no rank gives the pasted file's own ranks back.
"""

from __future__ import annotations

import re

from detectors.parsers.base import Rule, Segment
from detectors.pathranks import path_ranks

__all__ = ["RULES"]


def _header(m: re.Match[str], seg: Segment) -> bool:
    line = seg.raw.strip()
    if not line.endswith(" <==") or not (line.startswith("==> ") or line.endswith(m.group(0))):
        return False  # the marker quoted inside another line
    # (a header glued after the text before it is the next file's: the file above ended without
    # its last newline, and a loop of ``echo "==> $f <=="; cat "$f"`` printed the header right on)
    f = seg.file
    own = getattr(f, "own_ranks", None)  # (a FileState pickled by an older version lacks it)
    if own is None:
        own = f.own_ranks = (f.rank, f.local_rank)
    rank, local, _ = path_ranks(m.group("path").strip())
    if rank is None and local is None:
        rank, local = own
    f.rank, f.local_rank = rank, local
    # a new file begins: nothing read in the one above goes on into it
    f.in_traceback = False
    f.cpp_cont = None
    f.summary_ctx_rank = None
    f.bare_step = None
    return True


RULES = [Rule("section.file_header", r"==> (?P<path>[^<>\n]{1,300}) <==", _header, on_raw=True)]
