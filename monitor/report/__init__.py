"""Renderers of the diagnosis report: text (terminal), JSON, Markdown."""

from monitor.report.markdown import render_markdown
from monitor.report.text import render_text

__all__ = ["render_markdown", "render_text"]
