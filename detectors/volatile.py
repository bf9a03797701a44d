"""The digest of a line up to its times of day and decimals, without a regex per line.

``LogParser.parse_chunk`` skips a context-only candidate line (a DeepSpeed logger header, a
timer line) that repeats an earlier line of its file once its volatile parts — times of
day, decimals, dates (``VOLATILE``) — are replaced by ``#``; the key is the CRC-32 of that
text. A noisy job has ~30,000 such lines per 100 MB, each with a dozen numbers, and the
substitution cost ~4.5 µs a line.

``digest(line)`` returns exactly ``zlib.crc32(VOLATILE.sub(b"#", line))``, cheaper for lines
whose layout was seen before. ``VOLATILE`` tests digits only as a class (``\\d``) beside
literal separators, so where it matches depends only on the line with every digit replaced
by one placeholder byte (its *layout*, one ``bytes.translate``). The substituted text is then
the layout's text outside the matches with the digits of the line there: the layout gives,
once, the spans of those remaining digit runs (a *plan*), and a line is known by its layout
and the digits in those spans. Both caches hold pure functions of their keys, are bounded,
and are never part of any state: a line they do not hold takes the substitution.
"""

from __future__ import annotations

import re
import zlib

__all__ = ["VOLATILE", "digest"]

# (written as r"\d\d:\d\d:\d\d(?:[.,]\d+)?|\d+(?:[-.,]\d+)+" with the leading digit factored out, which
# lets re skip to the next digit: ~3x faster)
VOLATILE = re.compile(rb"\d(?:\d:\d\d:\d\d(?:[.,]\d+)?|\d*(?:[-.,]\d+)+)")
_HOLE = b"\x00"  # the placeholder of a digit in a layout; a line holding it takes the substitution
_TO_HOLES = bytes.maketrans(b"0123456789", _HOLE * 10)
_VOLATILE_LAYOUT = re.compile(rb"\x00(?:\x00:\x00\x00:\x00\x00(?:[.,]\x00+)?|\x00*(?:[-.,]\x00+)+)")
_HOLE_RUN = re.compile(rb"\x00+")
MAX_CACHED = 4096  # layouts, and (layout, digits) keys, remembered per process

_plans: dict[bytes, tuple[tuple[int, int], ...]] = {}
_digests: dict[tuple[bytes, tuple[bytes, ...]], int] = {}


def _plan(layout: bytes) -> tuple[tuple[int, int], ...]:
    """The spans of the digit runs that ``VOLATILE`` leaves in a line of this layout."""
    out: list[tuple[int, int]] = []
    pos = 0
    for m in _VOLATILE_LAYOUT.finditer(layout):
        out.extend(r.span() for r in _HOLE_RUN.finditer(layout, pos, m.start()))
        pos = m.end()
    out.extend(r.span() for r in _HOLE_RUN.finditer(layout, pos))
    return tuple(out)


def digest(line: bytes) -> int:
    """``zlib.crc32(VOLATILE.sub(b"#", line))``."""
    if _HOLE in line:
        return zlib.crc32(VOLATILE.sub(b"#", line))
    layout = line.translate(_TO_HOLES)
    plan = _plans.get(layout)
    if plan is None:
        if len(_plans) >= MAX_CACHED:
            return zlib.crc32(VOLATILE.sub(b"#", line))
        plan = _plans[layout] = _plan(layout)
    key = (layout, tuple([line[a:b] for a, b in plan]))
    d = _digests.get(key)
    if d is None:
        d = zlib.crc32(VOLATILE.sub(b"#", line))
        if len(_digests) < MAX_CACHED:
            _digests[key] = d
    return d
