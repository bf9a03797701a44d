"""Model-based test of the tailer (after vector's file-source model test).

A Hypothesis ``RuleBasedStateMachine`` writes to real files — whole lines, partial lines,
rename rotation (to a name the glob matches or not), copytruncate, truncate-and-rewrite,
deletion, recreation — while a ``Tailer`` is driven step by step (``rescan()``,
``poll()``) and restarted from its own checkpoint (``positions()`` → a new ``Tailer``
with ``.resume``, exactly as the daemon's ``save``/``restore`` do). Every line carries a
unique step number, so the events that reach the sink say exactly which lines were read.

The model is what any correct reader can promise, independent of how the tailer works:

- every complete line is delivered exactly once (never twice, never one that was not
  written), except
- a line that no reader had a chance to read: written and then truncated away before a
  poll read it (the truncation loss window, counted in ``dropped["truncated"]`` and
  never over-counted), or in a file that left the glob (deleted, renamed out) while no
  tailer had it open (after a restart, before the next rescan).

A line is "read" once a ``poll`` ran while the tailer had its file open; a file is open
once a ``rescan`` saw it at a matching path, and stays open across renames and deletion
(the descriptor is held) until a restart.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from detectors.events import Event, EventKind
from detectors.parse import default_parser
from monitor.tailer import Tailer

NAMES = ("rank0.log", "rank1.log")


@dataclass
class Line:
    token: int
    data: bytes
    read: bool = False


@dataclass
class MFile:
    """One file (one inode) as the model sees it."""

    lines: list[Line] = field(default_factory=list)  # complete lines of the current content
    pending: bytes = b""  # rest of a partially written line (its head is in the file)
    pending_line: tuple[int, bytes] | None = None  # (token, whole line) of that partial line
    open: bool = False  # the current tailer holds a descriptor for it
    regen: bool = False  # truncated since the last rescan that saw it open

    def unread(self) -> list[Line]:
        return [ln for ln in self.lines if not ln.read]


class TailerModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="rw-model-"))
        self.delivered: Counter[int] = Counter()
        self.tailer = self._new_tailer()
        self.active: dict[str, MFile] = {}  # writers append here
        self.archived: dict[str, MFile] = {}  # rotated to a name the glob matches
        self.detached: list[MFile] = []  # deleted or renamed out of the glob
        self.written: set[int] = set()
        self.allowed_loss: set[int] = set()
        self.window_bytes = 0  # bytes of lines lost to truncation windows
        self.counted = Counter[str]()  # dropped counters of tailers already restarted
        self.next_token = 1
        self.seq = 0

    # ------------------------------------------------------------------ plumbing
    def _new_tailer(self, resume: dict | None = None) -> Tailer:
        def sink(events: list[Event]) -> None:
            for ev in events:
                if ev.kind is EventKind.SAMPLE and ev.step is not None:
                    self.delivered[ev.step] += 1

        t = Tailer([str(self.dir / "*.log")], default_parser(), sink)
        if resume:
            t.resume = resume
        return t

    def _line(self, pad: int) -> tuple[int, bytes]:
        tok = self.next_token
        self.next_token += 1
        return tok, f"step {tok} | loss 1.0 | note {'x' * pad}\n".encode()

    def _append(self, name: str, data: bytes) -> None:
        with open(self.dir / name, "ab") as fh:
            fh.write(data)

    def _complete(self, name: str, f: MFile) -> None:
        """A writer finishes its partial line before rotating, truncating or deleting."""
        if f.pending_line is not None:
            self._append(name, f.pending)
            self._add(f, *f.pending_line)
            f.pending, f.pending_line = b"", None

    def _add(self, f: MFile, tok: int, data: bytes) -> None:
        f.lines.append(Line(tok, data))
        self.written.add(tok)

    def _leave_glob(self, f: MFile) -> None:
        if not f.open:  # no reader holds it: its unread lines cannot be read by anyone
            self.allowed_loss.update(ln.token for ln in f.unread())
        self.detached.append(f)

    def _matching(self) -> list[MFile]:
        return [*self.active.values(), *self.archived.values()]

    # ------------------------------------------------------------------ writers
    @initialize()
    def start(self) -> None:
        pass

    @rule(name=st.sampled_from(NAMES), n=st.integers(0, 4), pad=st.integers(0, 90),
          partial=st.none() | st.integers(1, 40))
    def write(self, name: str, n: int, pad: int, partial: int | None) -> None:
        f = self.active.get(name)
        if f is None:
            f = self.active[name] = MFile()  # created (or recreated after deletion / rotation)
        buf = b""
        if f.pending_line is not None:
            buf += f.pending
            self._add(f, *f.pending_line)
            f.pending, f.pending_line = b"", None
        for _ in range(n):
            tok, data = self._line(pad)
            buf += data
            self._add(f, tok, data)
        if partial is not None:
            tok, data = self._line(pad)
            cut = min(partial, len(data) - 1)
            buf += data[:cut]
            f.pending, f.pending_line = data[cut:], (tok, data)
        self._append(name, buf)

    @precondition(lambda self: self.active)
    @rule(data=st.data(), matching=st.booleans())
    def rotate(self, data: st.DataObject, matching: bool) -> None:
        """rename rotation: ``rank0.log`` → ``rank0.rN.log`` (matched) or ``rank0.log.N`` (not)."""
        name = data.draw(st.sampled_from(sorted(self.active)))
        f = self.active.pop(name)
        self._complete(name, f)
        self.seq += 1
        new = f"{name[:-4]}.r{self.seq}.log" if matching else f"{name}.{self.seq}"
        os.rename(self.dir / name, self.dir / new)
        if matching:
            self.archived[new] = f
        else:
            self._leave_glob(f)

    @precondition(lambda self: self.active or self.archived)
    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted([*self.active, *self.archived])))
        f = self.active.pop(name, None) or self.archived.pop(name)
        self._complete(name, f)
        (self.dir / name).unlink()
        self._leave_glob(f)

    @precondition(lambda self: self.active)
    @rule(data=st.data(), copy=st.booleans(), rewrite=st.integers(0, 6), pad=st.integers(0, 90))
    def truncate(self, data: st.DataObject, copy: bool, rewrite: int, pad: int) -> None:
        """copytruncate (a copy out of the glob, then truncate) or a relaunch that
        truncates and rewrites the same path (same inode), maybe past the old offset."""
        name = data.draw(st.sampled_from(sorted(self.active)))
        f = self.active[name]
        self._complete(name, f)
        path = self.dir / name
        if copy:
            self.seq += 1
            shutil.copyfile(path, self.dir / f"{name}.copy{self.seq}")
        lost = f.unread()
        self.allowed_loss.update(ln.token for ln in lost)
        self.window_bytes += sum(len(ln.data) for ln in lost)
        f.lines = []
        f.regen = True
        with open(path, "r+b") as fh:
            fh.truncate(0)
        buf = b""
        for _ in range(rewrite):
            tok, line = self._line(pad)
            buf += line
            self._add(f, tok, line)
        if buf:
            with open(path, "r+b") as fh:
                fh.write(buf)

    # ------------------------------------------------------------------ the reader
    @rule()
    def rescan(self) -> None:
        self.tailer.rescan()
        self._opened()

    def _opened(self) -> None:
        for f in self._matching():
            if f.open:
                f.regen = False  # a rescan notices a truncation of a file it follows
            f.open = True

    @rule()
    def poll(self) -> None:
        self.tailer.poll()
        self._mark_read()

    def _mark_read(self) -> None:
        """A poll reads every file the tailer holds, to its end. A truncation that left
        the file no longer than what was read is noticed by the next rescan, not by a
        poll (it would cost a stat per file per poll): until then its new lines are not
        counted as read."""
        for f in [*self._matching(), *self.detached]:
            if f.open and not f.regen:
                for ln in f.lines:
                    ln.read = True

    @rule()
    def sync(self) -> None:
        self.tailer.rescan()
        self._opened()
        while self.tailer.poll():
            pass
        self._mark_read()

    @rule()
    def restart(self) -> None:
        """What the daemon does: checkpoint (positions + kept records), stop, resume."""
        t = self.tailer
        positions = t.positions()
        for path, rec in t.resume.items():
            positions.setdefault(path, rec)
        # positions() rescans, then finishes rotated / deleted files: nobody could find
        # them again after the restart
        self._opened()
        for f in self.detached:
            if f.open:
                f.regen = False
                for ln in f.lines:
                    ln.read = True
        self.counted.update(t.stats.dropped)
        t.close()
        for f in [*self._matching(), *self.detached]:
            f.open = False
        self.tailer = self._new_tailer(positions)

    # ------------------------------------------------------------------ the oracle
    @invariant()
    def never_twice_never_invented(self) -> None:
        twice = sorted(tok for tok, n in self.delivered.items() if n > 1)
        assert not twice, f"lines delivered more than once: {twice}"
        invented = sorted(set(self.delivered) - self.written)
        assert not invented, f"lines delivered that were never written: {invented}"

    def teardown(self) -> None:
        try:
            if self.next_token > 1:
                self.sync()
                self.tailer.poll()  # closes drained files
                self.never_twice_never_invented()
                missing = sorted(self.written - self.allowed_loss - set(self.delivered))
                assert not missing, f"lines never delivered: {missing}"
                dropped = self.counted + Counter(self.tailer.stats.dropped)
                assert dropped["truncated"] <= self.window_bytes, "loss window over-counted"
                assert not (set(dropped) - {"truncated"}), dict(dropped)
        finally:
            self.tailer.close()
            shutil.rmtree(self.dir, ignore_errors=True)


TailerModel.TestCase.settings = settings(
    max_examples=150,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_tailer_against_model = TailerModel.TestCase
