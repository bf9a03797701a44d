"""Bytes of complete lines → events, through the fast path.

``LogParser.parse_chunk`` takes a chunk that ends on a line boundary, finds candidate
lines with one multi-pattern scan, and parses only those: split on ``\\r`` (tqdm), drop
progress bars, strip prefixes, resolve the rank, then run the rules that matched. Per
segment, in this order: the specialised parsers (launcher, metrics, context, NCCL rank
map), then — unless a launcher rule explained the line — the catalog fingerprints
(highest priority wins, one MATCH per segment), then — if nothing matched — the generic
exception rule.

Guarantees: never raises on any bytes (invalid UTF-8 is replaced, NULs are kept);
line numbers are exact (1-based, counted over the whole file by the caller's
``first_lineno``); the result depends only on the bytes and the ``FileState``.
"""

from __future__ import annotations

import itertools
import re
import zlib
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from detectors.catalog import Catalog, Entry, Fingerprint, load_catalog
from detectors.model import Event, EventKind, Source
from detectors.oddrank import (
    LOOKBACK_BYTES,
    LOOKBACK_LINES,
    last_own_lines,
    note_template,
    odd_rank,
    printed_before,
)
from detectors.parsers import (
    captions,
    context,
    exceptions,
    launcher,
    metrics,
    perf,
    progress,
    pywarnings,
    sections,
    skips,
    stall_list,
    workermap,
)
from detectors.parsers.base import FileState, Rule, Segment, annotate
from detectors.prefixes import bar_count, split_prefixes, split_progress_parts, year_bounds, year_of
from detectors.ranks import GLUED_RANK, message_rank, plausible, resolve_rank
from detectors.scanforms import FORMS
from detectors.scanner import NoiseRule, Scanner
from detectors.shapes import ShapeBook
from detectors.volatile import digest as volatile_digest

__all__ = ["MAX_EVIDENCE_CHARS", "LogParser", "default_parser"]

MAX_EVIDENCE_CHARS = 2000  # evidence text kept per line (the line itself is never lost for parsing)
# A candidate line that only context rules matched (a logger header, a config key) and that
# repeats an earlier line of its file up to its times of day and decimals (timestamps, timings)
# states no new fact: it is not parsed again. DeepSpeed prints its logger header on every line.
# (the line's key: detectors.volatile.digest, the CRC-32 of the line with VOLATILE parts made "#")
# terminal colour and style codes (loguru, colorlog, rich with force_terminal, kubectl logs of a
# TTY container): removed before the scan, so keys, values and rank tags read as plain text
# (also as pasted from a terminal that showed ESC as "^[": "^[[32m")
_ANSI = re.compile(rb"(?:\x1b|\^\[)\[[0-9;?]{0,32}[A-Za-z]")
_ANSI_STR = re.compile(r"(?:\x1b|\^\[)\[[0-9;?]{0,32}[A-Za-z]")
MAX_CONTEXT_SEEN = 256  # distinct context-only lines remembered per file
MAX_PRESENCE_PER_LINE = 64  # sync points read from one line (a pasted wall of tensors stays bounded)


# a line that says the operation failed and will be tried again: "retrying in 0.2s", "(attempt 1/5)",
# urllib3's "Retrying (Retry(total=4, ...))", torch's TCPStore "- retrying (try=0, ..."
_RETRYING = re.compile(r"\b[Rr]etrying\b|\bwill retry\b|\battempt \d+ ?(?:/|of) ?\d+")


@dataclass(slots=True)
class _FpRule:
    """A catalog fingerprint; its Python regex is compiled when a line first needs it (the scan
    finds the candidates: most of ~200 patterns never match a given job's lines, and compiling
    them all was ~20 ms of every start)."""

    entry: Entry
    fp: Fingerprint
    _regex: re.Pattern[str] | None = None

    @property
    def regex(self) -> re.Pattern[str]:
        if self._regex is None:
            self._regex = re.compile(self.fp.pattern)
        return self._regex


