"""Live stacks of every rank → which rank is the odd one out. Pure: text and records in,
verdict out; no I/O, no clock.

A stalled synchronous job has (almost always) one shape: every healthy rank waits in the
same collective, and the rank that hung is somewhere else (its data loader, a lock, a
file read, its own code, or a *different* collective the others never entered). Given one
``py-spy dump`` per rank this module

1. parses the dump text into threads and frames (``parse_dump``; innermost frame first, as
   py-spy prints them), and picks the thread that runs the training loop (``main_frames``);
2. reduces a rank's frames to *where it waits* (``classify``): a collective (``all_reduce``,
   ``barrier``, …, or the autograd backward of DDP/FSDP, which blocks in the gradient
   all-reduce), a queue or data loader, a lock or condition, a sleep, file I/O, or its own
   code; the place is named by its innermost frames and the first frame of user code;
3. compares the ranks (``compare``): the largest group of ranks waiting at the same
   collective place is "the others"; when exactly one rank is anywhere else, it is the
   outlier. When every rank is in the same frames (a job that is slow, not hung), or when
   no rank waits in a collective, or when several ranks are elsewhere, there is no outlier
   (never a guess).

The same ``compare`` runs on one node's ranks (the sidecar) and on every node's reduced
stacks at once (the aggregator), so the verdict does not depend on where it is taken.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum

__all__ = [
    "Frame",
    "Place",
    "ProcessDump",
    "RankStack",
    "StackParseError",
    "StackVerdict",
    "ThreadDump",
    "Where",
    "classify",
    "compare",
    "decode_frames",
    "encode_frames",
    "is_launcher",
    "main_frames",
    "parse_dump",
    "traceback_frame",
]

MAX_FRAMES = 64  # per thread kept from a dump (the innermost ones)
REDUCED = 6  # frames kept per rank in a verdict / a per-node summary


class StackParseError(ValueError):
    """The text is not a ``py-spy dump`` of one process."""


@dataclass(frozen=True, slots=True)
class Frame:
    function: str
    file: str
    line: int | None

    def text(self) -> str:
        """``file:line function`` (the evidence form)."""
        return f"{self.file}:{self.line if self.line is not None else '?'} {self.function}"


@dataclass(frozen=True, slots=True)
class ThreadDump:
    tid: int
    name: str
    state: str  # "idle", "active", "active+gil", ... as py-spy prints it ("" if absent)
    frames: tuple[Frame, ...]  # innermost first


@dataclass(frozen=True, slots=True)
class ProcessDump:
    pid: int
    threads: tuple[ThreadDump, ...]


_PROCESS = re.compile(r"^Process (\d+):")
_THREAD = re.compile(r"^Thread (0x[0-9A-Fa-f]+|\d+)(?: \(([^)]*)\))?(?::\s*\"(.*)\")?\s*$")
# "    function (file:line)" — function names may hold spaces ("<lambda>", "Foo.bar"), the
# location is the last parenthesised group on the line
_FRAME = re.compile(r"^\s+(.+?) \(([^()]*?)(?::(\d+))?\)\s*$")


def parse_dump(text: str) -> ProcessDump:
    """The threads of one ``py-spy dump`` (text format; ``--locals`` lines are skipped)."""
    pid: int | None = None
    threads: list[ThreadDump] = []
    cur: tuple[int, str, str] | None = None
    frames: list[Frame] = []

    def close() -> None:
        if cur is not None:
            threads.append(ThreadDump(cur[0], cur[1], cur[2], tuple(frames[:MAX_FRAMES])))

    for raw in text.splitlines():
        line = raw.rstrip()
        if not line:
            continue
        if pid is None and (m := _PROCESS.match(line)):
            pid = int(m.group(1))
            continue
        if m := _THREAD.match(line):
            close()
            tid_s = m.group(1)
            cur = (int(tid_s, 16) if tid_s.startswith("0x") else int(tid_s), m.group(3) or "", m.group(2) or "")
            frames = []
            continue
        if cur is not None and (m := _FRAME.match(line)) and not line.startswith("        "):
            frames.append(Frame(m.group(1), m.group(2), int(m.group(3)) if m.group(3) else None))
    close()
    if pid is None or not threads:
        raise StackParseError("not a py-spy dump: no 'Process N:' header or no thread")
    return ProcessDump(pid, tuple(threads))


def main_frames(dump: ProcessDump) -> tuple[Frame, ...]:
    """The training loop's thread: ``MainThread``, else the thread whose id is the pid,
    else the first one py-spy lists."""
    for th in dump.threads:
        if th.name == "MainThread":
            return th.frames
    for th in dump.threads:
        if th.tid == dump.pid:
            return th.frames
    return dump.threads[0].frames


_SITE = re.compile(r"(?:site|dist)-packages/")
_STDLIB = re.compile(r"/lib/python\d+(?:\.\d+)?/")
# a launcher's own process waiting for its workers (mp.spawn's join, torchrun's agent loop):
# where it waits says nothing about the workers
_LAUNCHER_FILES = ("torch/multiprocessing/spawn.py", "torch/distributed/elastic/", "torch/distributed/run.py",
                   "accelerate/commands/", "deepspeed/launcher/", "lightning/fabric/strategies/launchers/")


def encode_frames(frames: list[tuple[str, str, int]]) -> str:
    """A traceback's frames (innermost first) as one string, ``function\tfile\tline`` per line: event
    data is scalars only (it travels as MQTT payloads, ``monitor.mqtt``)."""
    return "\n".join(f"{fn}\t{file}\t{line}" for fn, file, line in frames)


def decode_frames(raw: object) -> tuple[Frame, ...]:
    """``encode_frames``'s string back as frames (py-spy's shortened paths); what is not one is
    skipped (a redacted or cut payload from another node), so a bad value only means fewer frames."""
    if not isinstance(raw, str):
        return ()
    out: list[Frame] = []
    for row in raw.splitlines()[:MAX_FRAMES]:
        parts = row.split("\t")
        if len(parts) != 3 or not parts[0] or not parts[1]:
            continue
        out.append(traceback_frame(parts[0], parts[1], int(parts[2]) if parts[2].isdigit() else None))
    return tuple(out)


def traceback_frame(function: str, file: str, line: int | None) -> Frame:
    """A Python traceback's frame with its path shortened the way py-spy prints it (the part
    after ``site-packages/``, a standard-library module's path below ``lib/pythonX.Y/``), so
    that ``classify`` tells library frames from the job's own code."""
    f = file.replace("\\", "/")
    if (m := _SITE.search(f)) is not None or (m := _STDLIB.search(f)) is not None:
        f = f[m.end():]
    return Frame(function, f, line)


