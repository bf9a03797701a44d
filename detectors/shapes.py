"""Per-file metric line shapes: the parse path's shortcut for lines it has already read.

In one file, a job's metric lines are printed by the same format string again and again
(``2024-12-18 06:23:17,747 - INFO - train - step 1/1000000 | loss 10.75 | grad_norm 4.25
| …``): only the numbers change. After the general path (``LogParser.parse_line``) has
parsed such a line, ``derive`` records its *shape*: the line cut into literal text and
number tokens (``_TOKEN``), where the timestamp of the prefix sits among the tokens, the
prefix's other facts (level, rank tag, host, …), and which token each value of each event
came from. A later candidate line of the same file with the same literal text and the same
scan matches is then read from its tokens alone: no ``\\r`` splitting, no prefix peeling,
no field extraction, one ``float()`` per value. The rank is still resolved per line
(``resolve_rank``: it depends on the file's state, which changes).

Exactness before speed:

- a shape is derived only from a line that every rule it matched is allowed to shortcut
  (metric, throughput and context rules: no catalog fingerprint, no exception rule, no
  launcher rule), whose events are samples and context votes only, and whose every float
  value is one of the line's number tokens. A value computed from a token (a log2 loss
  scale) or a constant that is not in the text refuses the shape;
- a number token is digits only (``nan``, ``inf`` and signs are literal text), so a line
  carrying a non-finite value never has the shape of a finite one;
- the first ``VERIFY_LINES`` lines of each shape are parsed by both paths and compared,
  event by event and field by field (with types); a value two tokens could explain is told
  apart by one more parse of the line with distinct numbers in its tokens, else stays
  undecided until lines tell them apart; that parse also refuses the shape when a value tied to
  one token is not that token's there (a sum of two losses, one of them 0 on the first lines,
  equals the other by chance). A mismatch, or a value still undecided after
  ``MAX_VERIFY_LINES``, retires the shape for that file: its lines take the general path;
- ``tests/detectors/test_shapes.py`` runs both paths over every metric line of the test
  corpora, the golden cases and the generated bench corpora.

Pure and deterministic like the rest of ``detectors/``: the shapes live in the
``FileState`` (``FileState.shapes``), so the live tailer and ``diagnose`` share them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from detectors.model import Event, EventKind, Source
from detectors.parsers.base import FileState, annotate
from detectors.prefixes import Prefixed, _day, _hms, split_prefixes
from detectors.ranks import resolve_rank

__all__ = ["MAX_SHAPES", "VERIFY_LINES", "ShapeBook", "derive", "same_events"]

VERIFY_LINES = 8  # lines of each shape parsed by both paths before the shape is trusted
MAX_VERIFY_LINES = 64  # a shape whose values are still ambiguous after this many lines is retired
MAX_SHAPES = 128  # shapes (and refused skeletons) remembered per file
MAX_LINE = 4096  # longer lines always take the general path
EVIDENCE_CHARS = 2000  # parse.MAX_EVIDENCE_CHARS (a test checks they agree)
MAX_TOKEN = 30  # a longer digit run always takes the general path (int() limits, bounded regexes)

# a number token: digits, an optional fraction and exponent, not glued to a word ("fp16",
# "0x55d0", "log2" stay literal text). Signs, "nan", "inf" are literal text.
# (written to start with a digit, which lets re skip to the next one; atomic, so "38.02GB" is no token)
_TOKEN = re.compile(r"([0-9](?<![A-Za-z_0-9.][0-9])(?>[0-9]*(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?))(?![A-Za-z_0-9])")
_TOKEN_SPLIT = _TOKEN.split
# the prefix timestamps split_prefixes reads (prefixes._ts_full / _ts_md layouts)
# (the seconds' fraction, when it follows a ",", is a token of its own: free digits of a fixed width)
_TS_FULL = re.compile(r"(\d{4})-(\d\d)-(\d\d)[ T_](\d\d):(\d\d):(\d\d)(?:,(\d+))?")
_TS_HMS = re.compile(r"[IWEFVC](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)(?:,(\d+))?")
# markers the metric parsers set to 1.0 on a sample (fields._close, metrics): constants of the
# line's kind, never read from a token (a "rank": 1 beside them is not their value)
_FLAG_KEYS = frozenset({"own_grad", "reduced", "unkeyed", "eval_from_ppl"})
_POST_KEYS = ("progress", "attempt")  # added by _parse_segment from the file's state, not by a rule
_KINDS = (EventKind.SAMPLE, EventKind.CONTEXT)

Slot = int | tuple[int, ...]  # a token index, or the candidates while undecided


@dataclass(slots=True)
class _EventShape:
    kind: EventKind
    step: Slot | None  # the token holding the step (None: no step)
    # key → ("t", slot) a token's float value, or ("c", value) a constant
    data: list[tuple[str, str, Any]]


@dataclass(slots=True)
class Shape:
    """What one skeleton of one file's lines means."""

    body_start: int  # offset of the message body in the line (the prefix has a fixed width)
    n_prefix: int  # tokens before the body
    fixed: list[tuple[int, str]]  # prefix tokens other than the timestamp: must be as first seen
    free: list[tuple[int, int]]  # the timestamp's tokens: any digits, of the width first seen
    time: tuple[Any, ...] | None  # (kind, token indices): how the prefix's timestamp is read
    pre: Prefixed  # the prefix's facts (body and time replaced per line)
    events: list[_EventShape]
    verified: int = 0
    seen: int = 0
    active: bool = False  # verified and every value's token decided: lines take the shortcut
    plan: _Plan | None = None  # how _emit reads a line, made once the shape is active

    def settled(self) -> bool:
        return all(not isinstance(s, tuple) for s in self._slots())

    def _slots(self) -> list[Slot]:
        out: list[Slot] = []
        for ev in self.events:
            if ev.step is not None:
                out.append(ev.step)
            out.extend(v for _, how, v in ev.data if how == "t")
        return out