_SPECIAL: list[Rule] = [*launcher.RULES, *metrics.RULES, *perf.RULES, *context.RULES, exceptions.RANKMAP_RULE,
                        exceptions.BLOCK_RULE, exceptions.NCCL_CHAIN_RULE, exceptions.TREES_RULE, exceptions.CPP_CONT_RULE,
                        exceptions.UNRAISABLE_RULE, exceptions.THREAD_RULE, exceptions.INTERRUPT_RULE, exceptions.FRAME_RULE,
                        exceptions.FH_HEADER_RULE, exceptions.FH_FRAME_RULE, exceptions.NATIVE_BT_RULE, exceptions.NATIVE_FRAME_RULE,
                        exceptions.CUDA_CHECK_HEAD_RULE, exceptions.CUDA_CHECK_TEXT_RULE,
                        exceptions.NAN_ASSERT_RULE,
                        *stall_list.RULES, *skips.RULES,
                        *workermap.RULES, *sections.RULES, *captions.RULES, *progress.RULES, *pywarnings.RULES]
_EXCEPTION: Rule = exceptions.EXCEPTION_RULE


class LogParser:
    def __init__(self, catalog: Catalog | None = None, engine: str | None = None, shapes: bool = True) -> None:
        """``shapes``: read repeated metric lines by their per-file shape (``detectors/shapes.py``);
        False parses every line by the general path (the reference the shapes are tested against)."""
        self.catalog = catalog or load_catalog()
        self.special = list(_SPECIAL)
        self.fingerprints: list[_FpRule] = [
            _FpRule(e, fp) for e in self.catalog for fp in e.fingerprints
        ]
        patterns = [r.pattern for r in self.special] + [f.fp.pattern for f in self.fingerprints] + [_EXCEPTION.pattern]
        # noise rejected by structure (scanner.NoiseRule): metric triggers need a metric key beside a
        # number; on NCCL INFO / tqdm-only lines, metric and perf triggers need one too
        metric_ids = frozenset(i for i, r in enumerate(self.special) if r.name.startswith("metrics."))
        soft_ids = metric_ids | {i for i, r in enumerate(self.special) if r.name.startswith("perf.")}
        noise = NoiseRule(metric_ids, frozenset(soft_ids), metrics._KEYS)
        names = [r.name for r in self.special] + [""] * len(self.fingerprints) + [_EXCEPTION.name]
        if unknown := sorted(FORMS.keys() - set(names)):
            raise ValueError(f"detectors.scanforms names no parser rule: {unknown}")
        forms = {i: FORMS[name] for i, name in enumerate(names) if name in FORMS}
        self.scanner = Scanner(patterns, engine=engine, noise=noise, forms=forms)
        self._n_special = len(self.special)
        self._exc_id = len(patterns) - 1
        self._postfix_rule = next((r for r in self.special if r.name == metrics.FIELDS_RULE), None)
        self._progress_rule = next((r for r in self.special if r.name == metrics.PROGRESS_ROW_RULE), None)
        self._context_only = frozenset(i for i, r in enumerate(self.special) if r.name.startswith("context."))
        # the rules whose lines may take a shape's shortcut: metrics, throughput and context (never a
        # catalog fingerprint, the exception rule, a launcher line or bare number columns)
        self._shape_ids = frozenset(
            i for i, r in enumerate(self.special)
            if r.name.startswith(("metrics.", "perf.", "context.", "progress."))) if shapes else frozenset()

    def _rule_regex(self, i: int) -> re.Pattern[str]:
        """The Python regex of scan id ``i``: a parser rule, a catalog fingerprint or the exception rule."""
        if i < self._n_special:
            return self.special[i].regex
        if i < self._exc_id:
            return self.fingerprints[i - self._n_special].regex
        return _EXCEPTION.regex

    def fingerprint_ids(self, lines: Sequence[bytes]) -> list[frozenset[int]]:
        """For each line (no newline inside), the catalog fingerprints it matches (one scan)."""
        first, last = self._n_special, self._n_special + len(self.fingerprints)
        buf = b"\n".join(lines)
        starts = list(itertools.accumulate((len(ln) + 1 for ln in lines[:-1]), initial=0))
        out: list[frozenset[int]] = [frozenset()] * len(lines)
        for start, _end, ids in self.scanner.scan(buf):
            k = bisect_right(starts, start) - 1
            text = lines[k].decode("utf-8", "replace")
            # confirmed on the line alone: the buffer scan lets a negated class ([^`]...) run on
            # across a newline, so a match may have begun on the line above
            out[k] = frozenset(i for i in ids if first <= i < last and self.fingerprints[i - first].regex.search(text))
        return out

    # ------------------------------------------------------------------ chunks and lines
    def parse_chunk(self, buf: bytes, first_lineno: int, state: FileState) -> list[Event]:
        """Parse ``buf`` (complete lines; ``first_lineno`` is the number of its first line)."""
        return self._parse_chunk(buf, first_lineno, state, False)[0]

    def parse_chunk_counted(self, buf: bytes, first_lineno: int, state: FileState) -> tuple[list[Event], int]:
        """``parse_chunk``, and the number of lines (newlines) in ``buf``: the candidate loop counts
        the newlines before each candidate line anyway, so a reader need not count them again
        (``monitor.reader.ChunkReader(count=False)``; one pass over the bytes instead of two)."""
        return self._parse_chunk(buf, first_lineno, state, True)

    def _parse_chunk(self, buf: bytes, first_lineno: int, state: FileState, count_all: bool) -> tuple[list[Event], int]:
        out: list[Event] = []
        # (a one-byte test first: memchr runs at tens of GB/s, a two-byte "in" at ~1 GB/s)
        if (b"\x1b" in buf and b"\x1b[" in buf) or (b"^" in buf and b"^[[" in buf):
            buf = _ANSI.sub(b"", buf)  # no newline is ever inside an escape: line numbers stay
        lineno = first_lineno
        pos = 0
        count = buf.count
        context_only = self._context_only
        seen = getattr(state, "context_seen", None)  # a FileState pickled by an older version lacks it
        shape_ids = self._shape_ids
        state.look_buf = buf
        for start, end, ids in self.scanner.scan(buf):
            ctx = context_only.issuperset(ids)
            if not ctx and not context_only.isdisjoint(ids):
                # a context line that a scan engine also offered to other rules (Hyperscan's
                # candidates are a superset: a pattern may run on past the newline above): it is
                # context-only when none of those rules' own regexes finds anything in it, the same
                # answer on every engine
                text0 = buf[start:end].decode("utf-8", "replace")
                ctx = not any(self._rule_regex(i).search(text0) for i in ids if i not in context_only)
            if ctx:
                if seen is None:
                    seen = state.context_seen = set()
                line = buf[start:end]
                # a stable digest, not the line: the set is checkpointed, and log text never is raw
                key = volatile_digest(line)
                if key in seen and b"\r" not in line and (getattr(state, "rich_cont", None) is None or line[:1] != b" "):
                    # (a wrapped rich record's continuation reads the same for every rank: not skipped)
                    continue
                if len(seen) < MAX_CONTEXT_SEEN:
                    seen.add(key)
            lineno += count(b"\n", pos, start)
            pos = start
            state.look_at = start
            text = buf[start:end].decode("utf-8", "replace")
            if not ctx and shape_ids.issuperset(ids) and not (("ank" in text or "default" in text) and GLUED_RANK.search(text)):
                book = getattr(state, "shapes", None)  # a FileState pickled by an older version lacks it
                if book is None:
                    book = state.shapes = ShapeBook()
                book.parse(text, lineno, state, ids, out, self.parse_line)
            else:
                self.parse_line(text, lineno, state, ids, out)
        end = lineno + count(b"\n", pos)  # the number of the line after the chunk
        if count_all:
            lineno = end
        state.look_buf = None
        tail = getattr(state, "tail", b"")  # a FileState pickled by an older version lacks it
        state.tail = buf[-LOOKBACK_BYTES:] if len(buf) >= LOOKBACK_BYTES else (tail + buf)[-LOOKBACK_BYTES:]
        if buf:
            _last_notes(state, first_lineno, end, out)
        return out, lineno - first_lineno

    def parse_line(
        self,
        text: str,
        lineno: int,
        state: FileState,
        rule_ids: Sequence[int] | None = None,
        out: list[Event] | None = None,
    ) -> list[Event]:
        """Parse one physical line (``rule_ids``: what the scan matched; None = try all)."""
        if out is None:
            out = []
        if "\x1b[" in text or "^[[" in text:
            text = _ANSI_STR.sub("", text)
        if rule_ids is not None:
            rule_ids = sorted(rule_ids)  # rule order decides ties; engines report matches in their own order
        special = [self.special[i] for i in rule_ids if i < self._n_special] if rule_ids is not None else self.special
        fps = (
            [self.fingerprints[i - self._n_special] for i in rule_ids if self._n_special <= i < self._exc_id]
            if rule_ids is not None
            else self.fingerprints
        )
        try_exc = rule_ids is None or self._exc_id in rule_ids
        source = Source(state.path, lineno, text[:MAX_EVIDENCE_CHARS])
        segments = text.split("\r")
        if ("ank" in text or "default" in text) and GLUED_RANK.search(text):
            # two processes' lines printed into one ("... loss=6.2964rank=1 step=5 ..."): each its own
            segments = [part for seg in segments for part in GLUED_RANK.split(seg)]
        for raw in segments:
            n, lead, rest, post = split_progress_parts(raw)
            if n is not None:
                got = bar_count(raw)
                # (a bar at its end, a dataset's map or a finished pass, leaves no loop position)
                state.progress = None if got is not None and got[0] >= got[1] > 0 else n
                self._bar_edge(raw, lead, source, state, out)
                pre = split_prefixes(lead, state.year)
                if (pre.rank is not None or pre.local_rank is not None) and lead.startswith("["):
                    # the launcher's prefix stood before the bar: the text glued after it, and the
                    # bar's own postfix ("[default1]:Epoch 0: 42%|... [00:00, loss=2.369, scale=524288]"),
                    # are that rank's
                    head = lead.rstrip()
                    launcher = head[: len(head) - len(pre.body)]
                    if rest.strip():
                        rest = launcher + rest
                    if post:
                        post = launcher + post
            first = len(out)
            if rest.strip():
                if rule_ids is not None and len(segments) > 1:
                    # the scan saw the whole line: keep the rules that match this segment too, so
                    # no Python regex searches a long segment it cannot match (quadratic time)
                    here = {i for _, _, ids in self.scanner.scan(rest.encode("utf-8", "surrogatepass")) for i in ids}
                    seg_ids = [i for i in rule_ids if i in here]
                    self._segment(rest, source, state, [self.special[i] for i in seg_ids if i < self._n_special],
                                  [self.fingerprints[i - self._n_special] for i in seg_ids if self._n_special <= i < self._exc_id],
                                  self._exc_id in seg_ids, out)
                else:
                    self._segment(rest, source, state, special, fps, try_exc, out)
                if n is not None and rest.lstrip().startswith("{"):
                    # a metric dict printed right behind a bar (HF Trainer's console: "870/1352
                    # [05:29<01:08, 7.08it/s]{'loss': 0.67, ..., 'epoch': 0.64}"): the dict has no
                    # step, the bar's counter is the step it was logged at
                    for ev in out[first:]:
                        if ev.kind is EventKind.SAMPLE and ev.step is None:
                            ev.step = n
            if (post and self._postfix_rule is not None and self._postfix_rule.regex.search(post)
                    and not any(ev.kind is EventKind.SAMPLE for ev in out[first:])):
                # tqdm's postfix ("..., loss=nan, loss_scale=0.016]"): the bar's metrics, unless a
                # metric line glued after the bar already says them (with its step)
                self._segment(post, source, state, [self._postfix_rule], [], False, out)
            if (lead and state.progress_cols is not None and self._progress_rule is not None
                    and not any(ev.kind is EventKind.SAMPLE for ev in out[first:])
                    and self._progress_rule.regex.search(lead)):
                # a detector trainer's progress row is its bar's description ("1/99 2.64G nan ... 416: 100%|")
                self._segment(lead, source, state, [self._progress_rule], [], False, out)
            if (lead and self._postfix_rule is not None and not any(ev.kind is EventKind.SAMPLE for ev in out[first:])
                    and self._postfix_rule.regex.search(lead)):
                # tqdm's description ("Step: 895. … Total loss: 0.37: 100%|▉| 897/897 [...]"):
                # the bar's metrics when neither its postfix nor a glued line said them
                self._segment(lead, source, state, [self._postfix_rule], [], False, out)
        return out

    @staticmethod
    def _bar_edge(raw: str, lead: str, source: Source, state: FileState, out: list[Event]) -> None:
        """A bar standing at 0/N (N > 1: a loop about to begin), and the first line after it that
        shows a bar past 0: a CONTEXT ``bar_at`` event each (correlate: a log that ends with its
        loop's bar still at 0 stopped before the first step). A bar whose lead names its rank
        (``[rank 2] epoch 0:   0%|``) is that rank's: the rank began its loop, a rank the job has."""
        got = bar_count(raw)
        if got is None:
            return
        n, total = got
        zero = getattr(state, "bar_zero", False)
        rank: int | None = None
        if n == 0 and lead.strip():
            pre = split_prefixes(lead, state.year)
            rank = pre.rank if pre.rank is not None else message_rank(pre.body)[0]
            if rank is not None and not plausible(rank, state.job.trusted_ws):
                rank = None
        if n == 0 and total > 1 and (not zero or rank is not None):
            state.bar_zero = True
            out.append(Event(EventKind.CONTEXT, source, rank=rank, rank_from="message" if rank is not None else None,
                             data={"key": "bar_at", "value": 0, "total": total}))
        elif n > 0 and zero:
            state.bar_zero = False
            out.append(Event(EventKind.CONTEXT, source, data={"key": "bar_at", "value": n, "total": total}))

    def _segment(self, rest: str, source: Source, state: FileState, special: list[Rule], fps: list[_FpRule],
                 try_exc: bool, out: list[Event]) -> None:
        first = len(out)
        try:
            self._parse_segment(rest, source, state, special, fps, try_exc, out)
        except ValueError:
            # a "number" of thousands of digits (int() refuses > 4300, and converting it would
            # take quadratic time): not a line any rule can read; drop what it produced
            del out[first:]

    def _parse_segment(
        self,
        rest: str,
        source: Source,
        state: FileState,
        special: list[Rule],
        fps: list[_FpRule],
        try_exc: bool,
        out: list[Event],
    ) -> None:
        pre = split_prefixes(rest, state.year)
        if pre.time is not None:
            lo, hi = year_bounds(state.year)
            if not lo <= pre.time < hi and pre.time > 0:
                # a dated line of another year than the file was assumed to be in: glog's
                # year-less "W1206 03:30:21" lines below it are in that year too
                state.year = year_of(pre.time)
        dropped_before = state.job.implausible
        rank, local, rank_from = resolve_rank(pre, state, source.line)
        rank, rank_from = _rich_continuation(rest, state, source.line, rank, local, rank_from)
        seg = Segment(pre.body, pre, source, state, rank, local, out, rest, rank_from=rank_from)
        if (pre.task is not None and pre.rank is not None and pre.rank != pre.task
                and not getattr(state.job, "srun_node_tasks", False)):
            # "2: [rank18]:": srun's task 2 runs rank 18, so its tasks are nodes (torchrun below)
            state.job.srun_node_tasks = True
            seg.emit(EventKind.CONTEXT, data={"key": "srun_node_tasks", "value": True})
        first = len(out)
        handled = False
        for rule in special:
            m = rule.regex.search(rest if rule.on_raw else seg.body)
            if m is not None and rule.handle(m, seg):
                handled = handled or rule.name.startswith("launcher.")
        if not handled and pywarnings.is_warning_source(seg):
            handled = True  # the code line a Python warning just above quoted: no failure's text
        if not handled:
            best: tuple[int, _FpRule, re.Match[str]] | None = None
            for fr in fps:
                if best is not None and fr.entry.priority <= best[0]:
                    continue
                m = fr.regex.search(seg.body)
                if m is not None and not _counted_none(seg.body, m.start()):
                    best = (fr.entry.priority, fr, m)
            if best is not None:
                _, fr, m = best
                data = {k: v for k, v in m.groupdict().items() if v is not None}
                failure = fr.entry.id
                pair = _pair(data) if fr.fp.when_level is not None else None
                zero = _zero_side(data)
                behind = _behind(data)
                if behind is not None:
                    data["rank"] = behind  # two ranks and their progress: the one behind is named
                    if pair is not None and zero == behind:
                        # (a sequence number of 0 may be no progress at all, the check's fingerprint of
                        # an op it does not count: kept to weigh against the other ranks' reports)
                        data["zero_pair"] = pair
                elif pair is not None and fr.fp.when_level is not None:
                    failure = fr.fp.when_level  # level: they disagree on the collective itself
                    data["pair"] = pair
                data["pattern"] = fr.fp.description
                if fr.fp.role:
                    data["role"] = fr.fp.role
                if fr.entry.category == "distributed" and not fr.fp.role and _RETRYING.search(seg.body):
                    # a transport error the speaker says it is retrying (a data fetch, a store
                    # connect): a transient, not the job's failure; a later error line is its own
                    data["role"] = "benign"
                    data["retrying"] = True
                if fr.fp.observed:
                    data["observed"] = True
                if fr.fp.initial_scale is not None:
                    data["initial_scale"] = fr.fp.initial_scale
                if fr.fp.presence:
                    data["presence"] = fr.fp.presence
                if fr.fp.scaled:
                    data["scaled"] = True
                if fr.fp.local_overflow:
                    data["local_overflow"] = True
                if fr.fp.scale_growth:
                    data["scale_growth"] = True
                if fr.fp.skip_window:
                    data["skip_window"] = True
                if fr.fp.odd_rank and "rank" not in data:
                    _odd_one_out(state, data)
                if fr.fp.ends_rank_with:
                    # (event data is scalars: "-6" or "-6,-9")
                    data["ends_rank_with"] = ",".join(str(c) for c in fr.fp.ends_rank_with)
                exceptions.stack_data(seg, data)  # raised through process-group set-up; its frames
                if seg.pre.host is not None and seg.pre.pid is not None:
                    data["nccl_proc"] = f"{seg.pre.host}:{seg.pre.pid}"  # a traceback below may claim the process
                    if seg.pre.device is not None and "cuda_error" in data:
                        # a CUDA call failed on NCCL's [N], the process's CUDA device (a network error
                        # says nothing about the device)
                        data.setdefault("gpu", str(seg.pre.device))
                if "to_scale" in data and fr.regex.search(seg.body, m.end()) is not None:
                    # a second report of the same kind glued onto this one: processes writing one
                    # stream at once (every rank's copy of one back-off, interleaved mid-line)
                    data["glued"] = True
                if "to_scale" in data and state.progress is None:
                    # a scaler's back-off printed between a tqdm bar's refreshes: the bar says where the loop was
                    _bar_progress(state, data)
                ev = seg.emit(EventKind.MATCH, failure=failure, data=data)
                if state.nccl_warn is not None and state.nccl_warn[0] == source.line:
                    state.nccl_warn = None  # a WARN a fingerprint knows: not left to its return codes
                exceptions.note_peer_warn(fr.entry.id, seg)  # its return codes may show it came up through set-up
                if fr.fp.presence:
                    # a sync-point report may list several points on one line (Horovod's stalled
                    # tensors, each with its ranks): each is a report of its own
                    for more in itertools.islice(fr.regex.finditer(seg.body, m.end()), MAX_PRESENCE_PER_LINE):
                        extra = {k: v for k, v in more.groupdict().items() if v is not None}
                        seg.emit(EventKind.MATCH, failure=fr.entry.id, data={**data, **extra})
                if (fr.fp.rank_scope or fr.entry.rank_scope) == "job":
                    if ev.rank is not None or ev.local_rank is not None:
                        # who printed it (which rank logs a reduced signal tells whether the job
                        # logs from rank 0 only, or each rank its own view: detect.py)
                        if ev.rank is not None:
                            data["printed_by"] = ev.rank
                        if ev.local_rank is not None:
                            data["printed_by_local"] = ev.local_rank
                    ev.rank = ev.local_rank = None  # the logging rank of a reduced signal
                    ev.rank_from = None
                    data.pop("rank", None)
                    data["job_scope"] = True  # no traceback below it may claim it for its rank either
                handled = True
        if not handled and try_exc:
            m = _EXCEPTION.regex.search(seg.body)
            if m is not None:
                _EXCEPTION.handle(m, seg)
        if seg.rank is None:
            workermap.spread(out, first, state)
        annotate(out, first, state, dropped_before)


