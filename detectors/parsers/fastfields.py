"""The fast path of field extraction: ``fields.extract``'s result, several times cheaper.

``fields.extract`` runs one case-insensitive ``finditer`` whose key alternatives are ~70
literals; Python's ``re`` tries every alternative at every position of the line, and
case-insensitive matching is slower still. Metric lines are the hot path of a diagnosis
(every rank logs its loss every step), so this module derives, from ``fields``' own
pattern and synonym table, an equivalent pattern that is cheaper to run:

- it is matched case-sensitively against the lower-cased line. For ASCII text that is
  exact (lower-casing keeps every offset, and the pattern's letters are lower-cased
  outside its escapes); any other text takes ``fields.extract`` itself;
- the literal alternations (the keys, the namespaces) become tries — ``l(?:oss(?:…)?|r)``
  — so a position that starts no key costs one character test. At one position the keys
  that match are prefixes of one another, and the trie tries the longer first, as the
  longest-first alternation does; the matches are the same;
- a key's spelling → canonical key is memoised, and values are read with ``float``.

Nothing here decides anything: if ``fields``' pattern changes shape so that a piece is not
found, that piece stays as it was (still exact, only slower). ``tests/detectors/
test_fastfields.py`` checks, line by line, that ``extract`` here equals ``fields.extract``
on every metric-looking line of the corpora and on generated lines.
"""

from __future__ import annotations

import math
import re

from detectors.parsers import fields

__all__ = ["extract", "trie_regex"]


def trie_regex(words: list[str], sep: str = "") -> str:
    """An alternation of ``words`` as a trie (longer continuations first), in ``re`` syntax.

    ``sep``: the regex that stands for a space in a word (``fields`` writes ``[ _-]``).
    """
    tree: dict[str, dict] = {}
    for w in words:
        node = tree
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}  # end of a word

    def emit(node: dict[str, dict]) -> str:
        ends = "" in node
        branches = [(sep if ch == " " and sep else re.escape(ch)) + emit(sub) for ch, sub in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if ends:
            return ("(?:" + body + ")?") if len(branches) == 1 else body + "?"
        return body

    return emit(tree)


def _lower_outside_escapes(pattern: str) -> str:
    out = []
    i = 0
    while i < len(pattern):
        if pattern[i] == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if pattern.startswith("(?P", i):  # a named group (its name is checked by the caller)
            out.append("(?P")
            i += 3
            continue
        out.append(pattern[i].lower())
        i += 1
    return "".join(out)


def _alternation(names: str) -> list[str] | None:
    """The words of a plain ``a|b|c`` alternation (None if it is not one)."""
    words = names.split("|")
    return words if all(re.fullmatch(r"[a-z]+", w) for w in words) else None


def _derive() -> re.Pattern[str] | None:
    """``fields._FIELD``, lower-cased and with its literal alternations as tries (None: not derivable)."""
    src = fields._FIELD
    if not src.flags & re.IGNORECASE:
        return None
    pattern = src.pattern
    keys = sorted(fields._LOOKUP, key=len, reverse=True)
    alts = "|".join("[ _-]".join(map(re.escape, s.split(" "))) for s in keys)
    if alts == fields._ALTS and f"(?P<key>{alts})" in pattern and all(re.fullmatch(r"[a-z0-9 ]+", k) for k in keys):
        pattern = pattern.replace(f"(?P<key>{alts})", f"(?P<key>{trie_regex(keys, '[ _-]')})", 1)
    # the namespaces: "(?P<evns>eval|val|…)[/._]" and "(?:(?:train|…)[/._])"
    # (only before a separator that no word continues with: then at most one word of a chain fits)
    for m in list(re.finditer(r"\((\?P<\w+>|\?:)([a-z|]+)\)(?=\[/\._\])", pattern)):
        words = _alternation(m.group(2))
        if words and len(words) > 1:
            pattern = pattern.replace(m.group(0), f"({m.group(1)}{trie_regex(words)})", 1)
    pattern = _lower_outside_escapes(pattern)
    try:
        fast = re.compile(pattern, src.flags & ~re.IGNORECASE)
    except re.error:
        return None
    if fast.groupindex != src.groupindex:
        return None
    return fast


_FAST = _derive()
# findall's tuple positions of the groups read (group n is at n - 1)
_KEY, _EVNS, _V = ((_FAST.groupindex["key"] - 1, _FAST.groupindex["evns"] - 1, _FAST.groupindex["v"] - 1)
                   if _FAST is not None else (0, 0, 0))
_KEY_CACHE: dict[str, str] = {}  # a key as written (lower-cased) → its canonical name
_SEP = fields._SEP
_LOOKUP = fields._LOOKUP


def extract(text: str) -> dict[str, float]:
    """``fields.extract(text)``, computed by the fast pattern when ``text`` is ASCII."""
    fast = _FAST
    if fast is None or not text.isascii():
        return fields.extract(text)
    out: dict[str, float] = {}
    for groups in fast.findall(text.lower()):  # tuples of the groups: no match objects
        raw = groups[_KEY]
        key = _KEY_CACHE.get(raw)
        if key is None:
            key = _KEY_CACHE[raw] = _LOOKUP[_SEP.sub(" ", raw)]
        if groups[_EVNS]:
            if key != "loss":
                continue  # eval/grad_norm and the like are not training signals
            key = "eval_loss"
        if key in out:
            continue
        try:
            val = float(groups[_V])
        except ValueError:
            continue  # what the value pattern matches always reads (parse_number: None)
        if key == "step":
            if not math.isfinite(val) or val < 0 or val != int(val):
                continue  # "iter time: 0.81" is not a step counter
        elif val != val:
            val = math.nan  # "-nan" is nan, as in parse_number
        out[key] = val
    return out
