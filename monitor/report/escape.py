"""Untrusted text has one way out per medium: this module is it.

Log lines, file names, job names and anything else that came from outside are hostile:
an escape sequence in a log line must not retitle or clear the reader's terminal, a
``[x](javascript:…)`` must not become a link in a Markdown report, a ``<script>`` must not
run in the HTML one, and ``[/x]`` must not be read as rich markup. Every renderer passes
outside text through exactly one of:

- ``terminal(text)``: control characters (C0, C1, DEL, and the bidirectional overrides
  that reorder what is shown) become visible escapes (``\\x1b``, ``\\n``, ``\\u202e``);
  the result is plain text, to be printed as a ``rich.text.Text`` (never as markup);
- ``markdown(text)``: ``terminal`` and then every character Markdown or HTML gives a
  meaning to is backslash-escaped or made an entity, so it shows as itself;
  ``code_span``/``fence`` quote text as inline code / a code block whose backtick run is
  longer than any in the text, so the text cannot close it;
- ``html(text)``: ``terminal`` (newlines kept) and then ``html.escape`` (quotes included);
- ``slack(text)``: ``terminal`` and then Slack's own escaping (``&``, ``<``, ``>``), so no
  ``<!channel>``, ``<@user>`` or ``<url|label>`` can come out of log text.
"""

from __future__ import annotations

import html as _html
import re
from collections.abc import Callable
from typing import Any

__all__ = ["MULTILINE_KEYS", "code_span", "fence", "html", "markdown", "report", "slack", "terminal"]

# C0 controls but tab, DEL, C1 controls, bidi embeddings/overrides/isolates, line/paragraph separators
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
_CONTROL_KEEP_NL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\x1b": "\\x1b"}
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>])")
_BACKTICKS = re.compile(r"`+")
# report fields whose catalog text is multi-line by design (fixes, commands)
MULTILINE_KEYS = frozenset({"fix", "verify", "fix_why", "mechanism", "summary", "snippet"})


def _visible(m: re.Match[str]) -> str:
    c = m.group(0)
    if c in _NAMED:
        return _NAMED[c]
    n = ord(c)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}"


def terminal(text: Any, multiline: bool = False) -> str:
    """``text`` with every control character shown, never acted on (newlines kept only
    when ``multiline``)."""
    s = "" if text is None else str(text)
    return (_CONTROL_KEEP_NL if multiline else _CONTROL).sub(_visible, s)


def markdown(text: Any) -> str:
    """``text`` as literal Markdown inline text: no link, image, emphasis, heading, list,
    table cell break or raw HTML can come out of it."""
    s = _MD_SPECIAL.sub(r"\\\1", terminal(text))
    return s.replace("&", "&amp;").replace("<", "&lt;")


def code_span(text: Any) -> str:
    """``text`` as one inline code span (a backtick run it does not contain delimits it)."""
    s = terminal(text)
    longest = max((len(m.group(0)) for m in _BACKTICKS.finditer(s)), default=0)
    tick = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or not s.strip() else ""
    return f"{tick}{pad}{s}{pad}{tick}"


def fence(lines: list[str], multiline: bool = False) -> list[str]:
    """``lines`` as a fenced code block that no line can close (one control-free line each,
    unless ``multiline`` keeps the newlines inside a line)."""
    body = [terminal(x, multiline=multiline) for x in lines]
    longest = max((len(m.group(0)) for x in body for m in _BACKTICKS.finditer(x)), default=0)
    tick = "`" * max(3, longest + 1)
    return [tick, *body, tick]


def html(text: Any) -> str:
    """``text`` safe anywhere in an HTML element or a quoted attribute (newlines are kept:
    HTML gives them no power; pass one-line fields through ``terminal`` first)."""
    return _html.escape(terminal(text, multiline=True), quote=True)


def slack(text: Any) -> str:
    """``text`` as literal Slack message text (mrkdwn control sequences escaped)."""
    return terminal(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def report(obj: Any, fn: Callable[[str, bool], str] | None = None, key: str = "") -> Any:
    """A copy of a JSON-like report with every string passed through ``terminal`` (catalog
    fields in ``MULTILINE_KEYS`` keep their newlines)."""
    esc = fn or (lambda s, multi: terminal(s, multiline=multi))
    if isinstance(obj, str):
        return esc(obj, key in MULTILINE_KEYS)
    if isinstance(obj, dict):
        return {k: report(v, esc, k) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [report(v, esc, key) for v in obj]
    return obj
