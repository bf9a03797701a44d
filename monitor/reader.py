"""Bytes → complete lines, in large chunks, for the fast path.

``ChunkReader.feed(data)`` returns the longest prefix of what it holds that ends on a
newline (one bytes object, ready for one scan), and carries the partial last line to
the next call. ``flush()`` returns the carried rest at end of file.

``segments()`` is for a live reader: a tqdm bar rewrites one line with ``\r`` for a whole
epoch, so its postfix (``loss=nan``) would wait for the epoch's newline. It hands out the
complete ``\r``-segments of the carried line (as one pseudo-line with that line's number,
not counted as a line), and the line, when its newline comes, is handed out without them:
every byte is still parsed exactly once, only sooner.

Guarantees: any split of the same bytes into ``feed`` calls yields the same lines and
line numbers; no byte is lost except inside a line longer than ``max_line`` bytes,
whose head (``max_line`` bytes) is kept as the line and the rest is dropped and counted
in ``dropped_bytes`` / ``truncated_lines``.

``ChunkReader(count=False)`` leaves the counting of a handed chunk's lines to the caller,
who says the number with ``advance(n)`` before the next call (``flush`` counts its one line itself) (``diagnose`` takes it from
``LogParser.parse_chunk_counted``, which counts the newlines before its candidate lines
anyway: one pass over the bytes instead of two). A chunk not accounted for that way is
counted by the next call, so the line numbers never depend on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["ChunkReader"]


@dataclass(slots=True)
class ChunkReader:
    max_line: int = 1 << 20
    lines_done: int = 0  # complete lines handed out so far
    truncated_lines: int = 0
    dropped_bytes: int = 0
    _carry: bytearray = field(default_factory=bytearray)
    _skipping: bool = False  # inside the dropped tail of an over-long line
    _seg_done: int = 0  # bytes at the head of the carry already handed out by segments()
    count: bool = True  # False: the caller counts each chunk's lines and says so with advance()
    _uncounted: bytes | None = None  # the last chunk handed out, until advance() (count=False)

    def advance(self, lines: int) -> None:
        """The caller counted the lines of the chunk just handed out (``count=False``)."""
        if self._uncounted is None:
            raise RuntimeError("advance() without a chunk handed out uncounted")
        self._uncounted = None
        self.lines_done += lines

    def _settle(self) -> None:
        if self._uncounted is not None:
            self.lines_done += self._uncounted.count(b"\n")
            self._uncounted = None

    def segments(self) -> tuple[bytes, int]:
        """The complete ``\r``-segments of the carried line not handed out yet, as one
        pseudo-line ending in a newline, and that line's number (empty when none)."""
        self._settle()
        k = self._carry.rfind(b"\r", self._seg_done)
        if k < 0 or self._skipping:
            return b"", self.lines_done + 1
        out = bytes(self._carry[self._seg_done : k]) + b"\n"
        self._seg_done = k + 1
        return out, self.lines_done + 1

    def _take_carry(self) -> bytes:
        """The carried bytes not handed out by segments(), and an empty carry."""
        out = bytes(self._carry[self._seg_done :])
        self._carry.clear()
        self._seg_done = 0
        return out

    def feed(self, data: bytes) -> tuple[bytes, int]:
        """Return (complete lines, number of the first of them) — maybe empty."""
        self._settle()
        if self._skipping:
            nl = data.find(b"\n")
            if nl < 0:
                self.dropped_bytes += len(data)
                return b"", self.lines_done + 1
            self.dropped_bytes += nl
            data = data[nl + 1 :]
            self._skipping = False
        last = data.rfind(b"\n")
        if last < 0:
            self._carry += data
            if len(self._carry) > self.max_line:
                self._cut()
                return self._hand(self._take_carry())
            return b"", self.lines_done + 1
        # (one copy: the carry and the chunk's complete lines joined through a view, not sliced first)
        head = b"".join((self._take_carry(), memoryview(data)[: last + 1])) if self._carry else data[: last + 1]
        self._carry += data[last + 1 :]
        head = self._cap(head)
        if len(self._carry) > self.max_line:
            # the unterminated tail is already over the cap: emit its head, skip the rest
            self._cut()
            head += self._take_carry()
        return self._hand(head)

    def _cap(self, head: bytes) -> bytes:
        """Cut complete lines longer than ``max_line`` (linear: ``^`` only anchors at line starts)."""
        if len(head) <= self.max_line or not self._may_have_long_line(head):
            return head  # the common case, decided with a few dozen C-level finds per chunk
        rx = re.compile(rb"(?m)^[^\n]{%d}" % (self.max_line + 1))
        m = rx.search(head)
        if m is None:
            return head
        parts: list[bytes] = []
        pos = 0
        while m is not None:
            start = m.start()
            end = head.find(b"\n", start)
            if end < 0:
                end = len(head)
            parts.append(head[pos : start + self.max_line])
            self.dropped_bytes += end - start - self.max_line
            self.truncated_lines += 1
            pos = end
            m = rx.search(head, end)
        parts.append(head[pos:])
        return b"".join(parts)

    def _may_have_long_line(self, head: bytes) -> bool:
        """False when no line can be longer than ``max_line``.

        A line longer than ``max_line`` fully covers one of the windows of ``max_line // 2``
        bytes laid on a grid of that step, so if every such window holds a newline there is
        none. Cost: ``len(head) / (max_line / 2)`` finds instead of a scan of every line.
        """
        half = max(1, self.max_line // 2)
        find = head.find
        return any(find(b"\n", start, start + half) < 0 for start in range(0, len(head), half))

    def _cut(self) -> None:
        self.dropped_bytes += len(self._carry) - self.max_line
        del self._carry[self.max_line :]
        self._seg_done = min(self._seg_done, self.max_line)
        self._carry += b"\n"
        self.truncated_lines += 1
        self._skipping = True

    def _hand(self, out: bytes) -> tuple[bytes, int]:
        first = self.lines_done + 1
        if self.count:
            self.lines_done += out.count(b"\n")
        else:
            self._uncounted = out
        return out, first

    def flush(self) -> tuple[bytes, int]:
        """The unterminated last line, if any, as a complete line."""
        self._settle()
        first = self.lines_done + 1
        if not self._carry:
            return b"", first
        out = self._take_carry() + b"\n"
        self.lines_done += 1
        return out, first