# rich's RichHandler record: its time column ("[02:19:17]", blank when the time repeats), its level
# column, then the message; the source column ("train.py:16") ends the record's first line
_RICH_RECORD = re.compile(r"(?:\[\d\d:\d\d:\d\d\]| {10}) (?:DEBUG|INFO|WARNING|ERROR|CRITICAL) +(?=\S)")
_RICH_SOURCE = re.compile(r"\S\s{2,}[\w.-]+\.py:\d+\s*$")


def _rich_continuation(rest: str, state: FileState, line: int, rank: int | None, local: int | None,
                       rank_from: str | None) -> tuple[int | None, str | None]:
    """A line that continues a RichHandler record wrapped at the console's width (indented to the
    record's message column, nothing on its left) is that record's: it takes the record's rank
    (``[r2] init_process_group backend=gloo rank=2`` / ``world_size=3 master=...``)."""
    cont = getattr(state, "rich_cont", None)  # (a FileState pickled by an older version lacks it)
    if rest[:1] not in (" ", "[") and cont is None:
        return rank, rank_from
    m = _RICH_RECORD.match(rest)
    if m is not None and _RICH_SOURCE.search(rest):
        state.rich_cont = (m.end(), rank, line)
        return rank, rank_from
    if cont is None:
        return rank, rank_from
    col, rrank, last = cont
    if line in (last, last + 1) and len(rest) > col and rest[col] != " " and rest[:col].strip() == "":
        state.rich_cont = (col, rrank, line)
        if rank is None and local is None and rrank is not None:
            return rrank, "prefix"
        return rank, rank_from
    if line != last:
        state.rich_cont = None
    return rank, rank_from