def is_launcher(frames: tuple[Frame, ...]) -> bool:
    """Frames of a launcher process (waiting for its workers), not of a worker."""
    return any(f.file.startswith(_LAUNCHER_FILES) or "/" + _LAUNCHER_FILES[0] in f.file for f in frames)


# ---------------------------------------------------------------------------- places
class Where(StrEnum):
    COLLECTIVE = "collective"
    DATALOADER = "dataloader"
    QUEUE = "queue"
    LOCK = "lock"
    SLEEP = "sleep"
    IO = "io"
    CHILD = "child"  # waiting for a child process to end (a launcher of its own waiting for its workers)
    CODE = "code"  # its own code (a loop, a C call py-spy cannot see into: a C-level lock, a read)


_COLLECTIVES = frozenset({
    "all_reduce", "all_gather", "all_gather_into_tensor", "all_gather_object", "all_to_all",
    "all_to_all_single", "barrier", "monitored_barrier", "broadcast", "broadcast_object_list",
    "reduce", "reduce_scatter", "reduce_scatter_tensor", "gather", "gather_object", "scatter",
    "scatter_object_list", "send", "recv", "isend", "irecv", "batch_isend_irecv", "wait",
    "_all_gather_base", "_reduce_scatter_base", "new_group", "init_process_group",
})
_BACKWARD = frozenset({"_engine_run_backward", "run_backward"})  # DDP/FSDP: the gradient all-reduce
# DistributedDataParallel's own collectives (torch/nn/parallel/distributed.py): the buffers'
# broadcast before each forward, the parameters' at construction, the shape check across ranks
_DDP_COLLECTIVES = frozenset({
    "_distributed_broadcast_coalesced", "_default_broadcast_coalesced", "_sync_buffers", "_sync_module_buffers",
    "_sync_params_and_buffers", "_verify_param_shape_across_processes",
})
_LIBRARY_ROOTS = frozenset({
    "torch", "numpy", "deepspeed", "megatron", "transformers", "accelerate", "lightning",
    "pytorch_lightning", "apex", "datasets", "tokenizers", "triton", "fairscale", "site-packages",
    "dist-packages", "<frozen",
})


def _short(fn: str) -> str:
    return fn.rsplit(".", 1)[-1]


def _root(file: str) -> str:
    head = file.replace("\\", "/").lstrip("/").split("/", 1)[0]
    return head.removesuffix(".py")


