"""The webhook sink: each incident change as one JSON POST (Slack-compatible).

The body is ``{"text": "<summary>\\n> <first evidence line>", "incident": {...}}``: Slack (and Mattermost, Teams
workflows, chat bots) show ``text``; other receivers read ``incident``, the same object as
in ``/api/incidents`` (secrets redacted). ``format="slack"`` sends ``text`` alone. Changes
wait in a bounded queue (the oldest is dropped when full: ``queue_full``); a 2xx is
emitted, a 4xx is ``rejected`` for good, a 5xx or a connection error is an error and is
retried with jittered backoff up to ``retries`` times (then ``gave_up``). At shutdown,
what is still queued gets one last try.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
from collections import deque
from typing import Any, Literal

from detectors.redact import redact
from monitor.live import Change
from monitor.report.escape import slack
from monitor.sinks.base import DropReason, Stats, admit
from monitor.sinks.registry import register

__all__ = ["WebhookSink", "body"]


def _strict(v: Any) -> Any:
    """Strict JSON: a non-finite number becomes its name ("nan", "inf", "-inf")."""
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, dict):
        return {k: _strict(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_strict(x) for x in v]
    return v


def body(change: Change, fmt: Literal["json", "slack"] = "json") -> dict[str, Any]:
    d = _strict(redact(change.incident))
    ini = d.get("initiator") or {}
    rank = "unknown rank" if ini.get("rank") is None else f"rank {ini['rank']}"
    step = "" if ini.get("step") is None else f" at step {ini['step']}"
    text = (f"[{slack(str(d['severity']).upper())}] incident {slack(change.kind)}: {slack(d['title'])} "
            f"(`{slack(d['failure'])}`) initiated by {slack(rank)}{slack(step)} · id {slack(d['id'])}")
    ev = (ini.get("evidence") or [None])[0]
    if isinstance(ev, dict):
        text += f"\n> {slack(ev.get('path'))}:{slack(ev.get('line'))}: {slack(str(ev.get('text', ''))[:300])}"
    return {"text": text} if fmt == "slack" else {"text": text, "incident": d}


@register("webhook")
class WebhookSink:
    kind = "webhook"

    def __init__(self, url: str, fmt: Literal["json", "slack"] = "json", max_queue: int = 1000, retries: int = 5,
                 timeout: float = 10.0, backoff: float = 0.5) -> None:
        self.url = url
        self.fmt = fmt
        self.queue: deque[dict[str, Any]] = deque()
        self.max_queue = max_queue
        self.retries = retries
        self.timeout = timeout
        self.backoff = backoff
        self.stats = Stats()
        self.ready = asyncio.Event()
        self.stopping = asyncio.Event()

    def incident(self, change: Change) -> None:
        if not admit(self.stats, change):
            return
        if len(self.queue) >= self.max_queue:
            self.queue.popleft()
            self.stats.dropped[DropReason.QUEUE_FULL] += 1
        self.queue.append(body(change, self.fmt))
        self.ready.set()

    async def _post(self, session: Any, doc: dict[str, Any], attempts: int) -> None:
        import aiohttp

        for attempt in range(attempts):
            try:
                async with session.post(self.url, json=doc) as r:
                    if 200 <= r.status < 300:
                        self.stats.emitted += 1
                        return
                    if 400 <= r.status < 500 and r.status != 429:
                        self.stats.dropped[DropReason.REJECTED] += 1
                        return
                    self.stats.errors += 1
            except (aiohttp.ClientError, TimeoutError):
                self.stats.errors += 1
            if attempt + 1 < attempts:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.stopping.wait(), timeout=self.backoff * 2**attempt * random.uniform(0.5, 1.5))
        self.stats.dropped[DropReason.GAVE_UP] += 1

    async def run(self) -> None:
        import aiohttp

        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout)) as session:
            while not self.stopping.is_set():
                if not self.queue:
                    self.ready.clear()
                    waiters = {asyncio.ensure_future(self.ready.wait()), asyncio.ensure_future(self.stopping.wait())}
                    _, pending = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
                    for w in pending:
                        w.cancel()
                    continue
                await self._post(session, self.queue.popleft(), self.retries)
            while self.queue:  # shutdown: one last try each
                await self._post(session, self.queue.popleft(), 1)

    def stop(self) -> None:
        self.stopping.set()
