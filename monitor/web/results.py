"""Diagnoses made by ``rankwatch serve``, kept in memory (the last few) so that the page can
show the report, and the redacted copy can be copied or downloaded, without a second upload."""

from __future__ import annotations

import secrets
from collections import OrderedDict
from dataclasses import dataclass, field

from detectors.detect import JobState
from detectors.redact import redact
from monitor.report import render_markdown
from monitor.report.html import render_report_html

__all__ = ["Result", "Results"]


@dataclass
class Result:
    report: dict
    state: JobState | None
    _rendered: dict[tuple[str, bool], str] = field(default_factory=dict)

    def render(self, fmt: str, redacted: bool) -> str:
        """The report as ``html`` (the same renderer as ``diagnose --format html``) or
        ``markdown``; ``redacted``: what ``diagnose --redact`` gives (host, user, IP, path placeholders)."""
        key = (fmt, redacted)
        if key not in self._rendered:
            report = redact(self.report, bundle=True) if redacted else self.report
            self._rendered[key] = render_report_html(report, self.state) if fmt == "html" else render_markdown(report)
        return self._rendered[key]


class Results:
    """The last ``keep`` results, each under an unguessable id."""

    def __init__(self, keep: int = 8) -> None:
        self.keep = keep
        self._items: OrderedDict[str, Result] = OrderedDict()

    def add(self, result: Result) -> str:
        rid = secrets.token_urlsafe(12)
        self._items[rid] = result
        while len(self._items) > self.keep:
            self._items.popitem(last=False)
        return rid

    def get(self, rid: str) -> Result | None:
        return self._items.get(rid)