class _Plan:
    """A shape flattened for ``_emit``: the token indices to check and to read, with C-level
    getters (a shape's slots no longer change once it is active)."""

    __slots__ = ("events", "fixed", "fixed_vals", "free", "free_widths")

    def __init__(self, shape: Shape) -> None:
        self.fixed = itemgetter(*[i for i, _ in shape.fixed]) if shape.fixed else None
        self.fixed_vals = _as_got([t for _, t in shape.fixed])
        self.free = itemgetter(*[i for i, _ in shape.free]) if shape.free else None
        self.free_widths = tuple(n for _, n in shape.free)
        # per event: kind, the step's token (-1: none), and (key, token index or -1, constant) per value
        self.events = [(es.kind, -1 if es.step is None else _first(es.step),
                        [(k, _first(v), None) if how == "t" else (k, -1, v) for k, how, v in es.data])
                       for es in shape.events]

    def fits(self, toks: list[str]) -> bool:
        """The prefix tokens that must stay (as first seen) did, the timestamp's kept their widths."""
        if self.fixed is not None and self.fixed(toks) != self.fixed_vals:
            return False
        if self.free is not None:
            got = self.free(toks)
            widths = (len(got),) if isinstance(got, str) else tuple(map(len, got))
            if widths != self.free_widths:
                return False
        return True


def _as_got(vals: list[str]) -> str | tuple[str, ...]:
    """What ``itemgetter`` over these indices returns: the item itself for one index."""
    return vals[0] if len(vals) == 1 else tuple(vals)


