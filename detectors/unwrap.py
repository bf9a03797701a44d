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

A paste can also cut one line at no fixed width, in the middle of the very words a fingerprint
needs (``... cudaMalloc fail`` / ``ed: out of memory``, ``Resource exhausted: Out `` / ``of memory
while trying to allocate``). ``rejoin_cut`` joins such a pair only when the joined line matches a
catalog fingerprint that neither half matches (the caller's ``fingerprints``), so no line that
reads on its own is ever changed.

A paste can also carry markdown emphasis the reporter added (``**RuntimeError: CUDA out of
memory.** Tried to allocate ...``): ``unmark`` drops the ``**`` markers from a line only when the
line without them matches a catalog fingerprint that the line as pasted does not.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence

__all__ = ["MAX_CUT_PAIRS", "MIN_WIDTH", "rejoin_cut", "unmark", "unwrap", "wrap_width"]

MIN_WIDTH = 80
MIN_CUT_LINE = 40  # a paste cuts long lines only
MAX_CUT_PAIRS = 4096  # candidate pairs checked per text (bounded work on a large paste)
_NUMBER = re.compile(rb"[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_SPACES = re.compile(rb" {2,}")


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
    # (numbers of any width, runs of spaces of any length: "step   25 | loss 14.9655" and
    # "step  100 | loss 9.1" are one shape, a fixed-width metric line with its numbers padded)
    shapes = {_SPACES.sub(b" ", _NUMBER.sub(b"0", ln)) for ln in at}
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


def rejoin_cut(data: bytes, fingerprints: Callable[[Sequence[bytes]], list[frozenset[int]]]) -> bytes:
    """``data`` with each line that a paste cut mid-message rejoined to the next one.

    A candidate pair is a long line followed by one that starts with a lower-case letter (the
    rest of a word or phrase), or with one space and a lower-case letter (a word wrap); ``fingerprints(lines)`` gives, for each line, the ids of the
    catalog fingerprints it matches. The pair is joined (as it was: no space added) only when the
    joined line matches a fingerprint that neither line matches alone. Line numbers stay exact:
    the joined line keeps the first line's number and an empty line takes the continuation's.
    """
    lines = data.split(b"\n")
    pairs = [i for i in range(len(lines) - 1) if len(lines[i]) >= MIN_CUT_LINE and _continues(lines[i + 1])]
    if not pairs:
        return data
    pairs = pairs[:MAX_CUT_PAIRS]
    batch: list[bytes] = []
    for i in pairs:
        head = lines[i].rstrip(b"\r")
        batch += [head, lines[i + 1].rstrip(b"\r"), head + lines[i + 1].rstrip(b"\r")]
    ids = fingerprints(batch)
    out = list(lines)
    joined_into: set[int] = set()
    for k, i in enumerate(pairs):
        alone, cont, both = ids[3 * k], ids[3 * k + 1], ids[3 * k + 2]
        if i in joined_into or not (both - alone - cont):
            continue
        out[i] = batch[3 * k + 2]
        out[i + 1] = b""
        joined_into.add(i + 1)  # the continuation is gone: it starts no pair of its own
    return b"\n".join(out) if joined_into else data


def _continues(line: bytes) -> bool:
    """``line`` starts like the rest of a cut one: a lower-case word, or one space and then one
    (a paste word-wrapped at the space before it; never an indented line such as a traceback's),
    or an argument list's next cast or group ("(int)m, (int)n, ...": a C call wrapped after a comma)."""
    if line[:1] in (b" ", b"("):
        line = line[1:]
    return line[:1].islower() and line[:1].isalpha()


_MARK = b"**"


def _strip_marks(line: bytes) -> bytes:
    """``line`` without markdown's ``**`` emphasis markers (a ``**`` between two digits or two
    word characters, as in ``2**16`` or ``**kwargs`` after a name, is kept)."""
    out = bytearray()
    i, n = 0, len(line)
    while i < n:
        if line[i : i + 2] == _MARK:
            before = line[i - 1 : i] if i else b" "
            after = line[i + 2 : i + 3] or b" "
            if not (before.isalnum() and after.isalnum()):
                i += 2
                continue
        out.append(line[i])
        i += 1
    return bytes(out)


def unmark(data: bytes, fingerprints: Callable[[Sequence[bytes]], list[frozenset[int]]]) -> bytes:
    """``data`` with markdown emphasis dropped from the lines where that makes a fingerprint match
    (``fingerprints`` as for ``rejoin_cut``). Line numbers and every other line stay as they were."""
    if _MARK not in data:
        return data
    lines = data.split(b"\n")
    marked = [i for i, ln in enumerate(lines) if _MARK in ln][:MAX_CUT_PAIRS]
    batch: list[bytes] = []
    for i in marked:
        raw = lines[i].rstrip(b"\r")
        batch += [raw, _strip_marks(raw)]
    ids = fingerprints(batch)
    changed = False
    for k, i in enumerate(marked):
        raw_ids, plain_ids = ids[2 * k], ids[2 * k + 1]
        if plain_ids - raw_ids:
            lines[i] = batch[2 * k + 1]
            changed = True
    return b"\n".join(lines) if changed else data