def is_library(f: Frame) -> bool:
    """Standard library or a known framework, as py-spy shortens their paths."""
    root = _root(f.file)
    return root in sys.stdlib_module_names or root in _LIBRARY_ROOTS or f.file.startswith("<")


def _kind(f: Frame) -> tuple[Where, str] | None:
    name, file, root = _short(f.function), f.file.replace("\\", "/"), _root(f.file)
    if ("torch/distributed/" in file or root in ("deepspeed", "megatron")) and name in _COLLECTIVES:
        return Where.COLLECTIVE, name
    if "torch/distributed/c10d_logger" in file:
        # the logging wrapper around every collective call (torch 2.1+): an interrupt or an error
        # that lands while it handles the call's exception leaves it innermost, the call below it
        return Where.COLLECTIVE, "collective"
    if name in _BACKWARD and "torch/autograd" in file:
        return Where.COLLECTIVE, "backward (gradient all-reduce)"
    if "torch/nn/parallel/distributed" in file and name in _DDP_COLLECTIVES:
        return Where.COLLECTIVE, "DDP buffer or parameter broadcast"
    if "torch/utils/data/" in file:
        return Where.DATALOADER, "DataLoader"
    if root in ("queue", "multiprocessing") and name in ("get", "put", "recv", "recv_bytes", "poll"):
        return Where.QUEUE, f"{root}.{name}" if root == "queue" else f"multiprocessing.{name}"
    if root == "threading" and f.function in ("Lock.acquire", "RLock.acquire", "Semaphore.acquire"):
        return Where.LOCK, f.function
    if root in ("selectors", "socket", "ssl"):
        return Where.IO, f"{root}.{name}"
    if root == "subprocess" and name in _CHILD_WAITS:
        # a script's own launcher blocked until the workers it started end (YOLOX's
        # launch_by_subprocess: ``process.wait()``; ``subprocess.run``'s ``communicate``)
        return Where.CHILD, f"subprocess.{name}"
    return None


_CHILD_WAITS = frozenset({"wait", "_wait", "_try_wait", "communicate", "_communicate", "run", "call", "check_call"})


# socket calls that block until the other end sends, answers or connects: a process in one waits
# on a peer, it is not writing (a readiness wait, ``selectors.select``, is not one: a parent
# process idles there while its children work, mp.spawn's join)
_PEER_READS = frozenset({"recv", "recv_into", "recvfrom", "recvfrom_into", "readinto", "readline", "read", "accept",
                         "connect", "create_connection", "do_handshake"})


def reads(place: Place) -> bool:
    """Whether an I/O place is a socket read or connect that waits on the other end, rather than
    a write of its own or a readiness wait."""
    return place.kind is Where.IO and place.name.rsplit(".", 1)[-1] in _PEER_READS


@dataclass(frozen=True, slots=True)
class Place:
    """Where a rank is: its kind, a short name, the anchoring user frame and the reduced
    frames (innermost first)."""

    kind: Where
    name: str
    anchor: Frame | None  # the innermost frame of user code (what differs between two waits)
    frames: tuple[Frame, ...]

    def key(self) -> tuple[str, str, str]:
        a = self.anchor.text() if self.anchor else ""
        top = self.frames[0].text() if self.frames else ""
        return (self.kind.value, self.name, a if self.kind is not Where.CODE else top)


def classify(frames: tuple[Frame, ...]) -> Place:
    """Where a rank waits, from its frames (innermost first).

    The innermost frame that names a known waiting place wins (a collective, a queue, a
    data loader, a lock, socket I/O); the innermost frames of the standard library tell
    a Python-level wait (``Condition.wait``, ``Event.wait``, ``time``-free sleeps) from
    the rank's own code. py-spy sees Python frames only, so a C-level wait (``lock.acquire``
    on a ``threading.Lock``, ``time.sleep``, a blocking ``read``) shows as the user line
    that called it: kind ``code``, named by that line.
    """
    anchor = next((f for f in frames if not is_library(f)), None)
    for f in frames:
        k = _kind(f)
        if k is not None:
            return Place(k[0], k[1], anchor, _reduce(frames, anchor))
        if not is_library(f):
            break  # reached user code: what it calls above this frame is C, invisible here
    if frames and _root(frames[0].file) == "threading":
        name = frames[0].function
        kind = Where.LOCK if _short(name) in ("wait", "acquire") else Where.CODE
        return Place(kind, name, anchor, _reduce(frames, anchor))
    top = frames[0] if frames else None
    return Place(Where.CODE, top.function if top else "?", anchor, _reduce(frames, anchor))