class ShapeBook:
    """The shapes of one file (``FileState.shapes``): skeleton → shape, or None (refused)."""

    __slots__ = ("shapes",)

    def __init__(self) -> None:
        self.shapes: dict[tuple[tuple[int, ...], str], Shape | None] = {}

    # a cache, never saved: a checkpoint (or a worker's state) holds no skeleton of log text, and
    # the shapes are learned again after a restart (the events are the same either way)
    def __getstate__(self) -> dict[str, Any]:
        return {"shapes": {}}

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.shapes = d["shapes"]

    def parse(self, text: str, lineno: int, state: FileState, ids: list[int], out: list[Event],
              general: Callable[[str, int, FileState, list[int], list[Event]], object]) -> None:
        """Parse one candidate line into ``out``: by its shape when the file has a trusted one,
        else by ``general`` (``LogParser.parse_line``), learning or checking the shape."""
        if len(text) > MAX_LINE or "\x00" in text:
            general(text, lineno, state, ids, out)
            return
        parts = _TOKEN_SPLIT(text)
        key = (tuple(ids), "\x00".join(parts[0::2]))
        shapes = self.shapes
        shape = shapes.get(key, False)
        if shape is None:  # refused or retired
            general(text, lineno, state, ids, out)
            return
        toks = parts[1::2]
        if shape is False:
            first = len(out)
            general(text, lineno, state, ids, out)
            if len(shapes) >= MAX_SHAPES:
                # full: forget the refused skeletons (a job's metric line changes width at step 10,000
                # and needs a new shape long after the timer lines' one-off skeletons filled the book)
                for k in [k for k, v in shapes.items() if v is None]:
                    del shapes[k]
            if len(shapes) < MAX_SHAPES:
                shape = shapes[key] = derive(text, toks, state, out[first:])
                if shape is not None and not _disambiguate(shape, parts, lineno, state, ids, general):
                    shapes[key] = None  # a value the tokens only held by chance (a sum with a 0 part)
            return
        assert isinstance(shape, Shape)
        if shape.active:
            plan = shape.plan
            if plan is None:
                plan = shape.plan = _Plan(shape)
            if not _emit(shape, plan, text, toks, lineno, state, out):
                general(text, lineno, state, ids, out)
            return
        # verifying: both paths; the general one's events are kept, the shape's compared with them
        shape.seen += 1
        job = state.job
        before = job.implausible
        first = len(out)
        general(text, lineno, state, ids, out)
        narrowed = _narrow(shape, toks, out[first:])
        after = job.implausible
        job.implausible = before  # the shape resolves the rank again, from the same state
        fast: list[Event] = []
        ok = narrowed and _emit(shape, _Plan(shape), text, toks, lineno, state, fast)
        job.implausible = after
        if not ok or not same_events(fast, out[first:]) or shape.seen > MAX_VERIFY_LINES:
            shapes[key] = None
            return
        shape.verified += 1
        shape.active = shape.verified >= VERIFY_LINES and shape.settled()


def _narrow(shape: Shape, toks: list[str], events: list[Event]) -> bool:
    """Keep, for each undecided value, the tokens that hold it on this line too (False, and
    nothing changed, when no token holds one of them: the shape is wrong)."""
    if len(events) != len(shape.events):
        return False
    steps: list[Slot | None] = []
    datas: list[list[tuple[str, str, Any]]] = []
    for es, ev in zip(shape.events, events, strict=True):
        step = es.step
        if isinstance(step, tuple):
            step = _pick(tuple(i for i in step if ev.step is not None and float(toks[i]) == ev.step))
            if step == ():
                return False
        data = list(es.data)
        for j, (k, how, slot) in enumerate(data):
            if how == "t" and isinstance(slot, tuple):
                v = ev.data.get(k)
                slot = _pick(tuple(i for i in slot if float(toks[i]) == v))
                if slot == ():
                    return False
                data[j] = (k, how, slot)
        steps.append(step)
        datas.append(data)
    for es, step, data in zip(shape.events, steps, datas, strict=True):
        es.step, es.data = step, data
    return True


