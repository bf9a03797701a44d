"""The fast path of field extraction: ``fields.extract``'s result, several times cheaper.

``fields.extract`` runs one case-insensitive ``finditer`` whose key alternatives are ~70
literals; Python's ``re`` tries every alternative at every position of the line, and
case-insensitive matching is slower still. Metric lines are the hot path of a diagnosis
(every rank logs its loss every step), so this module derives, from ``fields``' own
pattern (``_FIELD_NO_PARTS``, the one without the loss-component alternative) and synonym
table, an equivalent pattern that is cheaper to run, and feeds its matches to ``fields``' own
record logic:

- it is matched case-sensitively against the lower-cased line. For ASCII text that is
  exact (lower-casing keeps every offset, and the pattern's letters are lower-cased
  outside its escapes); any other text takes ``fields.extract`` itself;
- the literal alternations (the keys, the namespaces) become tries — ``l(?:oss(?:…)?|r)``
  — so a position that starts no key costs one character test. At one position the keys
  that match are prefixes of one another, and the trie tries the longer first, as the
  longest-first alternation does; the matches are the same;

Nothing here decides anything: if ``fields``' pattern changes shape so that a piece is not
found, that piece stays as it was (still exact, only slower). ``tests/detectors/
test_fastfields.py`` checks, line by line, that ``extract`` here equals ``fields.extract``
on every metric-looking line of the corpora and on generated lines.
"""

from __future__ import annotations

import re

from detectors.parsers import fields

__all__ = ["extract", "extract_records", "trie_regex"]


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
    """``fields._FIELD_NO_PARTS``, lower-cased and with its literal alternations as tries
    (None: not derivable)."""
    src = fields._FIELD_NO_PARTS
    if not src.flags & re.IGNORECASE:
        return None
    pattern = src.pattern
    keys = sorted(fields._LOOKUP, key=len, reverse=True)
    alts = "|".join("[ _-]".join(map(re.escape, s.split(" "))) for s in keys)
    # (keys in other scripts, "损失", "потери", can never match the ASCII text this path reads: left out)
    ascii_keys = [k for k in keys if k.isascii()]
    if (alts == fields._ALTS and f"(?P<key>{alts})" in pattern
            and all(re.fullmatch(r"[a-z0-9 /()\[\]]+", k) for k in ascii_keys)):
        pattern = pattern.replace(f"(?P<key>{alts})", f"(?P<key>{trie_regex(ascii_keys, '[ _-]')})", 1)
    # the namespaces: "(?P<evns>eval|val|…)[/._-]" and "(?:(?:train|…)[/._-])"
    # (only before a separator that no word continues with: then at most one word of a chain fits)
    for m in list(re.finditer(r"\((\?P<\w+>|\?:)([a-z|]+)\)(?=\[/\._-?\])", pattern)):
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


def extract_records(text: str) -> list[dict[str, float]]:
    """``fields.extract_records(text)``, computed by the fast pattern when ``text`` is ASCII
    and no "loss" on it can be a loss component (``fields._may_have_parts``)."""
    fast = _FAST
    if fast is None or not text.isascii() or fields._may_have_parts(text):
        return fields.extract_records(text)
    return fields._records(text.lower(), fast)


def extract(text: str) -> dict[str, float]:
    """``fields.extract(text)``: the first record of the line."""
    return extract_records(text)[0]
