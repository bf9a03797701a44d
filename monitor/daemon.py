"""``rankwatch run``: tail, diagnose live, export. One asyncio loop, four tasks.

- reader: waits for an inotify hint, a rescan or (without inotify) ``poll_interval``, reads
  what was appended (a fair turn over all files), feeds the engine, re-evaluates incidents;
- rescanner: every ``rescan_interval`` reconciles files with the globs (the truth: inotify
  misses NFS/Lustre writes and can overflow);
- checkpointer: every ``checkpoint_interval`` writes positions + engine state atomically;
- HTTP: aiohttp serving ``/metrics``, ``/healthz``, ``/api/incidents`` and the live page ``/``
  (``monitor/web/live.py``).
On suspicion only (a stall opens, or the first collective timeout line arrives) one
bounded round of ``py-spy dump`` over this node's ranks runs in a worker thread
(monitor/stacks.py); its verdict names the hung rank (``LiveEngine.set_stacks``) and, with
MQTT, the node's reduced stacks go to the aggregator, which compares every node's.
SIGTERM/SIGINT: read what is left, evaluate, write a final checkpoint, exit 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import threading
import time
import traceback
from collections import Counter, OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from aiohttp import web
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel

from detectors.events import Event, EventKind
from detectors.parsers.base import FileState
from detectors.stall import suspicion
from monitor import checkpoint
from monitor.config import Settings
from monitor.live import Change, LiveEngine
from monitor.metrics import RankwatchCollector
from monitor.mqtt import (
    EventPayload,
    Outbox,
    Publisher,
    StatusPayload,
    decode_event,
    encode_event,
    parse_url,
    topic,
    topic_filter,
)
from monitor.sinks import Sink
from monitor.sinks import build as build_sink
from monitor.sinks.metrics import SinkCollector
from monitor.stacks import Sampler, StackSummary, summary
from monitor.tailer import Tailer, glob_base
from monitor.web.live import add_live_page

_P = TypeVar("_P", bound=BaseModel)  # a broker payload model
CHECKPOINT_SHARE = 20  # checkpoints at most every 20x their own cost: <= 5 % of the event loop

__all__ = ["Daemon"]

Clock = Callable[[], float]


class _Hints:
    """watchdog (inotify) events → an asyncio event. Hints only: the rescan is the truth."""

    def __init__(self, loop: asyncio.AbstractEventLoop, wake: asyncio.Event, dirs: list[str],
                 on_hint: Callable[[], None] | None = None) -> None:
        self.observer: Any = None
        try:
            from watchdog.events import FileSystemEventHandler
            from watchdog.observers import Observer
        except ImportError:
            return

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                loop.call_soon_threadsafe(wake.set)
                if on_hint is not None:
                    loop.call_soon_threadsafe(on_hint)

        try:
            obs = Observer()
            for d in dirs:
                if os.path.isdir(d):
                    obs.schedule(Handler(), d, recursive=True)
            obs.daemon = True
            obs.start()
            self.observer = obs
        except OSError:
            self.observer = None  # inotify unavailable or exhausted: polling only

    def stop(self) -> None:
        if self.observer is not None:
            self.observer.stop()
            self.observer.join(timeout=5)


class Daemon:
    def __init__(self, cfg: Settings, clock: Clock = time.time, on_change: Callable[[Change], None] | None = None,
                 on_finding: Callable[[Event], None] | None = None, log: Callable[[str], None] = print) -> None:
        self.cfg = cfg
        self.clock = clock
        self.on_change = on_change
        self.on_finding = on_finding
        self.log = log
        self.engine = LiveEngine(cfg.job, close_after=cfg.close_after, stall_factor=cfg.stall_factor,
                                 stall_floor=cfg.stall_floor, node_mode=bool(cfg.mqtt) and not cfg.aggregate,
                                 max_ranks=cfg.limits.max_ranks)
        self.publisher: Publisher | None = None
        self.seen_ids: OrderedDict[str, None] = OrderedDict()  # aggregator: event ids already folded in
        if cfg.mqtt:
            outbox = Outbox(max_events=cfg.mqtt_outbox)
            sub = ([topic_filter(cfg.job, "findings"), topic_filter(cfg.job, "stacks"), topic_filter(cfg.job, "status")]
                   if cfg.aggregate else None)
            self.publisher = Publisher(parse_url(cfg.mqtt), cfg.job, host=cfg.host, outbox=outbox, log=log,
                                       subscribe=sub, on_message=self._remote if cfg.aggregate else None,
                                       cafile=str(cfg.mqtt_cafile) if cfg.mqtt_cafile else None,
                                       keepalive=cfg.mqtt_keepalive)
        # the tailer parses with the engine's parser and opens files through it (one engine, as diagnose)
        self.tailer = Tailer(cfg.logs, self.engine.core.parser, self._sink, max_files=cfg.limits.max_files,
                             max_line=cfg.limits.max_line_bytes, chunk=cfg.limits.read_chunk_bytes,
                             year=time.gmtime().tm_year, engine=self.engine.core)
        self.registry = CollectorRegistry(auto_describe=False)
        self.collector = RankwatchCollector(self.engine, self.tailer, cfg.limits.max_ranks)
        self.collector.publisher = self.publisher
        self.registry.register(self.collector)
        self.sinks: list[Sink] = []  # where incident changes go (monitor/sinks), each counted
        if self.publisher is not None and cfg.aggregate:
            self.sinks.append(build_sink("mqtt", outbox=self.publisher.outbox, job=cfg.job))
        if cfg.webhook:
            self.sinks.append(build_sink("webhook", url=cfg.webhook, fmt=cfg.webhook_format))
        self.registry.register(SinkCollector(self.sinks))
        self.wake = asyncio.Event()
        self.stopping = asyncio.Event()
        self.dirty = False
        self.runner: web.AppRunner | None = None
        self.bound: tuple[str, int] | None = None
        self.resume_note = ""
        self.hinted = False  # inotify hints are active
        self.hint_seen = False  # an inotify event arrived since the last rescan
        self.saved_mark: tuple[int, int, int, int] | None = None
        self.tasks: dict[str, asyncio.Task[Any]] = {}
        # the last verdict's error while verdicts fail (None once one succeeds): reading goes on,
        # /healthz says so, each failure is counted (dropped{reason="verdict_failed"})
        self.verdict_error: str | None = None
        self._verdict_errors_logged: set[str] = set()
        self.owner = threading.get_ident()  # the loop's thread: the engine's only writer
        self.pending: list[Event] = []  # read by a worker thread, not yet dispatched
        self.io_lock = asyncio.Lock()  # the tailer: one slice, rescan, checkpoint or scrape at a time
        # held by the worker thread for a whole slice: a cancelled ``to_thread`` awaits no more, but
        # its thread runs the slice to its end; the shutdown drain waits for it on this lock, or the
        # two would read the same bytes at once (lines fed twice)
        self.slice_lock = threading.Lock()
        self.tick = min(5.0, cfg.stall_floor / 4, cfg.close_after / 4)
        self.sampler = Sampler(cfg.stacks) if cfg.stacks.enabled else None
        self.stack_samples: Counter[str] = Counter()  # rankwatch_stack_samples_total{result}
        self.collector.stack_samples = self.stack_samples
        self.sampled: set[tuple[str, int | None]] = set()  # suspicions already sampled
        self.sampling: asyncio.Task[None] | None = None
        self.stack_problem = ""  # said once
        self.summaries: dict[str, StackSummary] = {}  # aggregator: latest per host

    # ------------------------------------------------------------------ engine glue
    def _sink(self, events: list[Event]) -> None:
        """Events from the tailer. Read off the loop (a worker thread reads and scans), they
        wait in ``pending`` and reach the engine on the loop, so the engine has one writer."""
        if threading.get_ident() != self.owner:
            self.pending.extend(events)
            return
        self._dispatch(events)

    def _flush(self) -> None:
        events, self.pending = self.pending, []
        if events:
            self._dispatch(events)

    def _poll_slice(self) -> bool:
        """One fair turn over all files (at most ``limits.read_chunk_bytes`` per file): run in a
        worker thread while ``io_lock`` is held."""
        with self.slice_lock:
            return bool(self.tailer.poll())

    async def read_available(self) -> None:
        """Read what is there, one slice at a time off the event loop; between slices the loop
        serves HTTP (``/metrics`` waits at most one slice for ``io_lock``)."""
        while True:
            async with self.io_lock:
                more = await asyncio.to_thread(self._poll_slice)
            self._flush()
            if not more:
                return

    def _dispatch(self, events: list[Event]) -> None:
        if self.on_finding is not None:
            for ev in events:
                if ev.kind is EventKind.MATCH:
                    self.on_finding(ev)
        if self.publisher is not None:
            ob = self.publisher.outbox
            job, host = self.cfg.job, self.cfg.host
            for ev in events:
                leaf = "unknown" if ev.rank is None else str(ev.rank)
                payload = encode_event(job, host, ev).dump()
                if ev.kind is EventKind.CONTEXT and ev.data.get("key") == "last_notes":
                    # each file's last notes are re-sent after nearly every chunk, each replacing
                    # the one before: only the newest goes, at most once per LATEST_INTERVAL
                    ob.put_latest(f"notes|{ev.source.path}", topic(job, "findings", leaf), payload)
                else:
                    ob.put_event(topic(job, "findings", leaf), payload)
            if self.cfg.aggregate:
                return  # the aggregator's engine is fed from the broker (every node, this one included)
        self.engine.feed(events, self.clock())
        self.dirty = True

    def _file_ranks(self) -> list[int]:
        """The global ranks the watched files' paths name (``rank_3.log``)."""
        return sorted({r for t in self.tailer.tails.values() if (r := t.fstate.rank) is not None})

    def _validated(self, model: type[_P], payload: bytes) -> _P | None:
        """A payload from the broker, validated at the edge; refused ones (malformed, another
        job's) are counted and dropped."""
        try:
            p = model.model_validate_json(payload)
        except ValueError:
            self.tailer.stats.dropped["mqtt_bad_payload"] += 1
            return None
        if getattr(p, "job", None) != self.cfg.job:
            self.tailer.stats.dropped["mqtt_wrong_job"] += 1
            return None
        return p

    def _remote(self, t: str, payload: bytes) -> None:
        """Aggregator: one event from any node of the job (duplicates dropped by id)."""
        if t.startswith(topic(self.cfg.job, "stacks", "")):
            self._remote_stacks(payload)
            return
        if t.startswith(topic(self.cfg.job, "status", "")):
            self._remote_status(payload)
            return
        p = self._validated(EventPayload, payload)
        if p is None:
            return
        if t != topic(self.cfg.job, "findings", "unknown" if p.rank is None else str(p.rank)):
            self.tailer.stats.dropped["mqtt_wrong_job"] += 1  # a payload on a topic it does not name
            return
        if p.id in self.seen_ids:
            self.tailer.stats.dropped["mqtt_duplicate"] += 1
            return
        self.seen_ids[p.id] = None
        if len(self.seen_ids) > 1_000_000:
            self.seen_ids.popitem(last=False)
        try:
            self.engine.feed([decode_event(p)], self.clock())
        except Exception as exc:  # a valid payload the engine cannot take: counted, the consumer goes on
            self.tailer.stats.dropped["mqtt_bad_payload"] += 1
            self.log(f"rankwatch: MQTT finding {p.id} from {p.host!r} refused by the engine: {type(exc).__name__}: {exc}")
            return
        self.dirty = True
        self.wake.set()

    # ------------------------------------------------------------------ stacks
    def _suspicion(self) -> tuple[str, int | None] | None:
        return suspicion(self.engine.state, self.engine.stall_step)

    def _maybe_sample(self) -> None:
        key = self._suspicion()
        if (key is None or key in self.sampled or self.sampler is None or self.sampling is not None
                or self.stopping.is_set() or not self.cfg.logs):
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # evaluated outside the daemon's loop (a final drain, a test): no sampling
        self.sampled.add(key)
        self.sampling = loop.create_task(self._sample(key[1]))

    async def _sample(self, step: int | None) -> None:
        assert self.sampler is not None
        try:
            s = await asyncio.to_thread(self.sampler.sample, self.cfg.host)
        finally:
            self.sampling = None
        self.stack_samples.update(s.results)
        if s.problem and not self.stack_problem:
            self.stack_problem = s.problem
            self.log(f"rankwatch: stacks: {s.problem}; naming a hung rank from the logs only")
        if self.publisher is not None and s.stacks:
            summ = summary(self.cfg.job, self.cfg.host, step, s)
            self.publisher.outbox.put_event(topic(self.cfg.job, "stacks", self.cfg.host), summ.dump())
        if s.verdict is not None and not self.cfg.aggregate:
            self.engine.set_stacks(step, s.verdict, len(s.stacks))
            self.dirty = True
            self.wake.set()

    def _remote_status(self, payload: bytes) -> None:
        """Aggregator: a node's status names the ranks whose files it watches, so a rank that
        never logs a line (a silent hung rank) is still known to exist."""
        p = self._validated(StatusPayload, payload)
        if p is None:
            return
        st = self.engine.state
        for r in p.ranks:
            if r not in st.seen_global and len(st.seen_global) >= st.max_ranks:
                st.dropped["max_ranks"] += 1  # bounded: a status naming 10^6 ranks is not a job
                break
            st.note_file(r, None)
        if p.ranks:
            self.dirty = True
            self.wake.set()

    def _remote_stacks(self, payload: bytes) -> None:
        """Aggregator: one node's stacks; the job's verdict compares every node's ranks."""
        summ = self._validated(StackSummary, payload)
        if summ is None:
            return
        self.summaries[summ.host] = summ
        from detectors.stacks import compare

        same = [x for x in self.summaries.values() if x.step == summ.step]
        stacks = [rs for x in same for rs in x.stacks()]
        self.engine.set_stacks(summ.step, compare(stacks, [r for x in same for r in x.unsampled]), len(stacks))
        self.dirty = True
        self.wake.set()

    def evaluate(self) -> list[Change]:
        changes = self.engine.evaluate(self.clock())
        self._maybe_sample()
        if self.on_change is not None:
            for c in changes:
                self.on_change(c)
        for sink in self.sinks:
            for c in changes:
                sink.incident(c)
        return changes

    def restore(self) -> None:
        cp, why = checkpoint.load(self.cfg.state_dir, self.cfg.job)
        if cp is not None:
            why = self._unusable(cp)
            cp = None if why else cp
        if cp is None:
            if why != "no checkpoint":
                self.tailer.stats.dropped["checkpoint_invalid"] += 1
            self.resume_note = f"starting from the beginning of every file ({why})"
            return
        self.engine = cp.engine
        self.collector.engine = self.engine
        self.tailer.resume = cp.positions
        for rec in cp.positions.values():
            fs = rec.get("fstate")
            if fs is not None:
                self.engine.core.job_parse = fs.job  # what ties the files together, as when saved
                break
        self.tailer.attach(self.engine.core)
        self.resume_note = f"resumed from checkpoint ({len(cp.positions)} file(s))"

    def _unusable(self, cp: checkpoint.Checkpoint) -> str:
        """Why a well-formed checkpoint still cannot be resumed from ('' when it can): the
        engine must be a live engine of this job that can report (so /metrics and
        /api/incidents cannot fail on restored state)."""
        eng = cp.engine
        if not isinstance(eng, LiveEngine) or eng.job != self.cfg.job:
            return f"checkpoint invalid (the engine is a {type(eng).__name__}, not this job's live engine)"
        if any(rec.get("fstate") is not None and not isinstance(rec["fstate"], FileState) for rec in cp.positions.values()):
            return "checkpoint invalid (a file's parse state is not a FileState)"
        try:
            eng.report(self.tailer.notes())
            list(RankwatchCollector(eng, self.tailer, self.cfg.limits.max_ranks).collect())
        except Exception as exc:
            return f"checkpoint invalid (its engine state cannot report: {type(exc).__name__})"
        return ""

    def capture(self) -> checkpoint.Captured:
        """The checkpoint's content as plain data (the engine is not fed meanwhile: call it on
        the loop, under ``io_lock``)."""
        positions = self.tailer.positions()
        self._flush()  # events of files read to their end by positions() are in the engine before it is saved
        # files that vanished since the checkpoint keep their record until they are seen again
        for path, rec in self.tailer.resume.items():
            positions.setdefault(path, rec)
        return checkpoint.capture(checkpoint.Checkpoint(self.cfg.job, positions, self.engine))

    def save(self) -> None:
        checkpoint.write(self.cfg.state_dir, self.capture())

    # ------------------------------------------------------------------ HTTP
    def app(self) -> web.Application:
        app = web.Application()

        async def metrics(request: web.Request) -> web.Response:
            async with self.io_lock:  # the tailer's counters are not read while a slice runs
                body = generate_latest(self.registry)
            return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

        async def healthz(request: web.Request) -> web.Response:
            failed = self.failed_tasks()
            if self.verdict_error is not None:
                failed["verdict"] = self.verdict_error
            if failed:
                return web.json_response({"status": "unhealthy", "failed": failed, "job": self.cfg.job}, status=503)
            return web.json_response({"status": "ok", "files": len(self.tailer.tails), "job": self.cfg.job})

        async def api_incidents(request: web.Request) -> web.Response:
            report = self.engine.report(self.tailer.notes())
            return web.Response(text=json.dumps(report, ensure_ascii=False), content_type="application/json")

        app.router.add_get("/metrics", metrics)
        app.router.add_get("/healthz", healthz)
        app.router.add_get("/api/incidents", api_incidents)
        # the live incidents page at / (and the Host check + security headers for browsers)
        add_live_page(app, lambda: self.engine.report(self.tailer.notes()), lambda: self.engine.state,
                      allowed_hosts=[self.cfg.host_port[0], self.cfg.host, *self.cfg.allow_hosts])
        return app

    async def start_http(self) -> tuple[str, int]:
        host, port = self.cfg.host_port
        self.runner = web.AppRunner(self.app(), access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, host, port)
        await site.start()
        sockets = getattr(site._server, "sockets", None) or []
        bound = sockets[0].getsockname()[:2] if sockets else (host, port)
        self.bound = (str(bound[0]), int(bound[1]))
        return self.bound

    # ------------------------------------------------------------------ task health
    def _watch(self, name: str, coro: Any) -> asyncio.Task[Any]:
        """Start a long-lived task; if it ever ends before shutdown, say so at once and
        turn ``/healthz`` unhealthy (a dead task must never look like a quiet job)."""
        task = asyncio.create_task(coro, name=name)
        self.tasks[name] = task

        def done(t: asyncio.Task[Any]) -> None:
            if t.cancelled() or self.stopping.is_set():
                return
            exc = t.exception()
            self.log(f"rankwatch: task {name} stopped: {type(exc).__name__}: {exc}" if exc else f"rankwatch: task {name} stopped")

        task.add_done_callback(done)
        return task

    def failed_tasks(self) -> dict[str, str]:
        """Long-lived tasks that ended while the daemon is running, with why."""
        out: dict[str, str] = {}
        for name, t in self.tasks.items():
            if t.done() and not self.stopping.is_set():
                exc = None if t.cancelled() else t.exception()
                out[name] = f"{type(exc).__name__}: {exc}" if exc else "ended"
        return out

    # ------------------------------------------------------------------ loops
    async def _reader(self) -> None:
        last_eval = 0.0
        eval_cost = eval_end = 0.0
        while not self.stopping.is_set():
            # with inotify hints a write wakes us at once, and every rescan wakes us too (the
            # rescan is the truth: a write inotify missed is read within a rescan): the timeout
            # only paces time-driven verdicts and reads nothing, so a quiet job costs almost
            # nothing. Without hints (NFS/Lustre) every timeout is a poll.
            timeout = self.tick if self.hinted else self.cfg.poll_interval
            woken = False
            with contextlib.suppress(TimeoutError):
                woken = await asyncio.wait_for(self.wake.wait(), timeout=timeout)
            self.wake.clear()
            if woken or not self.hinted:
                await self.read_available()  # off the loop: HTTP stays responsive during a flood
            if self.publisher is not None and len(self.tailer.tails) != self.publisher.files:
                self.publisher.set_files(len(self.tailer.tails), self._file_ranks())
            now = self.clock()
            # time-driven verdicts (stalls, closing quiet incidents) need a periodic look
            if self.dirty or now - last_eval >= self.tick:
                # the correlator re-reads the whole job: with thousands of ranks that takes
                # milliseconds, so while events pour in it runs at most every 4x its own cost
                # (a small job's costs microseconds: it still runs on every wake)
                if (rest := 4 * eval_cost - (time.perf_counter() - eval_end)) > 0:
                    await asyncio.sleep(rest)
                self.dirty = False
                last_eval = now
                t0 = time.perf_counter()
                try:
                    self.evaluate()
                except Exception as exc:  # one bad verdict must not stop the reading (no line is lost)
                    self._verdict_failed(exc)
                else:
                    self.verdict_error = None
                eval_end = time.perf_counter()
                eval_cost = eval_end - t0

    def _verdict_failed(self, exc: Exception) -> None:
        """A verdict raised: counted, logged once per distinct error (with where it came from),
        and shown on /healthz until a verdict succeeds; events keep being read and fed (the state
        stays whole, and the next tick tries again)."""
        self.tailer.stats.dropped["verdict_failed"] += 1
        msg = f"{type(exc).__name__}: {exc}"[:500]
        self.verdict_error = msg
        if msg not in self._verdict_errors_logged and len(self._verdict_errors_logged) < 64:
            self._verdict_errors_logged.add(msg)
            where = "".join(traceback.format_exception(exc)[-3:]).strip()
            self.log(f"rankwatch: verdict failed (reading goes on; /healthz unhealthy until one succeeds): {msg}\n{where}")

    def _hinted(self) -> None:
        self.hint_seen = True

    def _activity(self) -> tuple[int, int, int, int, int]:
        s = self.tailer.stats
        return (s.bytes, len(self.tailer.tails), s.rotations, s.truncations, s.deletions)

    async def _rescanner(self) -> None:
        """Rescan every ``rescan_interval``; on a quiet job with inotify hints active, back
        off up to 5x (a hint or new data brings it straight back)."""
        interval = self.cfg.rescan_interval
        last = self._activity()
        while not self.stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), timeout=interval)
            async with self.io_lock:
                self.tailer.rescan()
            self.wake.set()
            now = self._activity()
            quiet = now == last and not self.hint_seen
            self.hint_seen = False
            last = now
            interval = min(interval * 2, self.cfg.rescan_interval * 5) if quiet and self.hinted else self.cfg.rescan_interval

    async def _checkpointer(self) -> None:
        """A checkpoint every ``checkpoint_interval`` when something changed, but never more
        often than every ``CHECKPOINT_SHARE``× its own cost: the state of a 4096-rank aggregator
        takes a second or more to write, and checkpoints must not eat the event loop."""
        interval = self.cfg.checkpoint_interval
        while not self.stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), timeout=interval)
            mark = (self.engine.state.order, self.tailer.stats.bytes, self.tailer.stats.truncations, self.tailer.stats.rotations)
            if mark == self.saved_mark:
                continue  # nothing new since the last checkpoint: a quiet job costs nothing
            try:
                t0 = time.perf_counter()
                async with self.io_lock:
                    captured = self.capture()
                # encoding, checksum and fsync need no engine state: a worker thread does them while
                # the loop goes on (a 4096-rank aggregator's ~80 MB checkpoint takes seconds to write)
                await asyncio.to_thread(checkpoint.write, self.cfg.state_dir, captured)
                interval = max(self.cfg.checkpoint_interval, CHECKPOINT_SHARE * (time.perf_counter() - t0))
                self.saved_mark = mark
            except OSError as exc:
                self.tailer.stats.dropped["checkpoint_failed"] += 1
                self.log(f"rankwatch: checkpoint failed: {exc}")

    async def _outbox_empty(self) -> None:
        while self.publisher is not None and len(self.publisher.outbox) and self.publisher.connected.is_set():
            await asyncio.sleep(0.05)

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self.stopping.set)
        checkpoint.prepare(self.cfg.state_dir)  # an unusable state directory stops us here, said once
        self.restore()
        self.tailer.rescan()
        host, port = await self.start_http()
        dirs = sorted({glob_base(p) for p in self.cfg.logs})
        hints = _Hints(loop, self.wake, dirs, self._hinted) if self.cfg.inotify else None
        self.hinted = bool(hints and hints.observer)
        mq = ""
        if self.publisher is not None:
            role = "aggregating the job from" if self.cfg.aggregate else "publishing to"
            mq = f"; {role} MQTT {self.publisher.url.safe()} as {self.cfg.host!r}"
        self.log(
            f"rankwatch: job {self.cfg.job!r}: watching {len(self.tailer.tails)} file(s) matching "
            f"{', '.join(self.cfg.logs) or '(none)'}; metrics on http://{host}:{port}/metrics; {self.resume_note}; "
            f"{'inotify hints + ' if hints and hints.observer else ''}rescan every {self.cfg.rescan_interval:g}s{mq}"
        )
        tasks = [self._watch(n, c) for n, c in (("reader", self._reader()), ("rescanner", self._rescanner()),
                                                 ("checkpointer", self._checkpointer()))]
        pub_task = self._watch("mqtt", self.publisher.run()) if self.publisher else None
        sink_tasks = [self._watch(f"sink:{k.kind}", k.run()) for k in self.sinks]
        try:
            await self.stopping.wait()
        finally:
            if self.sampling is not None:
                tasks.append(self.sampling)  # a py-spy round in its thread ends within its deadline
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if hints:
                hints.stop()
            # drain: read what is left, final verdict, final checkpoint (after the slice a
            # cancelled reader left running in its thread has ended)
            with self.slice_lock:
                self._flush()
                self.tailer.rescan()
                while self.tailer.poll():
                    pass
                self.evaluate()
                final = ""
                try:
                    self.save()
                    final = str(Path(self.cfg.state_dir) / checkpoint.NAME)
                except OSError as exc:
                    self.tailer.stats.dropped["checkpoint_failed"] += 1
                    self.log(f"rankwatch: final checkpoint failed: {exc}")
                self.tailer.close()
            for k in self.sinks:
                k.stop()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*sink_tasks, return_exceptions=True), timeout=30)
            if self.publisher is not None and pub_task is not None:
                # give the broker a moment to take what is left, then say goodbye (retained offline)
                self.publisher.outbox.flush_latest()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._outbox_empty(), timeout=5)
                self.publisher.stop()
                with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                    await asyncio.wait_for(pub_task, timeout=10)
            if self.runner is not None:
                await self.runner.cleanup()
            self.log(f"rankwatch: stopped; final checkpoint in {final}" if final
                     else "rankwatch: stopped; NO final checkpoint (see above): the next start reads again from the last one")
