"""The console sink: incident changes printed by ``monitor.console.LiveConsole``."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from monitor.live import Change
from monitor.sinks.base import DropReason, Stats, admit
from monitor.sinks.registry import register

if TYPE_CHECKING:
    from monitor.console import LiveConsole

__all__ = ["ConsoleSink"]


@register("console")
class ConsoleSink:
    kind = "console"

    def __init__(self, console: LiveConsole | None = None) -> None:
        if console is None:
            from monitor.console import LiveConsole  # rich: loaded only when a console is printed to (RSS)

            console = LiveConsole()
        self.out = console
        self.stats = Stats()
        self.stopping = asyncio.Event()

    def incident(self, change: Change) -> None:
        if not admit(self.stats, change):
            return
        try:
            self.out.change(change)
        except Exception:  # a closed stream, a broken pipe: counted, the daemon goes on
            self.stats.errors += 1
            self.stats.dropped[DropReason.GAVE_UP] += 1
            return
        self.stats.emitted += 1

    async def run(self) -> None:
        await self.stopping.wait()  # printing is synchronous: nothing to deliver in the background

    def stop(self) -> None:
        self.stopping.set()
