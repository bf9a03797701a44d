"""What every parser rule sees: the segment being parsed and the state of its file."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from detectors.model import Event, EventKind, Source
from detectors.prefixes import Prefixed

__all__ = ["FileState", "JobParseState", "Rule", "Segment", "plausible"]


@dataclass(slots=True)
class JobParseState:
    """Parse state shared by all files of one job (ties NCCL host:pid to global ranks)."""

    pid_rank: dict[tuple[str, int], int] = field(default_factory=dict)
    # the job's size as trusted sources tell it (global ranks in file paths, NCCL rank maps):
    # ranks read from log text far beyond it are suspect (plausible, below)
    trusted_ws: int = 0
    implausible: int = 0  # ranks from log text dropped as implausible (counted as a drop)
    pods_ended: set[str] = field(default_factory=set)  # Kubeflow replica pods whose end was reported
    # NCCL processes whose rank came only from a tree topology line: a communicator's rank, which
    # is the global rank for the default group but not for a sub-group (reported as inferred)
    tree_procs: set[tuple[str, int]] = field(default_factory=set)
    # srun labelled a line N while its c10 tag said [rankM], M != N: srun started one task per
    # node (torchrun below it), so its labels are node tasks, not ranks
    srun_node_tasks: bool = False


@dataclass(slots=True)
class FhBlock:
    """One thread's block of a faulthandler dump while it is read: its frames so far (innermost
    first, at most ``FRAME_KEEP`` of them) and, once its first frame in the program's own code was
    read, the stack sample they make (where that thread was)."""

    frames: list[tuple[str, str, int]] = field(default_factory=list)
    sample: list[tuple[str, str, int]] | None = None


@dataclass(slots=True)
class FileState:
    """Per-file parse state. Created by the caller with what the path says."""

    path: str
    rank: int | None = None  # global rank from the path (rank_11.log)
    local_rank: int | None = None  # local rank from the path (torchrun attempt_0/3/)
    attempt: int | None = None
    year: int = 1970
    job: JobParseState = field(default_factory=JobParseState)
    progress: int | None = None  # last tqdm n seen in this file
    local_to_global: dict[int, int] = field(default_factory=dict)
    # torchrun ChildFailedError summary block being read
    summary_root: bool = False
    summary_others: bool = False  # inside its 'Failures:' list (the failures other than the root cause)
    summary_rank: int | None = None
    summary_local: int | None = None
    summary_time: str | None = None
    summary_ctx_rank: int | None = None  # the failure block being read belongs to this rank
    # a reporter's caption naming the rank of the pasted dump below it (parsers/captions.py): (rank, its line)
    caption: tuple[int, int] | None = None
    warning_source: int | None = None  # the line a Python warning header just named as its quoted source (parsers/pywarnings.py)
    in_traceback: bool = False
    pending_cmd_local: int | None = None  # a launcher's wrapped command line named this local rank
    mpi_first: int | None = None  # mpirun's "Process name: [[j,1],R]" awaiting its "Exit code:" line
    context_seen: set[int] | None = None  # context-only lines read (see LogParser); made on first use
    bare_step: int | None = None  # the step of the last bare "76970 2.6265" column line
    bare_nan: tuple[int, int] | None = None  # (line, run length) of the last bare "nan" line
    bare_value: tuple[int, int] | None = None  # (line, run length) of the last bare decimal number line
    # the first half of a clipping report a paste word-wrapped: (line, factor form, the norm)
    clip_cut: tuple[int, bool, str | None] | None = None
    # the last NCCL WARN / return-code line of this file: (line number, host, pid)
    nccl_last: tuple[int, str, int] | None = None
    # an NCCL WARN line no fingerprint explained: (line, (host, pid), its source)
    nccl_warn: tuple[int, tuple[str | None, int | None], Any] | None = None
    # an NCCL WARN that a peer dropped the connection: (line, (host, pid), its source); the return
    # codes below it may show it came up through communicator set-up (see exceptions._nccl_chain)
    nccl_peer_warn: tuple[int, tuple[str | None, int | None], Any] | None = None
    # the last NCCL WARN of any kind, and the last return-code line read as a chain with no WARN:
    # (line, (host, pid)) each (see exceptions._nccl_chain)
    nccl_any_warn: tuple[int, tuple[str | None, int | None]] | None = None
    nccl_bare_chain: tuple[int, tuple[str | None, int | None], bool] | None = None  # (..., read already)
    srun_stopping: bool = False  # srun began terminating the job step (later task ends are teardown)
    tensor_line: int | None = None  # line of the last printed scalar tensor (``tensor(0.52, device='cuda:0')``)
    list_steps: int = 0  # values read so far from printed lists of losses (their running index is the step)
    table_cols: tuple[str | None, ...] | None = None  # canonical keys of the last metric table header's columns
    csv_cols: tuple[str | None, ...] | None = None  # canonical keys of a CSV metrics file's header columns
    csv_ends: tuple[str, str] | None = None  # the first and the last cell of the last CSV row read
    plain_cols: tuple[str | None, ...] | None = None  # canonical keys of a plain table header's columns
    plain_line: int | None = None  # line of that header or of the table's last row read
    # where each of those columns' names stands in the header line ((start, end) of its text): a
    # fixed-width row with a blank cell is read by where its cells stand
    plain_spans: tuple[tuple[int, int], ...] | None = None
    # a detector trainer's progress table (ultralytics YOLO): each column's role, the header's line
    progress_cols: tuple[str | None, ...] | None = None
    # the last row of the first ultralytics/yolov3 layout read: ((epoch, rank), batch, its printed
    # running mean of the epoch's losses, half a unit of that mean's last digit)
    progress_mean: tuple[tuple[float, int | None], int, float, float] | None = None
    progress_not_mean: bool = False  # two of those rows no running mean of losses (>= 0) can give
    # the numbers of leading "[N] " seen (bounded): a viewer numbers each line once, so a number
    # seen on two lines is a rank tag (``mpirun -prepend-rank``), and from then on every one is
    bracket_seen: dict[int, int] = field(default_factory=dict)  # number → the line it was first seen on
    bracket_ranks: bool = False
    bar_zero: bool = False  # the last bar this file showed stood at 0/N (parse.py: a loop that had not begun)
    progress_line: int | None = None
    # an orchestrator's per-rank failure section being read: (speaker pid, the ranks it names, header line)
    snippet: tuple[int | None, tuple[int, ...], int] | None = None
    stall_list: int | None = None  # line of a stall inspector's list header or its last entry
    # a rank-tagged C++ log line (``[rank0]:[W NPUStream.cpp:365] ...``) whose message goes on over
    # the next lines, which carry no tag of their own: (its rank, its line)
    cpp_cont: tuple[int, int] | None = None
    # rich's RichHandler wraps a long message onto lines indented to its message column (the time
    # and level columns blank): (that column, the record's rank, the last line of the record)
    rich_cont: tuple[int, int | None, int] | None = None
    # line of Python's "Exception ignored in: ..." header (sys.unraisablehook): the traceback below
    # it ends in an exception the interpreter printed and went on from
    unraisable: int | None = None
    # line of a CUDA check's header whose error string is printed on the next line (llm.c's
    # "[CUDA ERROR] at file train_gpt2.cu:265:" then "out of memory")
    cuda_check: int | None = None
    # a native backtrace being read (UCX's "==== backtrace (tid: 227) ===="): its line and whether
    # a communication library's frame was already reported from it
    native_bt: tuple[int, bool] | None = None
    # line and (rank, local rank) of a traceback a log message introduced ("Import of quick_gelu ...
    # failed with: Traceback (most recent call last):"): a caught exception the program logged
    logged_tb: tuple[int, tuple[int | None, int | None]] | None = None
    shapes: Any = None  # detectors.shapes.ShapeBook: this file's metric line shapes, made on first use
    # the ranks the file's own path gave, kept when a pasted ``==> path <==`` header (parsers/sections.py)
    # first sets the ranks of the lines below it to what its path says
    own_ranks: tuple[int | None, int | None] | None = None
    # the frames (``File "...", line N, in fn``) of the traceback being printed, per (rank, local
    # rank) of its lines: an interrupted process's last frames say where it was (parsers/exceptions.py)
    frames: dict[tuple[int | None, int | None], list[tuple[str, str, int]]] | None = None
    frames_at: int | None = None  # line of the last such frame read
    # a faulthandler dump's thread block being read, per (rank, local rank): its frames so far
    # (innermost first) and the stack sample they make (parsers/exceptions.py); None once the block's
    # outermost frame said whose thread it is
    fh_blocks: dict[tuple[int | None, int | None], FhBlock | None] | None = None
    # threading.excepthook's "Exception in thread ...:" header being read: (its line, its (rank, local rank) tags)
    thread_exc: tuple[int, tuple[int | None, int | None]] | None = None
    # a traceback's quoted source line that checks for NaN (``assert (x == x).all()``, ``assert not
    # torch.isnan(loss)``): (its line, its (rank, local rank) tags); a bare AssertionError right below is that check failing
    nan_assert: tuple[int, tuple[int | None, int | None]] | None = None
    # the file's last bytes before the chunk being parsed (detectors.oddrank.LOOKBACK_BYTES), and
    # while a chunk is parsed, the chunk and where the candidate line being parsed starts in it:
    # a collective mismatch reads the lines printed just before it (detectors.oddrank)
    tail: bytes = b""
    look_buf: bytes | None = None
    look_at: int = 0
    # each rank's last own note in the file's last lines: ("g", rank) or ("l", local rank) → (line,
    # the message made comparable, the line), and the CRC-32 of the last ``last_notes`` value sent
    # (parse.py ``_last_notes``; 0: none)
    notes: dict[tuple[str, int], tuple[int, str, str]] | None = None
    notes_key: int = 0


@dataclass(slots=True)
class Segment:
    """One ``\\r``-segment of a line, prefixes stripped, rank resolved."""

    body: str
    pre: Prefixed
    source: Source
    file: FileState
    rank: int | None
    local_rank: int | None
    out: list[Event]
    raw: str = ""  # the segment before prefix stripping
    sampled: bool = False  # a metrics rule already read this segment
    rank_from: str | None = None  # provenance of ``rank`` (see Event.rank_from)

    def emit(self, kind: EventKind, **kw: object) -> Event:
        """An event of this segment (``kw`` may name another ``rank``: a table's per-rank column)."""
        if "rank" in kw:
            ev = Event(kind=kind, source=self.source, local_rank=self.local_rank, host=self.pre.host,
                       time=self.pre.time, **kw)  # type: ignore[arg-type]
        else:
            ev = Event(kind=kind, source=self.source, rank=self.rank, local_rank=self.local_rank, host=self.pre.host,
                       time=self.pre.time, rank_from=self.rank_from if self.rank is not None else None,
                       **kw)  # type: ignore[arg-type]
        self.out.append(ev)
        return ev


Handler = Callable[[re.Match[str], Segment], bool]


@dataclass(slots=True)
class Rule:
    """A trigger for the fast scan plus the handler that turns a match into events.

    ``regex`` is searched in the segment body; the handler returns True when the line is
    fully explained (fingerprints and the generic exception rule are then skipped).
    """

    name: str
    pattern: str
    handle: Handler
    on_raw: bool = False  # search the segment with its prefixes (the prefix itself is the signal)
    regex: re.Pattern[str] = field(init=False)

    def __post_init__(self) -> None:
        self.regex = re.compile(self.pattern)


def annotate(out: list[Event], first: int, state: FileState, dropped_before: int) -> None:
    """What every event of one parsed segment carries from its file's state: a refused
    implausible rank (detect counts it as a drop), the tqdm progress and the restart attempt."""
    if state.job.implausible != dropped_before:
        for ev in out[first:]:
            ev.data["implausible_rank"] = True
    if state.progress is not None:
        for ev in out[first:]:
            ev.data.setdefault("progress", state.progress)
    if state.attempt is not None:
        for ev in out[first:]:
            ev.data.setdefault("attempt", state.attempt)


def plausible(rank: int, trusted_ws: int) -> bool:
    """A rank read from log text (a prefix, a message) is believed unless the job's size is
    known from trusted sources and the rank is far outside it (2x + 64): 20,000 lines of
    made-up ``[rank100000]:`` prefixes must not create 20,000 ranks or move the verdict.
    (Here, below the ranks module, so that a parser can weigh a rank it reads itself.)"""
    return trusted_ws <= 0 or rank < 2 * trusted_ws + 64