def _disambiguate(shape: Shape, parts: list[str], lineno: int, state: FileState, ids: list[int],
                  general: Callable[[str, int, FileState, list[int], list[Event]], object]) -> bool:
    """Parse the line once more with every message token made distinct (same form: an integer
    stays an integer). Two tokens held the same value ("skipped iterations: 0 | nan
    iterations: 0"): keep, for each value, the token that holds it there (a hint: the lines
    that verify the shape still decide). A value already tied to one token that is NOT that
    token's here was computed from several, equal to one token by chance (GAN losses summed,
    one of them 0.000000 for a thousand lines): False, the line may not take the shortcut. A
    line whose events differ tells nothing (True)."""
    synth = list(parts)
    for j in range(shape.n_prefix, len(parts) // 2):
        tok = parts[2 * j + 1]
        synth[2 * j + 1] = f"{900001 + j}.25" if "." in tok else str(900001 + j)
    job = state.job
    implausible = job.implausible
    out: list[Event] = []
    try:
        general("".join(synth), lineno, state, ids, out)
    finally:
        job.implausible = implausible
    toks = synth[1::2]
    if len(out) != len(shape.events) or not all(a.kind is b.kind for a, b in zip(shape.events, out, strict=True)):
        return True
    for es, ev in zip(shape.events, out, strict=True):
        if isinstance(es.step, int) and (ev.step is None or float(toks[es.step]) != ev.step):
            return False
        for k, how, slot in es.data:
            if how == "t" and isinstance(slot, int) and float(toks[slot]) != ev.data.get(k):
                return False
    if not shape.settled():
        _narrow(shape, toks, out)
    return True


def _pick(cands: tuple[int, ...]) -> Slot:
    return cands[0] if len(cands) == 1 else cands


def _first(slot: Slot) -> int:
    return slot[0] if isinstance(slot, tuple) else slot


def _emit(shape: Shape, plan: _Plan, text: str, toks: list[str], lineno: int, state: FileState,
          out: list[Event]) -> bool:
    """The events of a line of ``shape`` (False: the line does not fit after all; nothing is added)."""
    if not plan.fits(toks):
        return False
    if toks and max(map(len, toks)) > MAX_TOKEN:
        return False
    time = None
    if shape.time is not None:
        time = _time(shape.time, toks, state.year)
    made: list[tuple[EventKind, int | None, dict[str, Any]]] = []
    for kind, at, values in plan.events:
        step = None
        if at >= 0:
            tok = toks[at]
            if not tok.isdigit():
                return False  # "step 1.5" is no step counter: the general path decides
            step = int(tok)
        made.append((kind, step, {k: c if i < 0 else float(toks[i]) for k, i, c in values}))
    p = shape.pre
    pre = Prefixed(text[shape.body_start:].rstrip(), p.rank, p.local_rank, p.host, p.pid, p.device, p.level, time,
                   p.logging_rank, p.node)
    job = state.job
    dropped_before = job.implausible
    rank, local, rank_from = resolve_rank(pre, state, lineno)
    source = Source(state.path, lineno, text[:EVIDENCE_CHARS])
    if rank is None:
        rank_from = None
    first = len(out)
    for kind, step, data in made:
        out.append(Event(kind, source, rank, local, p.host, time, step, None, data, rank_from))
    annotate(out, first, state, dropped_before)
    return True


def _time(spec: tuple[Any, ...], toks: list[str], year: int) -> float | None:
    """The prefix's timestamp as split_prefixes reads it (the seconds without their fraction)."""
    kind = spec[0]
    try:
        if kind == "full":
            _, iy, imo, id_, ih, imi, is_ = spec
            y, mo, d, h, mi, s = (int(toks[iy]), int(toks[imo]), int(toks[id_]), int(toks[ih]), int(toks[imi]),
                                  int(toks[is_][:2]))
        else:
            mo, d, h, mi, s = (int(toks[i][:2]) if isinstance(i, int) else int(i[0]) for i in spec[1:])
            y = year
        return _day(y, mo, d) + _hms(h, mi, s)
    except ValueError:
        return None


def derive(text: str, toks: list[str], state: FileState, events: list[Event]) -> Shape | None:
    """The shape of a line the general path just parsed into ``events`` (None: the line may
    not take the shortcut)."""
    if not events or any(ev.kind not in _KINDS or ev.failure is not None for ev in events):
        return None
    if not any(ev.kind is EventKind.SAMPLE for ev in events):
        return None
    if "\x1b[" in text or "^[[" in text or "%|" in text or "it [" in text or "it[" in text:
        return None
    if any(len(t) > MAX_TOKEN for t in toks):
        return None
    # the cheap refusal first (a value computed, or glued to a unit: "38.02GB" is no token)
    held = {float(t) for t in toks}
    if any(isinstance(v, float) and v not in held for ev in events for v in ev.data.values()):
        return None
    segs = text.split("\r")
    if any(s.strip() for s in segs[:-1]):
        return None  # one message after blank tqdm clears at most
    last = segs[-1]
    pre = split_prefixes(last, state.year)
    s = last.rstrip()
    body_start = len(text) - len(last) + len(s) - len(pre.body)
    # token spans
    spans: list[tuple[int, int]] = [(m.start(1), m.end(1)) for m in _TOKEN.finditer(text)]
    if len(spans) != len(toks):
        return None
    n_prefix = 0
    for a, b in spans:
        if b <= body_start:
            n_prefix += 1
        elif a < body_start:
            return None  # a token across the prefix/body boundary
    time_spec: tuple[Any, ...] | None = None
    time_toks: set[int] = set()
    head = text[:body_start]
    if pre.time is not None:
        by_start = {a: i for i, (a, _) in enumerate(spans[:n_prefix])}
        m = _TS_FULL.search(head)
        groups = range(1, 7)
        if m is None:
            m = _TS_HMS.search(head)
            if m is None:
                return None
            groups = range(3, 6)  # month and day are glued to the level letter ("E1218"): literal text
        idx = [by_start.get(m.start(g)) for g in groups]
        for g, i in zip(groups, idx, strict=True):
            # a token is the group, or (the seconds) the group and its "."-fraction
            if i is None or not (spans[i][1] == m.end(g) or (g == groups[-1] and text.startswith(".", m.end(g)))):
                return None
        time_spec = ("full", *idx) if len(groups) == 6 else ("md", (m.group(1),), (m.group(2),), *idx)
        time_toks = {i for i in idx if i is not None}
        if m.group(7 if len(groups) == 6 else 6) is not None:
            frac = by_start.get(m.start(7 if len(groups) == 6 else 6))
            if frac is None:
                return None
            time_toks.add(frac)
        if _time(time_spec, toks, state.year) != pre.time:
            return None
    elif _TS_FULL.search(head) or _TS_HMS.search(head):
        return None  # a timestamp the prefix parser refused: not worth the risk
    fixed = [(i, toks[i]) for i in range(n_prefix) if i not in time_toks]
    free = [(i, len(toks[i])) for i in sorted(time_toks)]
    body_vals = [(i, float(toks[i])) for i in range(n_prefix, len(toks))]
    body_texts = {toks[i] for i in range(n_prefix, len(toks))}
    shapes: list[_EventShape] = []
    for ev in events:
        if ev.host != pre.host or ev.time != pre.time:
            return None
        step: Slot | None = None
        if ev.step is not None:
            cands = tuple(i for i, v in body_vals if v == ev.step and toks[i].isdigit())
            if not cands:
                return None
            step = _pick(cands)
        data: list[tuple[str, str, Any]] = []
        for k, v in ev.data.items():
            if k in _POST_KEYS and v == getattr(state, k):
                continue  # the file's state, re-applied per line
            if k == "implausible_rank":
                return None
            if k in _FLAG_KEYS and v == 1.0:
                data.append((k, "c", v))  # a marker the parser sets, never a token's value
                continue
            if isinstance(v, float):
                if not math.isfinite(v):
                    return None
                cands = tuple(i for i, x in body_vals if x == v)
                if not cands:
                    return None  # computed, or a constant: not the shortcut's business
                data.append((k, "t", _pick(cands)))
            elif isinstance(v, bool) or v is None:
                data.append((k, "c", v))
            elif isinstance(v, int):
                if any(x == v for _, x in body_vals):
                    return None  # an int that a token may have said
                data.append((k, "c", v))
            elif isinstance(v, str):
                if any(t in v for t in body_texts):
                    return None  # a string that a token may have said
                data.append((k, "c", v))
            else:
                return None
        shapes.append(_EventShape(ev.kind, step, data))
    tmpl = Prefixed("", pre.rank, pre.local_rank, pre.host, pre.pid, pre.device, pre.level, None, pre.logging_rank,
                    pre.node)
    return Shape(body_start, n_prefix, fixed, free, time_spec, tmpl, shapes)


def same_events(a: list[Event], b: list[Event]) -> bool:
    """The same events, field by field, values with their types (1 is not 1.0 in a report)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if (x.kind, x.rank, x.local_rank, x.host, x.time, x.step, x.failure, x.rank_from, x.source) != (
                y.kind, y.rank, y.local_rank, y.host, y.time, y.step, y.failure, y.rank_from, y.source):
            return False
        if type(x.step) is not type(y.step) or type(x.time) is not type(y.time):
            return False
        if [(k, type(v), v) for k, v in x.data.items()] != [(k, type(v), v) for k, v in y.data.items()]:
            return False
    return True
