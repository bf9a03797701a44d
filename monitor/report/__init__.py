"""Renderers of the diagnosis report: text (terminal), JSON, Markdown.

Imported on first use (PEP 562): the live daemon imports ``monitor.report.escape`` and
``monitor.report.html`` only, and must not load rich for the text renderer (its RSS).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from monitor.report.markdown import render_markdown
    from monitor.report.text import render_text

__all__ = ["render_markdown", "render_text"]


def __getattr__(name: str) -> Any:
    if name == "render_markdown":
        from monitor.report.markdown import render_markdown

        return render_markdown
    if name == "render_text":
        from monitor.report.text import render_text

        return render_text
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