# a count of none before the matched words: "nan-guard: 0 non-finite losses / 0 inf grads", "no NaN
# detected", "zero overflows" (a number after a word that names a thing is that thing's index:
# "rank 0 non-finite loss", "GPU 0 ...")
_NONE_BEFORE = re.compile(r"(?:^|[\s(:=,;|/-])(?P<w>0|[Nn]o|NO|[Zz]ero)\s+$")
_INDEXED_BY = frozenset({"rank", "gpu", "device", "cuda", "node", "worker", "process", "proc", "step", "iter",
                         "iteration", "epoch", "batch", "task", "host", "local_rank", "dev", "id", "#", "card"})


def _odd_one_out(state: FileState, data: dict[str, str]) -> None:
    """A collective mismatch: the rank whose own lines just above stood apart from its peers'
    (detectors.oddrank) is named, as the message's rank, marked as inferred."""
    buf = getattr(state, "look_buf", None)
    before = getattr(state, "tail", b"") + (buf[: getattr(state, "look_at", 0)] if buf is not None else b"")
    lines = before[-LOOKBACK_BYTES:].decode("utf-8", "replace").splitlines()
    if len(before) > LOOKBACK_BYTES:
        lines = lines[1:]  # (a line cut by the window's start)
    got = odd_rank(lines, state.year)
    if got is not None and got.other is not None:
        # two ranks whose sizes differ: the one that did not abort is named (correlate), once
        # the rank that aborted is known
        data["odd_pair"] = f"{got.rank},{got.other}"
        data["odd_line"] = got.line[:MAX_EVIDENCE_CHARS]
        data["odd_why"] = got.why
    elif got is not None:
        data["rank"] = str(got.rank)
        data["rank_how"] = "odd_one_out"
        data["odd_line"] = got.line[:MAX_EVIDENCE_CHARS]
        data["odd_why"] = got.why


