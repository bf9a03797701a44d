"""Parse a job's log files in worker processes, feed their events to the one correlator in order.

A file's parse state is sequential, so a worker parses whole files: workers claim files in
the order ``diagnose`` reads them, and stream each file's events back in batches (one per
chunk) through a bounded queue per file. The main process reads file 0's batches, then
file 1's, and so on, and adds every event to the ``JobState`` exactly as the serial loop
does — the correlator sees the same events in the same order, so the report is the same,
byte for byte.

The one piece of parse state shared by files is ``JobParseState.pid_rank`` (NCCL
``host:pid`` → global rank, learnt from one file and used in the next). A worker starts
with an empty map and records every lookup it missed; before a batch is added, the main
process checks those keys against the map of the files before it. If one is there, the
serial parse would have resolved that line's rank, so the main process stops the worker
and parses that file itself with the full map (skipping the events it already added:
parsing is deterministic, and they came before the first such line). After each file its
worker's map is merged into the job's, as the serial loop's writes would have left it.

Memory stays bounded: a worker blocks once ``AHEAD`` batches of a file wait unread. A batch
waits pickled (bytes, ~3x smaller than its tuples and what they hold), so ``AHEAD`` can be a
whole file of the 1 GB bench corpus (16 chunks of 8 MiB): the worker of the next file then
parses it to the end while the main process adds the current one, instead of stopping after 4
chunks with part of a CPU idle (bench/README.md round 7, ``python -m bench.pipeline_model``).
"""

from __future__ import annotations

import multiprocessing as mp
import pickle
import queue
import traceback
from typing import Any

from detectors.detect import JobState
from detectors.events import Event, Source
from detectors.parse import default_parser
from detectors.parsers.base import FileState, JobParseState
from monitor.inputs import LogFile
from monitor.reader import ChunkReader

__all__ = ["AHEAD", "ParallelFiles"]

AHEAD = 16  # batches (one per chunk read, pickled) a worker may run ahead of the main process per file
_POLL_S = 1.0


class _MissRecorder(dict[tuple[str, int], int]):
    """A worker's ``pid_rank``: remembers the keys looked up and not found."""

    def __init__(self) -> None:
        super().__init__()
        self.misses: list[tuple[str, int]] = []

    def get(self, key: tuple[str, int], default: Any = None) -> Any:  # type: ignore[override]
        if key in self:
            return self[key]
        self.misses.append(key)
        return default


def _pack(events: list[Event]) -> list[tuple[Any, ...]]:
    """Events as plain tuples: pickling slotted dataclasses costs ~4x more than this."""
    return [(e.kind, e.source.path, e.source.line, e.source.text, e.rank, e.local_rank, e.host, e.time, e.step,
             e.failure, e.data, e.rank_from) for e in events]


def _unpack(rows: list[tuple[Any, ...]]) -> list[Event]:
    return [Event(k, Source(path, line, text), rank, local, host, t, step, failure, data, rank_from)
            for (k, path, line, text, rank, local, host, t, step, failure, data, rank_from) in rows]


def _worker(files: list[LogFile], engine: str | None, claim: Any, cancelled: Any, queues: list[Any]) -> None:
    import gc

    from monitor.diagnose import CHUNK, file_state, open_log

    gc.disable()  # a worker only parses: no reference cycles to collect (see diagnose.no_cyclic_gc)
    parser = default_parser(engine)  # inherited from the parent when forked: no recompilation
    while True:
        with claim.get_lock():
            i = claim.value
            claim.value += 1
        if i >= len(files):
            return
        q = queues[i]
        q.put(("start", mp.current_process().pid))
        pid_rank = _MissRecorder()
        fstate = file_state(files[i], JobParseState(pid_rank=pid_rank))
        try:
            with open_log(files[i]) as fh:
                reader = ChunkReader(count=False)  # parse_chunk_counted counts the lines
                nbytes = 0
                while True:
                    data = fh.read(CHUNK)
                    buf, first = reader.feed(data) if data else reader.flush()
                    nbytes += len(data)
                    if buf:
                        events, lines = parser.parse_chunk_counted(buf, first, fstate)
                        if data:
                            reader.advance(lines)  # (flush() counts the line it hands out itself)
                        q.put(("events", pickle.dumps(_pack(events), pickle.HIGHEST_PROTOCOL), pid_rank.misses))
                        pid_rank.misses = []
                    if cancelled[i]:
                        q.put(("cancelled",))
                        break
                    if not data:
                        q.put(("done", nbytes, reader.lines_done, dict(pid_rank)))
                        break
        except OSError as exc:
            q.put(("oserror", exc.errno, exc.strerror, str(exc)))
        except Exception:
            q.put(("crash", traceback.format_exc()))


