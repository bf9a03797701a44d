"""The fast path: find the few lines of a chunk that any rule could match, in one pass.

Most of a training log is noise (NCCL INFO, progress bars). ``Scanner.scan`` runs every
rule's pattern over a whole chunk of bytes at once with a multi-pattern engine and
returns, for each line that matched anything, its byte span and the ids of the rules
that matched it. Only those lines reach Python-level parsing.

Engines, best first: Hyperscan (x86_64 wheels), RE2 (``google-re2``, wheels for x86_64
and aarch64), then Python's ``re``. All three are used with the same patterns;
Hyperscan and RE2 run in linear time on any input. Candidate lines are a superset of
the lines a rule's Python regex matches: a false positive only costs a Python regex
call, never a wrong result.

Noise is rejected by structure, after the scan and only on the candidate lines (a few
µs each), by a ``NoiseRule`` the parser builds from its rules and metric keys: a metric
trigger needs a metric key beside a number on the line, and on a line shaped like noise —
an ``NCCL INFO`` line, or a line of tqdm bar updates only — the soft triggers (metrics,
throughput) need one too. Fingerprints and the other rules are never vetoed.

Compiling the Hyperscan database takes ~0.3 s; a process may hand the scanner a
``DatabaseCache`` (``set_database_cache``; the CLI uses ``monitor.scancache``, a file per
pattern set) to load the serialised database instead. The scanner itself does no I/O.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, Protocol

__all__ = ["ENGINES", "DatabaseCache", "NoiseRule", "ScanForm", "Scanner", "available_engines", "best_engine", "set_database_cache",
           "widen_for_bytes"]

# noise by shape: the NCCL debug header of an INFO line (``host:pid:tid [dev] [file:line] NCCL INFO``),
# and a \r-segment that is a tqdm bar and nothing after it (``desc:  42%|████▏     | 5/12 [..]``)
_NCCL_INFO = re.compile(rb":\d+:\d+ \[\d+\] (?:\S+:\d+ (?:\(\w+\) )?)?NCCL INFO ")
_BAR_ONLY = re.compile(rb"[^\r\n]*\d{1,3}%\|[^\r\n]*\][ \t]*")
MAX_LAYOUTS = 4096  # line layouts whose has_pair answer a NoiseRule remembers


@dataclass(frozen=True)
class NoiseRule:
    """Which candidate hits structure can reject (rule ids are pattern indexes)."""

    metric_ids: frozenset[int]  # kept only with a metric key beside a number on the line
    soft_ids: frozenset[int]  # kept on a noise-shaped line only with a metric key beside a number
    metric_keys: Iterable[str] = ()
    _pair: re.Pattern[bytes] = field(init=False, repr=False, compare=False)
    # has_pair by the line's digit layout (see __post_init__): layout → answer, bounded
    _layout: bytes | None = field(init=False, repr=False, compare=False)
    _memo: dict[bytes, bool] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        keys = sorted({k.lower() for k in self.metric_keys if k}, key=len, reverse=True)
        # The pair pattern tests digits only through classes holding them all (\d, [a-z0-9_]),
        # except the digits written in a key ("log2_loss_scale"): a line with every other digit
        # made one such digit has the same answer. Metric lines repeat their layout with other
        # numbers, so the answer is looked up by that layout (one translate instead of a search).
        literal = {c for k in keys for c in k.encode() if 48 <= c <= 57}
        free = bytes(c for c in b"0123456789" if c not in literal)
        layout = bytes.maketrans(free, free[:1] * len(free)) if free else None
        object.__setattr__(self, "_layout", layout)
        object.__setattr__(self, "_memo", {})
        alt = "|".join(re.escape(k) for k in keys) or "(?!)"
        # searched in the lower-cased line; no lookbehind, so that re can skip ahead on the first
        # letters (2 µs a line instead of 6): the word start is checked on each match instead
        # (the counter the value was taken at may stand between: "loss at batch 5 = 17.47", fields.py)
        pair = (rf"(?:{alt})(?:_[a-z][a-z0-9_]{{0,30}})?(?:\s{{1,4}}(?:at|@)\s{{1,4}}(?:step|batch|iter|iteration|epoch|update)"
                rf"\s{{0,4}}\d{{1,9}})?_?['\"\]]?\s{{0,16}}(?:[=:|]|is|：)?\s{{0,16}}['\"]?(?:tensor\(\[?|\[ {{0,8}})?[-+]?(?:\d|\.\d|nan|inf)")
        object.__setattr__(self, "_pair", re.compile(pair.encode()))

    def has_pair(self, line: bytes) -> bool:
        """A metric key (as a word; a prefix such as ``eval_`` or ``train/`` may precede it) beside a number."""
        if self._layout is None:
            return self._search(line)
        key = line.translate(self._layout)
        memo = self._memo
        got = memo.get(key)
        if got is None:
            got = self._search(line)
            if len(memo) < MAX_LAYOUTS:
                memo[key] = got
        return got

    def _search(self, line: bytes) -> bool:
        low = line.lower()
        for m in self._pair.finditer(low):
            s = m.start()
            if s == 0 or not low[s - 1 : s].isalnum() or line[s : s + 1] == b"L":
                return True  # a word start, or a CamelCase part glued to one ("RPNL1Loss=nan", MXNet)
        return False

    def keep(self, line: bytes, ids: list[int]) -> list[int]:
        """The ids of ``ids`` that survive on ``line`` (maybe none)."""
        if self.has_pair(line):
            return ids
        drop = self.soft_ids if _noise_shaped(line) else self.metric_ids
        return [i for i in ids if i not in drop]


def _noise_shaped(line: bytes) -> bool:
    if _NCCL_INFO.search(line) is not None:
        return True
    if b"%|" not in line:
        return False
    return all(not seg.strip() or _BAR_ONLY.fullmatch(seg) is not None for seg in line.split(b"\r"))


class DatabaseCache(Protocol):
    """Where compiled scan databases are kept between processes (bytes by key)."""

    def load(self, key: str) -> bytes | None: ...

    def store(self, key: str, data: bytes) -> None: ...


_DB_CACHE: DatabaseCache | None = None


def set_database_cache(cache: DatabaseCache | None) -> None:
    """Use ``cache`` for the Hyperscan databases of scanners built from now on (None: compile)."""
    global _DB_CACHE
    _DB_CACHE = cache


def _importable(engine: str) -> bool:
    if engine == "re":
        return True
    try:
        __import__(engine)
    except ImportError:
        return False
    return True


def available_engines() -> list[str]:
    return [e for e in ENGINES if _importable(e)]


def best_engine() -> str:
    """The first available engine, without importing the ones after it (re2 costs ~1.5 MB of RSS)."""
    return next(e for e in ENGINES if _importable(e))


ENGINES = ("hyperscan", "re2", "re")

Hit = tuple[int, int, list[int]]  # (line start, line end (exclusive, at the \n), rule ids)


def _line_hits(buf: bytes, ends: list[tuple[int, int]]) -> list[Hit]:
    """Map (match end offset, rule id) pairs to unique lines, in order."""
    ends.sort()
    hits: list[Hit] = []
    rfind = buf.rfind
    find = buf.find
    n = len(buf)
    for to, rid in ends:
        last = to - 1 if to > 0 else 0  # offset of the match's last byte
        if hits and hits[-1][0] <= last < hits[-1][1]:
            if rid not in hits[-1][2]:  # another match on the same line: no search needed
                hits[-1][2].append(rid)
            continue
        if buf[last : last + 1] == b"\n":
            end = last  # the match swallowed the newline: it belongs to this line
        else:
            end = find(b"\n", last)
            if end < 0:
                end = n
        start = rfind(b"\n", 0, end) + 1
        if hits and hits[-1][0] == start:
            if rid not in hits[-1][2]:
                hits[-1][2].append(rid)
            continue
        hits.append((start, end, [rid]))
    return hits


@dataclass(frozen=True)
class ScanForm:
    """What Hyperscan runs in place of one rule's pattern, when the pattern itself is slow to scan
    for (a common word such as ``NCCL INFO`` or ``|`` followed by a long tail to try).

    ``sure``: patterns each of whose matches is a match of the rule's pattern (alternatives of it,
    or narrower). ``maybe``: looser patterns (a rare literal the rule's pattern always contains). Every
    line the rule's pattern matches must match one of the two lists. A line that only a ``maybe``
    pattern matched gets the rule's id only if the rule's own pattern matches in the line (Python
    ``re``), so the ids a line gets are those of the rule's pattern: the form changes speed only."""

    sure: tuple[str, ...] = ()
    maybe: tuple[str, ...] = ()


class Scanner:
    def __init__(self, patterns: Sequence[str], engine: str | None = None, noise: NoiseRule | None = None,
                 forms: Mapping[int, ScanForm] | None = None) -> None:
        """``forms``: for some rules (by index), what Hyperscan scans for instead (``ScanForm``); the
        other engines run the rules' own patterns."""
        self.patterns = list(patterns)
        self.noise = noise
        self.forms = dict(forms or {})
        if any(not 0 <= i < len(self.patterns) for i in self.forms):
            raise ValueError("a scan form names a rule that is not in patterns")
        if engine is not None and (engine not in ENGINES or not _importable(engine)):
            have = ", ".join(available_engines())
            raise ValueError(f"scan engine {engine!r} is not available here (have: {have})")
        self.engine = engine or best_engine()
        self._py: list[re.Pattern[bytes]] = []
        # a maybe pattern of rule i reports id n + i (n: the number of rules), checked by _confirmed
        self._maybe: dict[int, tuple[int, re.Pattern[bytes]]] = {}
        if self.engine == "hyperscan":
            n = len(self.patterns)
            exprs: list[tuple[str, int]] = []
            for i, own in enumerate(self.patterns):
                form = self.forms.get(i)
                if form is None:
                    exprs.append((widen_for_bytes(own), i))
                    continue
                exprs += [(widen_for_bytes(p), i) for p in form.sure] + [(widen_for_bytes(p), n + i) for p in form.maybe]
                if form.maybe:
                    # searched in one line (no newline): MULTILINE would change nothing but make re
                    # try a pattern that starts with "^" at every offset
                    self._maybe[n + i] = (i, re.compile(own.encode()))
            self._db: Any = _hyperscan_db(exprs)
        elif self.engine == "re2":
            import re2

            opts = re2.Options()
            opts.max_mem = 256 << 20
            combined = "|".join(f"(?:{_uncapture(p)})" for p in self.patterns)
            self._any = re2.compile(f"(?m){combined}".encode(), opts)
            self._set = re2.Set.SearchSet(opts)
            for p in self.patterns:
                self._set.Add(_uncapture(p).encode())
            self._set.Compile()
        else:
            wide = [widen_for_bytes(p) for p in self.patterns]
            self._py = [re.compile(p.encode(), re.MULTILINE) for p in wide]
            self._any_py = re.compile("|".join(f"(?:{_uncapture(p)})" for p in wide).encode(), re.MULTILINE)

    def scan(self, buf: bytes) -> list[Hit]:
        """Return the candidate lines of ``buf`` with the ids of the rules they matched."""
        hits = self._scan(buf)
        noise = self.noise
        if noise is None:
            return hits
        soft = noise.soft_ids
        out: list[Hit] = []
        for hit in hits:
            if soft.isdisjoint(hit[2]):
                out.append(hit)
                continue
            ids = noise.keep(buf[hit[0] : hit[1]], hit[2])
            if ids:
                out.append((hit[0], hit[1], ids))
        return out

    def _scan(self, buf: bytes) -> list[Hit]:
        if not buf:
            return []
        if self.engine == "hyperscan":
            ends: list[tuple[int, int]] = []
            append = ends.append

            def on_match(rid: int, frm: int, to: int, flags: int, ctx: object) -> None:
                append((to, rid))

            self._db.scan(buf, match_event_handler=on_match)
            found = _line_hits(buf, ends)
            if self._maybe and ends and max(map(itemgetter(1), ends)) >= len(self.patterns):
                return self._confirmed(buf, found)  # a maybe pattern matched (rare: no copy otherwise)
            return found
        hits: list[Hit] = []
        rx = self._any if self.engine == "re2" else self._any_py
        pos = 0
        n = len(buf)
        while pos < n:
            m = rx.search(buf, pos)
            if m is None:
                break
            # the line where the match starts; a pattern whose negated class ([^)]) ran on across
            # the newline is not a match of that line, and the ids below are searched in the line alone
            start = buf.rfind(b"\n", 0, m.start()) + 1
            end = buf.find(b"\n", m.start())
            if end < 0:
                end = n
            line = buf[start:end]
            if self.engine == "re2":
                ids = list(self._set.Match(line) or ())  # None when nothing matches in the line alone
            else:
                ids = [i for i, p in enumerate(self._py) if p.search(line)]
            if ids:
                hits.append((start, end, sorted(ids)))
            pos = end + 1
        return hits


    def _confirmed(self, buf: bytes, hits: list[Hit]) -> list[Hit]:
        """``hits`` with each maybe id made its rule's id where the rule's pattern matches the line,
        and dropped where it does not (a line left with no id is no candidate)."""
        maybe = self._maybe
        out: list[Hit] = []
        for start, end, ids in hits:
            if not maybe.keys().isdisjoint(ids):
                line = buf[start:end]
                kept = [i for i in ids if i not in maybe]
                for i in ids:
                    if i in maybe:
                        rid, rx = maybe[i]
                        if rid not in kept and rx.search(line) is not None:
                            kept.append(rid)
                if not kept:
                    continue
                ids = kept
            out.append((start, end, ids))
        return out


def _hyperscan_db(exprs: list[tuple[str, int]]) -> Any:
    """A block-mode database of (pattern, id) pairs (several patterns may report one id)."""
    import hyperscan

    flags = hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_ALLOWEMPTY
    cache = _DB_CACHE
    patterns = [p for p, _ in exprs]
    ids = [i for _, i in exprs]
    # (the ids are in the key only when they are not 0, 1, 2, ...: old cache entries stay valid)
    id_key = [] if ids == list(range(len(ids))) else [f"ids {ids}"]
    key = hashlib.sha256(
        "\0".join([f"hyperscan {getattr(hyperscan, '__version__', '?')} block flags {flags}", *id_key, *patterns]).encode()
    ).hexdigest()
    if cache is not None:
        data = cache.load(key)
        if data is not None:
            try:
                db = hyperscan.loadb(data, hyperscan.HS_MODE_BLOCK)
                db.scratch = hyperscan.Scratch(db)
                return db
            except Exception:  # hyperscan.error and friends: a stale or damaged entry, recompile
                pass
    db = hyperscan.Database()
    db.compile(
        expressions=[p.encode() for p in patterns],
        ids=ids,
        elements=len(patterns),
        flags=[flags] * len(patterns),
    )
    if cache is not None:
        cache.store(key, hyperscan.dumpb(db))
    return db


_CAPTURE = re.compile(r"\(\?P<\w+>|\((?!\?)")
_BOUND = re.compile(r"\{(\d*)(,?)(\d*)\}")
_WIDE = 4  # the most bytes one character takes in UTF-8


def widen_for_bytes(pattern: str) -> str:
    """The pattern for an engine that scans bytes (Hyperscan, ``re`` on bytes) where the rule
    means characters: a single-character atom that can match a non-ASCII character (``.``, a
    negated class, ``\\S``, ``\\W``, ``\\D``) may take up to four bytes, so its count is widened
    (``.{0,80}`` → ``.{0,320}``, a lone ``[^x]`` → ``[^x]{1,4}``). The scan stays a superset of
    the lines the rule's own regex matches on the decoded text (a line of Chinese text inside a
    bounded gap is still found); RE2 reads UTF-8 itself and keeps the pattern as written."""
    if "." not in pattern and "[^" not in pattern and "\\S" not in pattern and "\\W" not in pattern and "\\D" not in pattern:
        return pattern
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        start = i
        wide = False
        if c == "\\":
            wide = pattern[i + 1 : i + 2] in ("S", "W", "D")
            i += 2
        elif c == "[":
            j = i + 1
            negated = j < n and pattern[j] == "^"
            if negated:
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            i = j + 1
            wide = negated
        elif c == ".":
            i += 1
            wide = True
        else:
            i += 1
        atom = pattern[start:i]
        if not wide:
            out.append(atom)
            continue
        q = pattern[i : i + 1]
        if q == "{" and (m := _BOUND.match(pattern, i)) is not None:
            lo, comma, hi = m.group(1), m.group(2), m.group(3)
            i = m.end()
            if not comma:
                out.append(f"{atom}{{{lo},{int(lo) * _WIDE}}}")
            elif hi:
                out.append(f"{atom}{{{lo or 0},{int(hi) * _WIDE}}}")
            else:
                out.append(f"{atom}{{{lo or 0},}}")
        elif q == "?":
            i += 1
            out.append(f"{atom}{{0,{_WIDE}}}")
        elif q in ("*", "+"):
            out.append(atom)  # unbounded already
        else:
            out.append(f"{atom}{{1,{_WIDE}}}")
    return "".join(out)


def _uncapture(pattern: str) -> str:
    """Turn capturing groups into non-capturing ones (RE2 sets and unions need no captures)."""
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if c == "[":
            j = i + 1
            if j < len(pattern) and pattern[j] == "^":
                j += 1
            if j < len(pattern) and pattern[j] == "]":
                j += 1
            while j < len(pattern) and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            out.append(pattern[i : j + 1])
            i = j + 1
            continue
        m = _CAPTURE.match(pattern, i)
        if m:
            out.append("(?:")
            i = m.end()
            continue
        out.append(c)
        i += 1
    return "".join(out)