def _bar_progress(state: FileState, data: dict[str, Any]) -> None:
    buf = getattr(state, "look_buf", None)
    before = getattr(state, "tail", b"") + (buf[: getattr(state, "look_at", 0)] if buf is not None else b"")
    n = progress.bar_before(before[-LOOKBACK_BYTES:])
    if n is not None:
        data["progress"] = n


def _last_notes(state: FileState, first_line: int, end: int, out: list[Event]) -> None:
    """Each rank's last own note in the file's last ``LOOKBACK_BYTES`` (detectors.oddrank.
    ``last_own_lines``), kept up to date after every chunk (``first_line``: the chunk's first
    line, ``end``: the line after it) and sent on as a CONTEXT ``last_notes`` event when it
    changed. A function of the file's last bytes alone, so the same however the file was cut into
    chunks (live as offline): the lines of earlier chunks still in the window keep what they
    said, the chunk's own lines in it are read, and what left the window is forgotten. A hang's
    culprit is often the one rank whose last line went elsewhere (``running validation`` while its
    peers print ``epoch 1 done``); most of those lines match no rule, so no event shows them."""
    window = state.tail
    lines = window.decode("utf-8", "replace").split("\n")
    last = end - 1  # the number of the window's last line
    if lines and lines[-1] == "":
        lines.pop()  # (the chunk ended with its newline)
    else:
        last = end
    if len(window) >= LOOKBACK_BYTES and lines:
        lines = lines[1:]  # (a line cut by the window's start)
    lines = lines[-LOOKBACK_LINES:]
    first = last - len(lines) + 1  # the number of the window's first whole line
    new_from = max(first_line, first)
    # (the rank of the file's own path, never one a pasted "==> path <==" section gave it later)
    own = getattr(state, "own_ranks", None)  # (a FileState pickled by an older version lacks it)
    file_rank = own[0] if own is not None else state.rank
    kept = {r: n for r, n in (getattr(state, "notes", None) or {}).items() if n[0] >= first}
    for r, n in last_own_lines(lines[new_from - first:], state.year, file_rank).items():
        kept[r] = (new_from + n.index, n.body, n.line)
    state.notes = kept
    value = "\n".join(f"{k}{r}\t{ln}\t{body.replace(chr(9), ' ')}\t{text}" for (k, r), (ln, body, text) in sorted(kept.items()))
    value += _round_takers(lines, state.year, file_rank, kept)
    tail = lines[-1].strip() if lines else ""
    if (len(tail) >= 16 and last not in {n[0] for n in kept.values()}
            and any(len(text) > len(tail) and text.startswith(tail) for _, _, text in kept.values())):
        # the file ends in a cut copy of a rank's note ("... overflow! Rank" where the others say
        # "... overflow! Rank 2 Skipping step"): a paste cut in the middle of a round, whose last
        # line's rank is lost (row kind "c": not a rank's note, a mark that the round is unfinished)
        value += f"\nc0\t{last}\tcut\t{tail}"
    key = zlib.crc32(value.encode("utf-8", "surrogatepass"))
    if key == getattr(state, "notes_key", 0):  # (a FileState pickled by an older version lacks it)
        return
    state.notes_key = key
    out.append(Event(EventKind.CONTEXT, Source(state.path, max(last, 1), ""), data={"key": "last_notes", "value": value}))


