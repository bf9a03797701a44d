"""Follow every file matching the globs, across rotation, truncation and deletion.

Failure model (what is guaranteed, what can be lost):
- The periodic glob rescan is the source of truth; inotify events only make it happen
  sooner. A file is identified by (device, inode, fingerprint of its first bytes), so a
  recreated path, a reused inode and a rotated copy are told apart.
- rename+create rotation: the old file is read to its end through the open descriptor
  before the new one is opened. No loss, no duplicate. A file renamed to a name the
  globs also match is the same open file (found by its inode): followed, not re-read.
- a rotated copy that reappears under a matching name (``train.log.1``, copytruncate's
  copy) is recognised by its fingerprint and continued from where the original was, not
  re-read.
- copytruncate / truncate-in-place: detected when the size drops below the read offset,
  when the file is shorter than the head fingerprinted when it was opened (a log only
  grows), or when the file's first bytes changed (rewritten past our offset; checked by a
  rescan when size or mtime changed, and before reading new bytes); reading restarts
  at 0 as a new generation. A file truncated and rewritten with byte-identical first
  256 bytes past the old offset between two rescans cannot be told from an append (no
  tailer can; inotify hints narrow the window). Bytes written after the last read and
  before the truncation cannot be read by anyone: their count is added to
  ``dropped["truncated"]`` (the loss window), and the rank is marked restarted.
- deletion: the open descriptor is read to its end, then closed. No loss.
- a file that left the globs and was closed but still exists (renamed) is remembered by
  identity and final offset (the last ``MAX_CLOSED_RECORDS``), so if it reappears under a
  matching name — a rename that raced with the glob listing, or one done while the
  daemon was down — it is continued, not read again. A deleted file is not remembered:
  a new file may reuse its inode.
- what a file is, is decided as ``diagnose`` decides it (``detectors.filekind``): archives,
  checkpoints and other non-logs by name, binary files by their first bytes, are never read
  as lines (said in the report's notes, as ``diagnose`` says it; not a loss); torchrun's ``error.json``
  (found next to a followed ``attempt_N/<local_rank>/`` log even when the globs name only
  ``*.log``) is read whole once it is complete JSON, and becomes the same events as offline.
- lines longer than ``max_line`` are cut (``dropped["line_too_long"]``); invalid UTF-8
  and NULs never stop reading.
- A checkpoint records, per file, its identity (with the length of the fingerprinted
  head) and the last offset that ends a line (or, inside a line longer than
  ``max_line`` whose head was handed on, the offset and a flag to skip to its end), so
  a restart resumes exactly there (no loss, no duplicate), also for a file renamed
  while the daemon was down. Files that left the globs are read to their end before a
  checkpoint is taken; what is written to a file that leaves the globs while the
  daemon is down is lost (nobody can find it).
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import stat
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from detectors.engine import Engine
from detectors.events import Event
from detectors.filekind import ERROR_JSON, Kind, binary_head, classify, error_json_events
from detectors.parse import LogParser
from detectors.parsers.base import FileState, JobParseState
from monitor.inputs import path_ranks
from monitor.reader import ChunkReader

__all__ = ["FileTail", "Identity", "Tailer", "glob_base"]

HEAD_BYTES = 256
MAX_CLOSED_RECORDS = 1024  # identities of closed files kept to recognise them if they reappear


@dataclass(frozen=True, slots=True)
class Identity:
    dev: int
    ino: int
    head: str  # sha1 of the first bytes read so far (up to HEAD_BYTES)
    head_len: int


def _head(path_or_fd: Any, n: int = HEAD_BYTES) -> tuple[str, int]:
    try:
        if isinstance(path_or_fd, int):
            data = os.pread(path_or_fd, n, 0)
        else:
            with open(path_or_fd, "rb") as fh:
                data = fh.read(n)
    except OSError:
        return "", 0
    return hashlib.sha1(data).hexdigest(), len(data)


def glob_base(pattern: str) -> str:
    """The directory part of a glob before its first wildcard (display paths are relative to it)."""
    parts = Path(pattern).parts
    base: list[str] = []
    for p in parts:
        if any(c in p for c in "*?["):
            break
        base.append(p)
    if len(base) == len(parts):
        base = base[:-1]
    return str(Path(*base)) if base else "."


@dataclass
class FileTail:
    path: str
    display: str
    fd: int
    identity: Identity
    fstate: FileState
    reader: ChunkReader
    offset: int = 0  # bytes consumed from the file
    generation: int = 0
    deleted: bool = False
    last_size: int = 0
    last_mtime: int = 0  # st_mtime_ns at the last rescan
    kind: Kind = Kind.LOG  # LOG: lines; ERROR_JSON: read whole when complete; SKIP: binary, never read
    done: bool = False  # an error.json already turned into events

    @property
    def resumable(self) -> int:
        """Offset of the end of the last complete line handed on."""
        return self.offset - len(self.reader._carry)


@dataclass
class TailStats:
    lines: int = 0
    bytes: int = 0
    rotations: int = 0
    truncations: int = 0
    deletions: int = 0
    restarts: Counter[int] = field(default_factory=Counter)  # rank → restarts seen
    dropped: Counter[str] = field(default_factory=Counter)


class Tailer:
    def __init__(
        self,
        patterns: list[str],
        parser: LogParser,
        sink: Callable[[list[Event]], None],
        max_files: int = 4096,
        max_line: int = 1 << 20,
        chunk: int = 8 << 20,
        year: int = 1970,
        engine: Engine | None = None,
    ) -> None:
        self.patterns = patterns
        self.parser = parser
        self.engine: Engine | None = None
        self.sink = sink
        self.max_files = max_files
        self.max_line = max_line
        self.chunk = chunk
        self.year = year
        self.tails: dict[str, FileTail] = {}
        self.draining: list[FileTail] = []  # rotated or deleted files still being read
        self.stats = TailStats()
        self.job_parse = JobParseState()
        self.known: dict[str, tuple[int, int, int]] = {}  # head sha → (offset, lines, generation) of files we read
        self.resume: dict[str, dict[str, Any]] = {}  # from a checkpoint: path → record
        self.skipped: dict[str, tuple[int, int, str]] = {}  # path → (dev, ino, why): not a log, never parsed
        self.closed_notes: list[str] | None = None
        if engine is not None:
            self.attach(engine)

    def attach(self, engine: Engine) -> None:
        """Parse with ``engine``'s parser and open files through ``engine.open_file`` (which
        notes that a rank's log exists, as ``diagnose`` does): the one engine both paths drive."""
        self.engine = engine
        self.parser = engine.parser
        self.job_parse = engine.job_parse

    def notes(self) -> list[str]:
        """What ``diagnose`` would say about these files: skipped ones, empty ones (after
        ``close``, as they were last seen)."""
        if self.closed_notes is not None:
            return list(self.closed_notes)
        out = [f"skipped {self._display(p)}: {why}" for p, (_, _, why) in sorted(self.skipped.items())]
        out += [f"{t.display} is empty" for t in sorted(self.tails.values(), key=lambda t: t.display)
                if t.kind is Kind.LOG and not t.offset and not t.generation]
        return out

    # ----------------------------------------------------------------- discovery
    def _display(self, path: str) -> str:
        for pat in self.patterns:
            base = glob_base(pat)
            try:
                return str(Path(path).relative_to(base)) if base != "." else path
            except ValueError:
                continue
        return path

    def scan_paths(self) -> dict[str, os.stat_result]:
        """Regular files matching the globs now, with their stat (one stat per file), and the
        ``error.json`` of every torchrun ``attempt_N/<local_rank>/`` folder a match lies in."""
        found: dict[str, os.stat_result] = {}
        attempt_dirs: set[str] = set()
        for pat in self.patterns:
            for p in glob.iglob(pat, recursive=True):
                p = os.path.normpath(p)
                if p in found:
                    continue
                try:
                    st = os.stat(p)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode):
                    found[p] = st
                    if path_ranks(p)[2] is not None:
                        attempt_dirs.add(os.path.dirname(p))
        for d in attempt_dirs:
            p = os.path.join(d, ERROR_JSON)
            if p not in found:
                with contextlib.suppress(OSError):
                    st = os.stat(p)
                    if stat.S_ISREG(st.st_mode):
                        found[p] = st
        return dict(sorted(found.items()))

    def rescan(self) -> None:
        """Reconcile open files with what the globs match now."""
        stats = self.scan_paths()
        # a path that no longer holds the file we follow: the file was renamed (maybe to a
        # name the globs match: found again below by its inode, which cannot be reused
        # while we hold it open), rotated (the path holds a new file) or deleted
        left: dict[tuple[int, int], FileTail] = {}
        next_gen: dict[str, int] = {}
        for path, tail in list(self.tails.items()):
            st = stats.get(path)
            if st is not None and (st.st_dev, st.st_ino) == (tail.identity.dev, tail.identity.ino):
                continue
            del self.tails[path]
            left[(tail.identity.dev, tail.identity.ino)] = tail
            if st is not None:
                self.stats.rotations += 1
                next_gen[path] = tail.generation + 1
        held = {(t.identity.dev, t.identity.ino) for t in self.tails.values()}
        draining = {(t.identity.dev, t.identity.ino): t for t in self.draining}
        for path, st in stats.items():
            found = self.tails.get(path)
            skip = self.skipped.get(path)
            if skip is not None and skip[:2] == (st.st_dev, st.st_ino):
                continue  # not a log (said once)
            if found is not None:
                tail = found
            else:
                ident = (st.st_dev, st.st_ino)
                moved = left.pop(ident, None) or draining.pop(ident, None)
                if moved is not None:  # renamed to a matching name: the same file, same offset
                    if moved in self.draining:
                        self.draining.remove(moved)
                    moved.path, moved.deleted = path, False
                    self.tails[path] = tail = moved
                    held.add(ident)
                elif ident in held:
                    continue  # another name (hard link) of a file we already follow
                elif len(self.tails) >= self.max_files:
                    self.stats.dropped["max_files"] += 1
                    continue
                else:
                    self._open(path, st, generation=next_gen.get(path, 0))
                    continue
            # the head is compared only when the file changed (size or mtime): a quiet file costs one stat
            changed = st.st_size != tail.last_size or st.st_mtime_ns != tail.last_mtime
            if st.st_size < tail.offset or (changed and self._rewritten(tail)):
                self._truncated(tail, st.st_size)
            tail.last_size, tail.last_mtime = st.st_size, st.st_mtime_ns
        # what left the globs is read to its end through the open descriptor, then closed
        for tail in left.values():
            if tail.path not in stats:
                tail.deleted = True
                self.stats.deletions += 1
            self.draining.append(tail)

    @staticmethod
    def _rewritten(tail: FileTail) -> bool:
        """Truncated and rewritten since we read its head: the head changed."""
        if not tail.identity.head_len or not tail.offset:
            return False  # nothing read yet: whatever is there now is what we will read
        head, n = _head(tail.fd, tail.identity.head_len)
        # a log only grows: one now shorter than the head we fingerprinted was truncated, even
        # when it was rewritten past our offset (the size check alone misses that)
        return n < tail.identity.head_len or head != tail.identity.head

    def _regenerated(self, tail: FileTail) -> int | None:
        """The file's size if it was truncated or rewritten since we last looked, else None."""
        try:
            size = os.fstat(tail.fd).st_size
        except OSError:
            return None
        return size if size < tail.offset or self._rewritten(tail) else None

    def _open(self, path: str, st: os.stat_result, generation: int = 0) -> None:
        display = self._display(path)
        kind, why = classify(display)
        if kind is Kind.SKIP:
            self.skipped[path] = (st.st_dev, st.st_ino, why)
            return
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            self.stats.dropped["open_failed"] += 1
            return
        self.skipped.pop(path, None)  # the path holds another file now: judged again
        head, head_len = _head(fd)
        ident = Identity(st.st_dev, st.st_ino, head, head_len)
        rank, local, attempt = path_ranks(display)
        if self.engine is not None:
            fstate = self.engine.open_file(display, rank=rank, local_rank=local, attempt=attempt, year=self.year)
        else:
            fstate = FileState(path=display, rank=rank, local_rank=local, attempt=attempt, year=self.year, job=self.job_parse)
        tail = FileTail(path, display, fd, ident, fstate, ChunkReader(max_line=self.max_line), generation=generation,
                        kind=kind)
        rec = self._resume_record(path, fd, ident, st.st_size)
        if rec is not None:
            self._seek(tail, rec["offset"], rec["lines"], rec.get("generation", 0))
            tail.reader._skipping = bool(rec.get("skipping"))  # inside an over-long line already handed on
            if rec.get("fstate") is not None:
                tail.fstate = rec["fstate"]
                tail.fstate.job = self.job_parse
        elif head and head_len == HEAD_BYTES and head in self.known:
            # a rotated copy of a file we already read (train.log.1, copytruncate's copy)
            off, lines, gen = self.known[head]
            self._seek(tail, min(off, st.st_size), lines, gen)
        self.tails[path] = tail

    def _resume_record(self, path: str, fd: int, ident: Identity, size: int) -> dict[str, Any] | None:
        """The checkpoint record of this file: under its path, else under another path
        (renamed while we were away). A record matches when device, inode and the
        fingerprint of the first ``head_len`` bytes *recorded then* match, and the file
        is not shorter than the recorded offset. Records that match nothing are kept."""
        keys = [path] if path in self.resume else []
        keys += [p for p, r in self.resume.items() if p != path and (r["dev"], r["ino"]) == (ident.dev, ident.ino)]
        for key in keys:
            rec = self.resume[key]
            if (rec["dev"], rec["ino"]) != (ident.dev, ident.ino) or rec["offset"] > size:
                continue
            n = rec.get("head_len")
            head = ident.head if n is None or n == ident.head_len else _head(fd, n)[0]
            if head == rec["head"]:
                return self.resume.pop(key)
        return None

    @staticmethod
    def _seek(tail: FileTail, offset: int, lines: int, generation: int) -> None:
        tail.offset = offset
        tail.reader.lines_done = lines
        tail.generation = generation

    def _truncated(self, tail: FileTail, size: int) -> None:
        self.stats.truncations += 1
        lost = max(0, tail.last_size - tail.offset)
        if lost:
            self.stats.dropped["truncated"] += lost
        rank = tail.fstate.rank if tail.fstate.rank is not None else tail.fstate.local_rank
        if rank is not None:
            self.stats.restarts[rank] += 1
        self._flush(tail)
        tail.offset = 0
        tail.generation += 1
        tail.reader = ChunkReader(max_line=self.max_line)
        tail.fstate = FileState(path=tail.display, rank=tail.fstate.rank, local_rank=tail.fstate.local_rank,
                                attempt=tail.fstate.attempt, year=self.year, job=self.job_parse)
        tail.identity = Identity(tail.identity.dev, tail.identity.ino, "", 0)
        tail.last_size = size

    # ----------------------------------------------------------------- reading
    def _emit(self, tail: FileTail, buf: bytes, first: int, *, count: bool = True) -> None:
        if not buf:
            return
        if count:
            self.stats.lines += buf.count(b"\n")
        events = (self.engine.parse if self.engine is not None else self.parser.parse_chunk)(buf, first, tail.fstate)
        if events:
            if tail.generation:
                for ev in events:  # a truncated, rewritten file: its lines are new (new MQTT ids)
                    ev.data["generation"] = tail.generation
            self.sink(events)

    def _flush(self, tail: FileTail) -> None:
        buf, first = tail.reader.flush()
        self._emit(tail, buf, first)
        tail.offset = tail.resumable if not tail.reader._carry else tail.offset

    def _read_error_json(self, tail: FileTail) -> int:
        """An ``error.json`` is written once, as a whole: read it when it has grown, turn it
        into events when it is complete JSON (torchrun may still be writing it)."""
        if tail.done:
            return 0
        try:
            size = os.fstat(tail.fd).st_size
            if size <= tail.offset:
                return 0
            raw = os.pread(tail.fd, size, 0)
        except OSError:
            self.stats.dropped["read_error"] += 1
            return 0
        self.stats.bytes += len(raw) - tail.offset
        tail.offset = len(raw)
        events = error_json_events(self.parser, raw, tail.fstate)
        if events is not None:
            tail.done = True
            self.stats.lines += 1
            if events:
                self.sink(events)
        return len(raw)

    def read(self, tail: FileTail, budget: int | None = None) -> int:
        """Read what was appended (up to ``budget`` bytes). Returns bytes read."""
        if tail.kind is Kind.ERROR_JSON:
            return self._read_error_json(tail)
        if tail.kind is Kind.SKIP:
            return 0
        budget = budget or self.chunk
        total = 0
        start = tail.offset
        before_trunc = tail.reader.truncated_lines
        while total < budget:
            try:
                data = os.pread(tail.fd, min(self.chunk, budget - total), tail.offset)
            except OSError:
                self.stats.dropped["read_error"] += 1
                break
            if not data:
                break
            if total == 0 and self._rewritten(tail):
                # truncated and rewritten past our offset since the last rescan (a poll can
                # come first): these bytes belong to a new generation, which starts at 0
                self._truncated(tail, os.fstat(tail.fd).st_size)
                continue
            if tail.offset == 0 and binary_head(data):
                tail.kind = Kind.SKIP  # as diagnose: a binary file is skipped, never parsed
                self.skipped[tail.path] = (tail.identity.dev, tail.identity.ino, "binary or not a log")
                break
            tail.offset += len(data)
            total += len(data)
            buf, first = tail.reader.feed(data)
            self._emit(tail, buf, first)
        if total:
            # a tqdm bar rewrites its line with \r until the epoch ends: its finished updates
            # (the postfix's loss=nan) are parsed now, not at the epoch's newline
            seg, seg_line = tail.reader.segments()
            self._emit(tail, seg, seg_line, count=False)
            self.stats.bytes += total
            if tail.identity.head_len < HEAD_BYTES or not start:
                # the fingerprint of what we read (a head taken at open may predate a rewrite)
                head, n = _head(tail.fd)
                tail.identity = Identity(tail.identity.dev, tail.identity.ino, head, n)
            if tail.identity.head_len == HEAD_BYTES:
                self.known[tail.identity.head] = (tail.resumable, tail.reader.lines_done, tail.generation)
        cut = tail.reader.truncated_lines - before_trunc
        if cut:
            self.stats.dropped["line_too_long"] += cut
        return total

    def poll(self, budget_per_file: int | None = None) -> int:
        """One turn over every file (fair: a flood in one file cannot starve the others)."""
        total = 0
        for tail in list(self.tails.values()):
            total += self.read(tail, budget_per_file)
        for tail in list(self.draining):
            n = self.read(tail, budget_per_file)
            total += n
            size = self._regenerated(tail) if n == 0 else None
            if size is not None:
                # truncated (and maybe rewritten) since the last rescan, then it left the globs
                self._truncated(tail, size)
                total += 1  # not finished: read the new generation on the next turn
            elif n == 0:
                self._flush(tail)
                self._remember_closed(tail)
                os.close(tail.fd)
                self.draining.remove(tail)
        return total

    def lag_bytes(self) -> int:
        lag = 0
        for tail in [*self.tails.values(), *self.draining]:
            with contextlib.suppress(OSError):
                lag += max(0, os.fstat(tail.fd).st_size - tail.offset)
        return lag

    def close(self) -> None:
        self.closed_notes = self.notes()
        for tail in [*self.tails.values(), *self.draining]:
            with contextlib.suppress(OSError):
                os.close(tail.fd)
        self.tails.clear()
        self.draining.clear()

    # ----------------------------------------------------------------- checkpoints
    def _remember_closed(self, tail: FileTail) -> None:
        """A file read to its end and closed may reappear (a rename raced with the glob
        listing, or it was renamed while we were down): keep its identity and final
        offset as a resume record, so it is continued, not read again. Bounded."""
        try:
            if os.fstat(tail.fd).st_nlink == 0:
                return  # deleted: it cannot reappear (a new file may reuse the inode: not this one)
        except OSError:
            return
        self.resume[f"{tail.path}#closed-{tail.identity.dev}-{tail.identity.ino}"] = self._record(tail)
        closed = [k for k in self.resume if "#closed-" in k]
        for k in closed[: max(0, len(closed) - MAX_CLOSED_RECORDS)]:
            del self.resume[k]

    @staticmethod
    def _record(t: FileTail) -> dict[str, Any]:
        return {
            "dev": t.identity.dev, "ino": t.identity.ino, "head": t.identity.head,
            "head_len": t.identity.head_len, "offset": t.resumable, "lines": t.reader.lines_done,
            "skipping": t.reader._skipping, "generation": t.generation, "fstate": t.fstate,
        }

    def positions(self) -> dict[str, dict[str, Any]]:
        """Per followed path: identity and the offset just past the last complete line.

        Files that left the globs (rotated away, deleted) are first read to their end:
        after a restart nobody could find them again, so no checkpoint may leave part
        of them unread. The sink sees those lines before this returns, so engine state
        saved after this call includes them.
        """
        self.rescan()
        for tail in list(self.draining):
            while True:
                while self.read(tail):
                    pass
                size = self._regenerated(tail)
                if size is None:
                    break
                self._truncated(tail, size)
            self._flush(tail)
            self._remember_closed(tail)
            os.close(tail.fd)
            self.draining.remove(tail)
        return {path: self._record(t) for path, t in self.tails.items()}