def _reduce(frames: tuple[Frame, ...], anchor: Frame | None) -> tuple[Frame, ...]:
    """The innermost frames down to (and including) the first user frame, at most REDUCED."""
    out: list[Frame] = []
    for f in frames:
        out.append(f)
        if f is anchor or len(out) >= REDUCED:
            break
    return tuple(out)


# ---------------------------------------------------------------------------- verdict
@dataclass(frozen=True, slots=True)
class RankStack:
    """One rank's training-thread frames (innermost first), from a dump or a summary."""

    rank: int
    frames: tuple[Frame, ...]
    pid: int | None = None
    host: str | None = None


@dataclass(frozen=True, slots=True)
class Group:
    place: Place
    ranks: tuple[int, ...]


@dataclass(frozen=True)
class StackVerdict:
    """``outlier`` is the rank outside the collective the others wait in, or None."""

    outlier: int | None
    reason: str
    groups: tuple[Group, ...]  # outlier's group first, then by size (largest first)
    waiting: tuple[int, ...] = ()  # ranks in the majority collective
    collective: str | None = None  # the collective they wait in
    outlier_place: Place | None = None
    unsampled: tuple[int, ...] = ()
    places: dict[int, Place] = field(default_factory=dict)

    def evidence(self) -> list[str]:
        """``file:line function`` lines of the outlier, innermost first."""
        if self.outlier_place is None:
            return []
        return [f.text() for f in self.outlier_place.frames]


def _fmt(ranks: list[int] | tuple[int, ...]) -> str:
    r = list(ranks)
    return ", ".join(str(x) for x in r[:16]) + (f" … (+{len(r) - 16})" if len(r) > 16 else "")


def compare(stacks: list[RankStack], unsampled: list[int] | None = None) -> StackVerdict:
    """The odd one out among ``stacks`` (one per rank), or no outlier with the reason."""
    missing = tuple(sorted(set(unsampled or [])))
    places = {s.rank: classify(s.frames) for s in sorted(stacks, key=lambda s: s.rank)}
    by_key: dict[tuple[str, str, str], list[int]] = {}
    for rank, p in places.items():
        by_key.setdefault(p.key(), []).append(rank)
    sizes = Counter({k: len(v) for k, v in by_key.items()})

    def groups(first: tuple[str, str, str] | None = None) -> tuple[Group, ...]:
        keys = sorted(by_key, key=lambda k: (k != first, -sizes[k], by_key[k][0]))
        return tuple(Group(places[by_key[k][0]], tuple(by_key[k])) for k in keys)

    if not places:
        return StackVerdict(None, "no rank could be sampled", (), unsampled=missing)
    if len(by_key) == 1:
        only = next(iter(places.values()))
        return StackVerdict(None, f"every sampled rank is in the same frames ({only.name}): "
                            "the job is slow or stuck as a whole, not one rank", groups(), places=places,
                            unsampled=missing)
    coll = [k for k in by_key if k[0] == Where.COLLECTIVE.value]
    if not coll:
        return StackVerdict(None, "no rank waits in a collective", groups(), places=places, unsampled=missing)
    major = max(coll, key=lambda k: (sizes[k], -by_key[k][0]))
    if sum(1 for k in coll if sizes[k] == sizes[major]) > 1:
        return StackVerdict(None, "ranks wait in different collectives in equal numbers", groups(),
                            places=places, unsampled=missing)
    waiting = tuple(by_key[major])
    name = major[1]
    elsewhere = sorted(r for r in places if r not in waiting)
    if len(elsewhere) != 1:
        return StackVerdict(None, f"ranks {_fmt(elsewhere)} are outside the collective the others wait in "
                            f"({name}): more than one", groups(major), waiting, name, places=places,
                            unsampled=missing)
    out = elsewhere[0]
    place = places[out]
    if place.kind is Where.COLLECTIVE and len(waiting) < 2:
        return StackVerdict(None, "two ranks in two different collectives: cannot tell which one is behind",
                            groups(), places=places, unsampled=missing)
    what = (f"waits in a different collective ({place.name}) the others never entered"
            if place.kind is Where.COLLECTIVE else f"is blocked in {_describe(place)}")
    return StackVerdict(out, f"rank {out} {what} while ranks {_fmt(waiting)} wait in {name}",
                        groups(places[out].key()), waiting, name, place, missing, places)


def _describe(p: Place) -> str:
    at = f" at {p.anchor.text()}" if p.anchor else ""
    if p.kind is Where.CODE:
        return f"its own code{at}"
    return f"{p.kind.value} ({p.name}){at}"