def _round_takers(lines: list[str], year: int, file_rank: int | None,
                  kept: dict[tuple[str, int], tuple[int, str, str]]) -> str:
    """Rows (kind "p") of the ranks whose last note is not the line most ranks printed last but
    who printed that line earlier in the window: ranks that took part in the roll call's earlier
    rounds (a loop's ``RANK 25: running step 1/10`` of the trial before) and missed its last one.
    Read only when some rank's last note differs from the others' (a loop whose ranks all print
    the same line last costs nothing here); a function of the window alone, like the notes."""
    counts: dict[str, int] = {}
    for _, body, _ in kept.values():
        t = note_template(body)
        counts[t] = counts.get(t, 0) + 1
    if not counts:
        return ""
    common, n = max(counts.items(), key=lambda kv: kv[1])
    others = [r for (k, r), (_, body, _) in kept.items() if k == "g" and note_template(body) != common]
    if n < 3 or not others or list(counts.values()).count(n) > 1:
        return ""
    took = printed_before(lines, year, file_rank, common)
    return "".join(f"\np{r}\t0\tprinted\t-" for r in sorted(others) if r in took)


def _counted_none(body: str, start: int) -> bool:
    """The fingerprint's words at ``start`` follow a count of none ("0 non-finite losses")."""
    head = body[max(0, start - 40):start]
    m = _NONE_BEFORE.search(head)
    if m is None:
        return False
    if m.group("w") != "0":
        return True
    before = head[:m.start("w")].rstrip(" :=#[(").rsplit(None, 1)
    return not (before and before[-1].lower().rstrip(":=#[(") in _INDEXED_BY)


