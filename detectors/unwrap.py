"""Rejoin lines that a terminal or a web form hard-wrapped at a fixed width.

Logs pasted into issues, chats and tickets are often copied from a terminal that wrapped
every long line at its width (120 or 170 columns), which splits the message a fingerprint
needs (``ProcessGroupNCCL'`` / ``s watchdog got stuck``). A file is taken to be hard-wrapped
when a single width ``W`` (at least 80) is also its longest line length and many long lines
have exactly that length; each line of length ``W`` that does not end in padding (two or
more spaces) is then
joined with the next one. Line numbers stay exact: the joined line keeps the first line's
number and an empty line takes the place of the continuation.

Pure and linear; ``diagnose`` applies it to pasted text and small files only (a live log
written by a process is never hard-wrapped).
"""

from __future__ import annotations

from collections import Counter

__all__ = ["MIN_WIDTH", "unwrap", "wrap_width"]

MIN_WIDTH = 80
_DIGITS = bytes.maketrans(b"123456789", b"000000000")


def wrap_width(lines: list[bytes]) -> int | None:
    """The width the text was hard-wrapped at, or None."""
    lengths = Counter(len(ln) for ln in lines if len(ln) >= 60)
    if not lengths:
        return None
    width = max(lengths)
    at = [ln for ln in lines if len(ln) == width]
    if width < MIN_WIDTH or len(at) < 3 or len(at) < 0.3 * sum(lengths.values()):
        return None
    if len({ln[:24] for ln in at}) == 1:
        return None  # fixed-width records (NCCL INFO tables), not wrapped text
    shapes = {ln.translate(_DIGITS) for ln in at}
    if len(shapes) == 1 or (len(at) >= 10 and len(shapes) <= len(at) // 10):
        # the same record with other numbers (DeepSpeed's "[date] ... [Rank 0] step=17, skipped=0,
        # lr=[1e-06], mom=[0.0]" every step): the longest line is a record, not a wrap width
        return None
    # wrapped, not cut: the line after a full-width one continues it (starts mid-word or
    # with punctuation) far more often than it starts a new record ("[rank1]:", a date)
    pairs = [(ln, lines[i + 1]) for i, ln in enumerate(lines[:-1]) if len(ln) == width]
    follows = [nxt for _, nxt in pairs]
    mid = sum(1 for cur, nxt in pairs
              if nxt[:1] and (nxt[:1].islower() or nxt[:1] in b".,;:)'\"-_/") and nxt[:8] != cur[:8])
    if mid < 0.5 * len(follows):
        return None  # excerpts cut at a fixed width: the rest of those lines is lost, not below
    return width


def unwrap(data: bytes) -> bytes:
    """``data`` with hard-wrapped lines rejoined (unchanged when it is not hard-wrapped)."""
    lines = data.split(b"\n")
    width = wrap_width([ln.rstrip(b"\r") for ln in lines])
    if width is None:
        return data
    out: list[bytes] = []
    i = 0
    while i < len(lines):
        cur = lines[i].rstrip(b"\r")
        fillers = 0
        # a full-width line continues on the next one, unless it ends in padding (2+ spaces)
        while len(cur) % width == 0 and cur and not cur.endswith(b"  ") and i + fillers + 1 < len(lines):
            nxt = lines[i + fillers + 1].rstrip(b"\r")
            cur += nxt
            fillers += 1
            if len(nxt) != width:
                break
        out.append(cur.rstrip(b" ") if fillers else lines[i])
        out.extend(b"" for _ in range(fillers))
        i += fillers + 1
    return b"\n".join(out)
