"""Python's own warning lines (``warnings.showwarning``): ``path.py:58: FutureWarning: message``,
then the source line the warning points at, indented (``  with autocast(dtype=torch.bfloat16):``).
That echoed line is the program's code, not a traceback frame and no failure: no fingerprint may
read it (a bf16 autocast call a deprecation warning quotes is no autocast that raised). The
header's line number is kept in the file's state, so the next line is known wherever a chunk ends."""

from __future__ import annotations

import re

from detectors.parsers.base import Rule, Segment

__all__ = ["RULES", "is_warning_source"]

_HEADER = re.compile(r"\S+\.py:\d{1,7}: [A-Z][A-Za-z]{0,40}Warning: ")


def _header(m: re.Match[str], seg: Segment) -> bool:
    if _HEADER.search(seg.body) is not None:
        seg.file.warning_source = seg.source.line + 1
    return False


def is_warning_source(seg: Segment) -> bool:
    """Whether this line is the source line a Python warning just above it quoted."""
    # (a FileState pickled by an older version lacks warning_source)
    return getattr(seg.file, "warning_source", None) == seg.source.line and seg.raw[:1].isspace()


RULES = [Rule("pywarnings.header", r"\.py:[0-9]{1,7}: [A-Z][A-Za-z]{0,40}Warning: ", _header)]