def _pair(data: dict[str, str]) -> str | None:
    """The two ranks a progress-comparing line names, as "a,b" (before ``_behind`` pops them)."""
    ra, rb = data.get("rank_a"), data.get("rank_b")
    return f"{ra},{rb}" if ra is not None and rb is not None and ra != rb else None


def _zero_side(data: dict[str, str]) -> str | None:
    """The rank of a progress-comparing line whose sequence number is 0 while the other's is not."""
    a, b = data.get("seq_a"), data.get("seq_b")
    if a == "0" and b not in (None, "0"):
        return data.get("rank_a")
    if b == "0" and a not in (None, "0"):
        return data.get("rank_b")
    return None


def _behind(data: dict[str, str]) -> str | None:
    """A fingerprint that names two ranks with their progress (``rank_a``/``seq_a``,
    ``rank_b``/``seq_b``): the rank that is behind, or None when they are level."""
    try:
        a, b = int(data.pop("seq_a")), int(data.pop("seq_b"))
        ra, rb = data.pop("rank_a"), data.pop("rank_b")
    except (KeyError, ValueError):
        return None
    if a == b:
        return None
    return ra if a < b else rb


@lru_cache(maxsize=4)
def default_parser(engine: str | None = None) -> LogParser:
    """A shared parser over the shipped catalog (compiling the scan database is not free).

    The parser holds no per-file state (that lives in ``FileState``), so sharing is safe.
    """
    return LogParser(engine=engine)