class ParallelFiles:
    """Workers parsing ``files`` (in this order); ``feed`` is called once per file, in order."""

    def __init__(self, files: list[LogFile], engine: str | None, jps: JobParseState, workers: int) -> None:
        self.files = files
        self.engine = engine
        self.jps = jps
        self.index = {id(lf): i for i, lf in enumerate(files)}
        # fork: workers inherit the compiled parser; spawn (not Linux) rebuilds it in each worker
        ctx: Any = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        self.claim = ctx.Value("i", 0)
        self.cancelled = ctx.Array("b", len(files))
        self.queues = [ctx.Queue(maxsize=AHEAD) for _ in files]
        self.procs = [
            ctx.Process(target=_worker, args=(files, engine, self.claim, self.cancelled, self.queues), daemon=True)
            for _ in range(max(1, workers))
        ]
        for p in self.procs:
            p.start()
        self._pids: dict[int, int] = {}

    def feed(self, lf: LogFile, fstate: FileState, state: JobState) -> tuple[int, int]:
        """Add file ``lf``'s events to ``state``; returns (bytes read, lines), like ``feed_stream``."""
        i = self.index[id(lf)]
        added = 0
        while True:
            msg = self._get(i)
            kind = msg[0]
            if kind == "start":
                self._pids[i] = msg[1]
            elif kind == "events":
                if any(key in self.jps.pid_rank for key in msg[2]):
                    self._cancel(i)
                    return self._serial(lf, fstate, state, skip=added)
                events = _unpack(pickle.loads(msg[1]))
                for ev in events:
                    state.add(ev)
                added += len(events)
            elif kind == "done":
                self.jps.pid_rank.update(msg[3])
                return msg[1], msg[2]
            elif kind == "oserror":
                raise OSError(msg[1], msg[2]) if msg[2] else OSError(msg[3])
            else:
                raise RuntimeError(f"parsing {lf.display} failed in a worker process:\n{msg[1]}")

    def _get(self, i: int) -> tuple[Any, ...]:
        while True:
            try:
                msg: tuple[Any, ...] = self.queues[i].get(timeout=_POLL_S)
                return msg
            except queue.Empty:
                pid = self._pids.get(i)
                if pid is None:
                    if not any(p.is_alive() for p in self.procs):
                        raise RuntimeError("the parse workers exited before reading every file") from None
                    continue
                proc = next((p for p in self.procs if p.pid == pid), None)
                if proc is None or not proc.is_alive():
                    raise RuntimeError(f"the parse worker of {self.files[i].display} died "
                                       f"(exit code {proc.exitcode if proc else '?'})") from None

    def _cancel(self, i: int) -> None:
        """Stop file ``i``'s worker (it then claims the next file) and drop what it sent."""
        self.cancelled[i] = 1
        while self._get(i)[0] not in ("cancelled", "done", "oserror", "crash"):
            pass

    def _serial(self, lf: LogFile, fstate: FileState, state: JobState, skip: int) -> tuple[int, int]:
        from monitor.diagnose import CHUNK, open_log

        parser = default_parser(self.engine)
        reader = ChunkReader(count=False)
        nbytes = 0
        with open_log(lf) as fh:
            while True:
                data = fh.read(CHUNK)
                buf, first = reader.feed(data) if data else reader.flush()
                nbytes += len(data)
                if buf:
                    events, lines = parser.parse_chunk_counted(buf, first, fstate)
                    if data:
                        reader.advance(lines)  # (flush() counts the line it hands out itself)
                    for ev in events:
                        if skip:
                            skip -= 1
                        else:
                            state.add(ev)
                if not data:
                    return nbytes, reader.lines_done

    def close(self, abort: bool = False) -> None:
        """Wait for the workers (they exit once every file is claimed); ``abort``: stop them now."""
        for p in self.procs:
            p.join(timeout=0 if abort else 5)
        for p in self.procs:
            if p.is_alive():
                p.terminate()
                p.join()
        for q in self.queues:
            q.close()
            q.cancel_join_thread()
