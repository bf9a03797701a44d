"""Finding this node's rank processes and taking one ``py-spy dump`` of each (blocking
I/O: the daemon runs it in a worker thread, only on suspicion).

Guarantees and limits:

- Discovery reads ``/proc``: a rank is a process with ``RANK`` (or ``LOCAL_RANK``) in its
  environment, as torchrun and every launcher built on it set them, whose parent is not
  itself a rank (DataLoader workers inherit the environment and are skipped); an optional
  command-line pattern narrows it to one job. What was read is cached by (pid, start
  time), so a refresh reads ``environ`` only of new processes and a reused pid is seen.
- Sampling runs ``py-spy dump --pid PID`` per rank, at most ``max_processes`` ranks, each
  bounded by ``timeout`` seconds and all of them by ``deadline`` seconds. py-spy pauses a
  process for a few milliseconds while it reads the stack; nothing else is touched.
- Without permission (no ``CAP_SYS_PTRACE``, another PID namespace, ``environ`` not
  readable) or without py-spy, ``sample`` says why in ``Sample.problem`` (one line,
  meant to be logged once) and the daemon keeps its log-only verdict.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from detectors.redact import redact_text
from detectors.stacks import Frame, RankStack, StackParseError, StackVerdict, compare, main_frames, parse_dump

__all__ = ["RankProcess", "RankProcesses", "Sample", "Sampler", "StackSettings", "StackSummary", "render_stacks",
           "stacks_json", "summary"]

RESULTS = ("ok", "failed", "timeout", "no_permission", "no_py_spy", "no_process")


class StackSettings(BaseModel):
    """``stacks:`` in the config (``RANKWATCH_STACKS__*`` in the environment)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(True, description="sample the ranks' stacks when a stall is suspected")
    pattern: str | None = Field(None, description="regex on the command line that a rank process must match")
    py_spy: str = Field("py-spy", description="the py-spy executable (a name on PATH or a path)")
    timeout: float = Field(5.0, gt=0, le=120, description="seconds per py-spy dump")
    deadline: float = Field(20.0, gt=0, le=600, description="seconds for one round over every rank")
    max_processes: int = Field(64, ge=1, le=4096, description="rank processes sampled per round")
    proc: Path = Field(Path("/proc"), description="the proc filesystem (another mount in a sidecar)")

    @field_validator("pattern")
    @classmethod
    def _pattern(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                re.compile(v)
            except re.error as exc:
                raise ValueError(f"not a regular expression: {exc}") from None
        return v


@dataclass(frozen=True, slots=True)
class RankProcess:
    pid: int
    rank: int
    local_rank: int | None
    cmdline: str


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _start_time(stat: bytes) -> int | None:
    """Field 22 of /proc/PID/stat (after the parenthesised command, which may hold spaces)."""
    tail = stat.rpartition(b")")[2].split()
    return int(tail[19]) if len(tail) > 19 else None


def _ppid(stat: bytes) -> int | None:
    tail = stat.rpartition(b")")[2].split()
    return int(tail[1]) if len(tail) > 1 else None


@dataclass
class RankProcesses:
    """This node's rank processes, cached; ``refresh()`` reads only what changed."""

    proc: Path = Path("/proc")
    pattern: str | None = None
    cache: dict[tuple[int, int], RankProcess | None] = field(default_factory=dict)
    denied: int = 0  # environ files we could not read in the last refresh

    def refresh(self) -> list[RankProcess]:
        rx = re.compile(self.pattern) if self.pattern else None
        seen: dict[tuple[int, int], RankProcess | None] = {}
        parents: dict[int, int | None] = {}
        self.denied = 0
        me = os.getpid()
        for entry in self.proc.iterdir() if self.proc.is_dir() else []:
            if not entry.name.isdigit() or int(entry.name) == me:
                continue
            pid = int(entry.name)
            stat = _read(entry / "stat")
            if stat is None:
                continue
            start = _start_time(stat)
            if start is None:
                continue
            key = (pid, start)
            parents[pid] = _ppid(stat)
            if key in self.cache:
                seen[key] = self.cache[key]
                continue
            denied = self.denied
            found = self._inspect(entry, pid, rx)
            if self.denied == denied:  # an unreadable environment is asked again next time
                seen[key] = found
        self.cache = seen
        ranks = {k[0]: rp for k, rp in seen.items() if rp is not None}
        # a DataLoader worker inherits RANK from its rank: keep the outermost process only
        return sorted((rp for pid, rp in ranks.items() if parents.get(pid) not in ranks), key=lambda r: (r.rank, r.pid))

    def _inspect(self, entry: Path, pid: int, rx: re.Pattern[str] | None) -> RankProcess | None:
        raw = _read(entry / "cmdline")
        if not raw:
            return None  # a kernel thread or a process that just exited
        cmd = raw.rstrip(b"\0").replace(b"\0", b" ").decode(errors="replace")
        if rx is not None and not rx.search(cmd):
            return None
        env = _read(entry / "environ")
        if env is None:
            self.denied += 1
            return None
        vars_ = dict(kv.split(b"=", 1) for kv in env.split(b"\0") if b"=" in kv)
        rank, local = vars_.get(b"RANK"), vars_.get(b"LOCAL_RANK")
        if rank is None and local is None:
            return None
        try:
            r = int(rank if rank is not None else local)  # type: ignore[arg-type]
            lr = int(local) if local is not None else None
        except ValueError:
            return None
        return RankProcess(pid, r, lr, cmd)


@dataclass
class Sample:
    """One round: the ranks' stacks, what failed, and the verdict."""

    stacks: list[RankStack]
    results: Counter[str]
    unsampled: list[int]
    problem: str | None  # why nothing could be sampled (permission, py-spy missing, no process)
    verdict: StackVerdict | None
    seconds: float


@dataclass
class Sampler:
    settings: StackSettings = field(default_factory=lambda: StackSettings.model_validate({}))
    processes: RankProcesses = field(init=False)

    def __post_init__(self) -> None:
        self.processes = RankProcesses(self.settings.proc, self.settings.pattern)

    def py_spy(self) -> str | None:
        """The py-spy executable: a path, a name on PATH, or beside this Python (a virtualenv)."""
        exe = self.settings.py_spy
        if os.sep in exe:
            return exe if os.access(exe, os.X_OK) else None
        beside = Path(sys.executable).parent / exe
        return shutil.which(exe) or (str(beside) if os.access(beside, os.X_OK) else None)

    def sample(self, host: str | None = None) -> Sample:
        """One bounded round over every local rank (blocking; call it off the event loop)."""
        t0 = time.monotonic()
        results: Counter[str] = Counter()
        exe = self.py_spy()
        if exe is None:
            results["no_py_spy"] += 1
            return Sample([], results, [], f"py-spy not found ({self.settings.py_spy!r}): "
                          "install rankwatch[stacks] or set stacks.py_spy", None, time.monotonic() - t0)
        procs = self.processes.refresh()[: self.settings.max_processes]
        if not procs:
            results["no_process"] += 1
            why = ("no rank process found (environ of other processes not readable: run as the job's user "
                   "or with CAP_SYS_PTRACE)" if self.processes.denied else
                   "no rank process found (another PID namespace? Kubernetes needs shareProcessNamespace: true)")
            return Sample([], results, [], why, None, time.monotonic() - t0)
        stacks: list[RankStack] = []
        unsampled: list[int] = []
        problem: str | None = None
        for rp in procs:
            left = self.settings.deadline - (time.monotonic() - t0)
            if left <= 0:
                results["timeout"] += 1
                unsampled.append(rp.rank)
                continue
            res, text = self.dump(exe, rp.pid, min(self.settings.timeout, left))
            results[res] += 1
            if res == "no_permission":
                problem = text
            if res != "ok":
                unsampled.append(rp.rank)
                continue
            try:
                stacks.append(RankStack(rp.rank, main_frames(parse_dump(text)), rp.pid, host))
            except StackParseError:
                results["ok"] -= 1
                results["failed"] += 1
                unsampled.append(rp.rank)
        if not stacks and problem is None:
            problem = f"py-spy could not sample any of {len(procs)} rank process(es)"
        verdict = compare(stacks, unsampled) if stacks else None
        return Sample(stacks, +results, unsampled, problem if not stacks else None, verdict, time.monotonic() - t0)

    def dump(self, exe: str, pid: int, timeout: float) -> tuple[str, str]:
        """``(result, text)``: one ``py-spy dump`` of ``pid``; text is the dump when result is ok."""
        try:
            cp = subprocess.run([exe, "dump", "--pid", str(pid)], capture_output=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return "timeout", ""
        except OSError as exc:
            return "no_py_spy", str(exc)
        out = cp.stdout.decode(errors="replace")
        if cp.returncode == 0 and out.strip():
            return "ok", out
        err = cp.stderr.decode(errors="replace").strip()
        if "ermission" in err or "ptrace" in err.lower() or "EPERM" in err:
            first = next((ln.strip() for ln in err.splitlines() if ln.strip()), "")
            return "no_permission", ("py-spy is not allowed to read the ranks' memory (needs CAP_SYS_PTRACE and "
                                     f"the job's PID namespace): {redact_text(first)[:200]}")
        return "failed", err


# ---------------------------------------------------------------------------- per-node summary (MQTT)
class FramePayload(BaseModel):
    model_config = ConfigDict(extra="forbid")

    function: str = Field(max_length=200)
    file: str = Field(max_length=300)
    line: int | None = Field(None, ge=0)


class RankPayload(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rank: int = Field(ge=0, le=1 << 20)
    frames: list[FramePayload] = Field(max_length=16)


class StackSummary(BaseModel):
    """One node's reduced stacks after a stall (``rankwatch/v1/<job>/stacks/<host>``)."""

    model_config = ConfigDict(extra="forbid")

    schema_: int = Field(1, alias="schema")
    job: str = Field(max_length=200)
    host: str = Field(max_length=255)
    step: int | None = None  # the step the stall started after (the aggregator's key)
    ranks: list[RankPayload] = Field(max_length=4096)
    unsampled: list[int] = Field(default_factory=list, max_length=4096)

    def stacks(self) -> list[RankStack]:
        return [RankStack(r.rank, tuple(Frame(f.function, f.file, f.line) for f in r.frames), None, self.host)
                for r in self.ranks]

    def dump(self) -> bytes:
        return self.model_dump_json(by_alias=True).encode()


def summary(job: str, host: str, step: int | None, sample: Sample) -> StackSummary:
    """The node's stacks reduced to their innermost frames (redacted, bounded)."""
    from detectors.stacks import classify

    ranks = []
    for s in sample.stacks:
        place = classify(s.frames)
        upto = s.frames.index(place.anchor) + 1 if place.anchor is not None else len(s.frames)
        keep = s.frames[:upto][:16]
        ranks.append(RankPayload(rank=s.rank, frames=[
            FramePayload(function=redact_text(f.function)[:200], file=redact_text(f.file)[:300], line=f.line) for f in keep]))
    return StackSummary(schema=1, job=job, host=host, step=step, ranks=ranks, unsampled=sample.unsampled)


# ---------------------------------------------------------------------------- on-call view
def stacks_json(sample: Sample) -> dict[str, object]:
    """``rankwatch stacks --format json``: the verdict and every group (redacted)."""
    from detectors.redact import redact

    v = sample.verdict
    pids = {s.rank: s.pid for s in sample.stacks}
    return redact({
        "outlier": v.outlier if v else None,
        "reason": v.reason if v else sample.problem,
        "collective": v.collective if v else None,
        "groups": [{"ranks": list(g.ranks), "pids": [pids.get(r) for r in g.ranks], "where": g.place.kind.value,
                    "name": g.place.name, "frames": [f.text() for f in g.place.frames]} for g in (v.groups if v else ())],
        "unsampled": sample.unsampled,
        "results": dict(sample.results),
        "seconds": round(sample.seconds, 3),
    })


def render_stacks(sample: Sample) -> str:
    """Plain text for a terminal: groups of ranks in the same place, the outlier first."""
    from detectors.redact import redact_text

    v = sample.verdict
    if v is None:
        return f"no stacks: {sample.problem}\n"
    pids = {s.rank: s.pid for s in sample.stacks}
    out: list[str] = []
    for g in v.groups:
        who = ", ".join(f"{r} (pid {pids.get(r)})" for r in g.ranks)
        mark = "  <- outlier" if v.outlier is not None and g.ranks == (v.outlier,) else ""
        out.append(f"rank{'s' if len(g.ranks) > 1 else ''} {who}: {g.place.kind.value} ({g.place.name}){mark}")
        out += [f"    {_clean(redact_text(f.text()))}" for f in g.place.frames]
    if sample.unsampled:
        out.append(f"not sampled: ranks {', '.join(str(r) for r in sample.unsampled)}")
    out.append(f"verdict: {v.reason}")
    return "\n".join(out) + "\n"


def _clean(text: str) -> str:
    """No control sequences on a terminal (frame names come from the inspected process)."""
    return "".join(ch if ch.isprintable() else "?" for ch in text)
