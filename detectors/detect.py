"""Per-event detection: events → job state (findings, samples, exits, loss-scale moves).

``JobState.add(event)`` is the whole detect stage: it is incremental, pure and cheap
(O(1) per event apart from bounded per-rank windows). What needs the whole job — which
rank's NaN came first, whether loss-scale moves are warm-up or collapse, which rank
hung — is decided by ``correlate.incidents(state)`` from this state, so the live daemon
and ``diagnose`` reach the same verdict from the same bytes.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from math import isfinite, isnan
from typing import Any

from detectors.catalog import Catalog, load_catalog
from detectors.model import Event, EventKind, Finding, RankKey, Role, SampleRec, ScaleMove, Source, key_of
from detectors.parsers.exceptions import BLOCK_LINES
from detectors.parsers.progress import EPOCH_WEIGHT
from detectors.tracks import SymptomTrack
from detectors.window import finite_min, finite_top, median_mad

__all__ = ["JobState", "RankKey", "SampleRec", "ScaleMove"]

# how far below a bare exception line the rest of its message may name its failure: torch_npu
# appends CANN's "ERRnnnnn ... call acl api failed", "[Error]: ..." and "Rectify the fault ..."
# lines, then the EI code that says what happened
MESSAGE_LINES = 4


_FRAMEWORK_ORDER = ("deepspeed", "megatron", "lightning", "hf_trainer")
WINDOW = 256  # per-rank samples kept for robust baselines
# samples kept over the whole job: 256 per rank up to 1024 ranks; a larger job keeps fewer per
# rank (never under MIN_WINDOW), so a 4096-rank job logging on every rank holds 64 per rank
# (the state, and a checkpoint, stay ~200 MB instead of growing to ~750 MB as the run goes on)
SAMPLE_BUDGET = WINDOW * 1024
MIN_WINDOW = 64
# log lines in a row on which every iteration was skipped at one loss scale: the first of them
# (the scale it shows) and two more at the same scale (a dynamic scaler halves on each skip,
# at most every other one with Megatron's hysteresis of 2)
STATIC_SKIP_LINES = 3
BASELINE_EVERY = 16  # samples between baseline refreshes
MAX_FINDINGS = 100_000
LOCAL_OVERFLOW_NOTES = 10_000  # per job: a rank's notes of its own inf/NaN gradients kept
MAX_SKIP_NOTES = 1_000  # per job: ranks' notes that they caught an error and skipped a batch
MAX_RANKS = 16_384  # distinct ranks with their own state (a bound far below any label explosion)
MAX_PROCS = 1024  # NCCL processes (host:pid) whose rank-less cause findings wait for their rank
MAX_LISTED_KEYS = 16  # tensors read from one stall-list line (Horovod lists a rank's first few)
MAX_STALL_REPORTS = 16  # stall-inspector lists whose ranks are kept (the first ones tell who started it)
ZERO_HOVER_MADS = 10.0  # a loss whose median is within 3 MADs of zero spikes only this many MADs above it
JUMP_BEFORE_NAN = 4.0  # the last finite loss before a NaN this many times its level: the spike came first
UNKEYED_RATIO = 50.0  # bare number columns: only a rise this many times over counts
# a running mean of an epoch's batch losses (the first ultralytics/yolov3 rows) that moved so that
# the batches since its last row averaged, at the least, this many times that earlier mean: a
# batch's loss a gross multiple of the epoch's, the same ratio bare number columns need (the value
# is inferred from two rounded means, so only a gross change counts)
RUNNING_MEAN_JUMP = 50.0
NORM_EXPLOSION_FLOOR = 1.0  # a gradient norm under this is no explosion by any ratio
NORM_CLIMB_FACTOR = 15.0  # a grad norm this many times its first values' median, after a steady climb
NORM_CLIMB_LEVEL = 10.0  # ... with the last five values all at least this many times it
NORM_CLIMB_UP = 0.7  # ... and this share of its moves upward
ABSURD_GRAD_NORM = 1e6  # a finite gradient norm this large is an explosion whatever came before
# a finite loss this large (a trillion) is a divergence whatever came before: no objective a run
# trains logs it (no healthy or benign case of the corpus logs a loss above 1e6)
ABSURD_LOSS = 1e12
STUCK_REPEATS = 3  # skips that keep one scale above 1 before it reads as the scaler's floor
HYSTERESIS_SCALE = 1024.0  # a skip that keeps a scale this high is hysteresis, never a floor (see fp16 moves)
RETURN_LEVEL = 0.9  # a learned loss back at 90 % of where it started, and held (JobState._returned)
DRIFT_FACTOR = 10.0  # a learned loss drifting back up to 10x its best, gradually (RankState._drifting)
ABSURD_LOSS_JUMP = 1e6  # a loss moving a million times its level (at least 1.0) in one step
# a model guessing uniformly has the perplexity of its vocabulary; no vocabulary has a billion
# entries, so a perplexity beyond that is a loss worse than chance: the run has diverged
ABSURD_PPL = 1e9
# a perplexity of ten million (a loss of 16 nats) is beyond the vocabulary of any tokenizer in use
# (a million entries is e^13.8): held over SUSTAINED_PPL_N logged values in a row past the first
# steps, the model predicts worse than chance, a run that diverged and stayed there
SUSTAINED_PPL = 1e7
SUSTAINED_PPL_N = 5
CLIMB_RISE = 1.1  # a steady climb over six logged losses counts from 10 % (JobState._climbing)
EARLY_STEPS = 10  # the first steps of a run, where a short series is no baseline for a spike
# an evaluation loss is computed on the same held-out set each time: between two evaluations it
# moves only as the weights do (a few % per evaluation in healthy runs), so a third above its
# best is a jump, unless the training loss kept falling meanwhile (over-fitting, not divergence)
MAX_EPOCHS_KEPT = 4096  # epochs whose batch count and per-batch loss are kept (epoch_batches)
SUMMARY_LOOKBACK = 64  # samples looked back at for per-batch lines before an epoch's summary line
EVAL_JUMP = 4.0 / 3.0
# an evaluation line that counts batches within its pass ("eval batch 2 mse 15.2", "Test: [ 10/100]"):
# one batch's value, which varies from batch to batch, not the pass's result
_EVAL_BATCH = re.compile(r"(?i:\bbatch(?:es)?\s*[:#]?\s*\d+(?![\d.])|\[\s*\d+\s*/\s*\d+\s*\])")
EVAL_MIN_RISE = 0.25  # and at least this much above its best (the training loss rule's own floor)
# a logged perplexity this many times the median of the earlier ones is a spike, the same
# ratio the loss itself is judged by (see JobState._ppl_spike)
PPL_JUMP = 3.0


def nonfinite(v: Any) -> bool:
    return isinstance(v, float) and not math.isfinite(v)


def _reached_zero(st: RankState) -> bool:
    """A logged loss of this rank at or below zero (an NLL, a log-likelihood objective)."""
    return any(isinstance(v := p.data.get("loss"), float) and v <= 0 for p in st.samples)


LEVEL_START = 0.02  # a run's first losses within 2 % of each other: a model still at its start


def _level_start(st: RankState, rec: SampleRec, med: float) -> bool:
    """Two or more losses before ``rec``, every one within LEVEL_START of their median."""
    before = [v for p in st.samples if p is not rec and isinstance(v := p.data.get("loss"), float) and math.isfinite(v)]
    return len(before) >= 2 and all(abs(v - med) <= LEVEL_START * abs(med) for v in before)


def _jump_before_nan(st: RankState, nan_rec: SampleRec) -> None:
    """The last finite loss logged right before the first non-finite one had jumped JUMP_BEFORE_NAN
    times or more over the three before it (0.15 → 1.38, then nan): a divergence the NaN ended, a
    spike that came first, even where a loss still falling from a high start keeps the window's
    median above it. Only a rise of at least 0.5 counts (a loss near zero wobbles by ratios)."""
    prev = [p for p in st.samples if p.order < nan_rec.order and isinstance(p.data.get("loss"), float)]
    if len(prev) < 4 or prev[-1].data.get("unkeyed"):
        return
    last = prev[-1]
    v = last.data["loss"]
    before = [p.data["loss"] for p in prev[-4:-1]]
    if not (math.isfinite(v) and all(math.isfinite(b) for b in before)):
        return
    level = sorted(before)[1]
    if level > 0 and v >= JUMP_BEFORE_NAN * level and v - level >= 0.5:
        st.spike = last
        last.data.setdefault("baseline_median", level)


@dataclass
class RankState:
    key: RankKey
    last_step: int | None = None
    last_step_order: int = -1
    last_step_time: float | None = None
    # (path, file generation, line) of the sample that set last_step: a sample from the same
    # file generation with an earlier line arrived late (MQTT redelivery), it is not a restart
    last_step_at: tuple[str, int, int] | None = None
    samples: deque[SampleRec] = field(default_factory=lambda: deque(maxlen=WINDOW))
    n_samples: int = 0
    first_bad_loss: SampleRec | None = None
    first_bad_grad: SampleRec | None = None
    first_bad_global: SampleRec | None = None  # NaN seen in a reduced (global) metric
    grad_recovered: SampleRec | None = None  # a finite grad norm (and loss) after first_bad_grad
    grad_episodes: int = 0  # separate runs of non-finite grad norms (each a skipped step, if recovered)
    grad_bad_now: bool = False
    dynamic_scale: bool = False  # a loss scale above 1 was logged: a dynamic scaler is at work
    spike: SampleRec | None = None
    explosion: SampleRec | None = None
    # the first of the perplexities in a row at SUSTAINED_PPL or above, and how many
    ppl_high_from: SampleRec | None = None
    ppl_high_n: int = 0
    # per evaluation series (a loss, or the log of a perplexity): its lowest value so far and the
    # training loss last logged when it was set (an immutable class-level default: a rank state
    # restored from an older checkpoint reads it)
    eval_bests: tuple[tuple[str, float, float | None], ...] = ()
    eval_epoch: float | None = None  # the epoch of the last evaluation logged with one
    scale_last: float | None = None
    scale_min: float | None = None  # lowest loss scale a metric line logged
    scale_min_rec: SampleRec | None = None
    skipped_last: tuple[int | None, float] | None = None
    last: dict[str, float] = field(default_factory=dict)  # latest loss / grad_norm / loss_scale
    progress_wall: float | None = None  # wall time (read time) the step last advanced
    step_intervals: deque[float] = field(default_factory=lambda: deque(maxlen=64))
    skipped_total: int = 0
    # Megatron-style per-interval skip counts: the current run of log lines on which every
    # iteration was skipped at one loss scale (scale, lines, the run's first record)
    skip_run: tuple[float | None, int, SampleRec] | None = None
    # the same counts since the loss scale last came down: (skipped, iterations, lines with a skip,
    # the first such line, the scale of the last line); the scaler's search is over by then
    interval_skips: tuple[int, int, int, SampleRec | None, float | None] = (0, 0, 0, None, None)
    nonfinite: Counter[str] = field(default_factory=Counter)
    baseline: dict[str, tuple[float, float, int]] = field(default_factory=dict)  # metric → (median, MAD, n)
    # the last progress counter a line with no metric gave (parsers/progress.py: epoch-weighted)
    last_progress: int | None = None
    last_progress_line: tuple[str, int] | None = None  # (path, line) of the line that gave it


# events that end a traceback block of their file: its exception line (a failure), or the
# file going on with metrics or launcher lines
_CLOSES_BLOCK = frozenset({EventKind.MATCH, EventKind.SAMPLE, EventKind.EXIT, EventKind.TEARDOWN})


_TERMINATE = re.compile(r"\s*(?:\S+\s+)?what\(\):\s")
# libstdc++'s std::terminate as the process dies: no message of the exception printed above it
_DYING = re.compile(r"\s*terminate called (?:without an active exception|recursively)")


def _memory_only(ev: Event) -> bool:
    """A sample of memory figures alone (an OOM message's "63.19 GiB already allocated"): part of
    the exception line that ends a traceback, not the file going on with training metrics."""
    return ev.kind is EventKind.SAMPLE and ev.step is None and not any(
        k in ev.data for k in ("loss", "grad_norm", "loss_scale", "eval_loss", "epoch"))


def _setup_only(d: dict[str, Any]) -> bool:
    """A sample that set-up prints before any training step: NCCL's version line, or memory figures
    alone (DeepSpeed's ``see_memory_usage`` before the engine is built). It is no metric line."""
    return d.get("scope") == "perf" and all(k in _SETUP_KEYS or k.startswith("mem_") for k in d)


_SETUP_KEYS = frozenset({"scope", "perf", "nccl_version", "nccl_build", "rank_from", "progress", "attempt"})


def _late(st: RankState, ev: Event) -> bool:
    """A sample from the file (and file generation) that set the rank's step, at an earlier
    line: it was delivered out of order (MQTT redelivery, a batch that reached a half-made
    subscription). Its values count; it never moves the rank's step back, and is not progress.
    A file read in order never has one; a restart writes later lines or a new generation."""
    at = st.last_step_at
    return (at is not None and ev.source.line < at[2] and ev.source.path == at[0]
            and int(ev.data.get("generation", 0) or 0) == at[1])


@dataclass(slots=True)
class SyncPoint:
    """Ranks reported present (waiting, ready) at one sync point: a store barrier key, a
    Horovod tensor. The rank absent from every report is the one the others wait for."""

    ranks: set[int]
    source: Source  # the first report
    order: int
    last_order: int
    world: int | None = None  # the world size the reports state
    timeout: float | None = None  # seconds, as the reports state it
    first_time: float | None = None
    last_time: float | None = None
    stalled: bool = False  # the speaker already judged the wait too long (a stall warning)
    foreign: bool = False  # more workers joined than the world size: two jobs on one store
    absent: set[int] = field(default_factory=set)  # ranks a report names as missing (presence "missing")
    report: int = 0  # which stall-list report first named it (1, 2, ...; 0: not from such a list)


# a line that reports an error (the message logger.exception prints above its traceback)
_ERROR_WORD = re.compile(r"\b(?:E|ERROR|CRITICAL|FATAL)\b|[Ee]rror|[Ee]xception|\b[Ff]ail(?:ed|ure)?\b|\bOOM\b|[Oo]ut of memory")


class JobState:
    def __init__(self, job: str = "job", catalog: Catalog | None = None, max_ranks: int = MAX_RANKS) -> None:
        self.job = job
        self.max_ranks = max_ranks  # distinct ranks with their own state; beyond it → the rank-less bucket
        self.catalog = catalog or load_catalog()
        self.order = 0
        self.findings: list[Finding] = []
        self.ranks: dict[RankKey, RankState] = {}
        self.context_votes: dict[str, Counter[Any]] = {}
        self.world_claims: dict[int, tuple[int, Source]] = {}  # rank → the world size its own line stated, and the line
        self.exits: list[Event] = []
        self.teardowns: list[Event] = []
        self.scale_moves: list[ScaleMove] = []
        self.skip_samples: list[SampleRec] = []
        self.local_to_global: dict[int, int] = {}
        self.multi_node = False
        self.seen_global: set[int] = set()
        self.seen_local: set[int] = set()
        self.dropped = Counter[str]()
        self.match_counts: Counter[tuple[int | None, str]] = Counter()  # (rank, failure) → lines
        self.first_sample_order: int | None = None  # arrival order of the first metric line
        # the last tqdm bar edge the parse saw: (order, counter, total, line); counter 0 is a
        # loop's bar that had not moved yet (parse.py ``_bar_edge``)
        self.bar_at: tuple[int, int, int, Source] | None = None
        # per file, the last line whose own text named its rank (prefix or message): (line, rank)
        self.ranked_line: dict[str, tuple[int, int]] = {}
        self.traceback_ranks: set[int] = set()  # ranks that printed a traceback (not silent: not hung)
        self.last_traceback_order = 0  # arrival order of the last traceback (any rank, or none named)
        # per file, a traceback whose exception line has not come (yet): nothing read after its
        # header (a failure, a metric line, a launcher line) closed it
        # path → (order, header, rank, rank_from, wall time it was read: live only)
        self.open_blocks: dict[str, tuple[int, Source, int | None, str | None, float | None]] = {}
        # rank-less cause findings a rank-tagged block right below may claim (path → (line, finding))
        self._unranked: dict[str, list[tuple[int, Finding]]] = {}
        # ... and those of an NCCL process (host:pid) whose rank a later line may tell
        self._proc_unranked: dict[str, list[int]] = {}  # indices into findings
        # per file, the last line a specific cause was matched on (path → (line, failure)): the
        # bare exception ending that traceback just below it is the cause's own exit
        self._cause_lines: dict[str, tuple[int, str]] = {}
        # per file, the last bare exception (no fingerprint of its own): path → (line, index into
        # findings, speaker). A catalog line at most MESSAGE_LINES below it from the same speaker is
        # the rest of its message (torch_npu prints CANN's "EI0006: ... Getting socket times out"
        # under the RuntimeError, after its own "ERR00100 PTA call acl api failed" and "[Error]:"
        # lines): the exception is that line's failure, not one of its own
        self._bare_exc: dict[str, tuple[int, int, int | None]] = {}
        self.max_nranks = 0  # the largest NCCL communicator seen (the world's)
        self.aborted_ranks: set[int] = set()  # NCCL aborted their communicator: they saw an error
        self.sync_points: dict[str, SyncPoint] = {}  # key → who reported reaching it (see _presence)
        # stall-inspector lists: per file the line of the last entry read, how many lists so far,
        # and the ranks each of the first MAX_STALL_REPORTS lists named as missing
        self.missing_at: dict[str, int] = {}
        self.missing_reports = 0
        self.missing_lists: dict[int, set[int]] = {}
        self.first_step_order: int | None = None  # ... and of the first one with a step counter
        self.first_step_value: int | None = None  # that step counter (an excerpt may start mid-run)
        self.max_epoch = 0.0  # the highest epoch a metric line logged
        self.finished = False  # a launcher reported the end of the job (exit, teardown, summary)
        self.trained_to_end = False  # a framework printed its end-of-training summary
        # ps-lite's rendezvous (parsers/context.py ``_pslite``): "joining" after a node's ADD_NODE,
        # "joined" once the scheduler or a node said every node is connected; None: never seen
        self.pslite: str | None = None
        # the endpoints Paddle's start-up waits for its peers named ("not ready endpoints:[...]",
        # parsers/context.py ``_endpoint_wait``; a set, so alike lines read or skipped say the same)
        self.endpoint_wait: set[str] | None = None
        self.trained_at: int | None = None  # arrival order of a framework's end-of-training line
        # epoch → (its batch count, the last per-batch loss) from per-batch lines that count their
        # epoch's batches ("Epoch: 45  Batch: 200/2000 ... Loss: 0.0065"): an epoch summary's sum
        self.epoch_batches: dict[int, tuple[float, float]] = {}
        self.symptoms = SymptomTrack()  # bounded perf/eval/memory/loss series for detectors/symptoms.py
        self.window = WINDOW  # samples kept per rank (see SAMPLE_BUDGET)
        # the first and latest record of STATIC_SKIP_LINES log lines in a row whose every
        # iteration was skipped at an unmoving loss scale (see _interval_skips)
        self.static_skips: tuple[SampleRec, SampleRec] | None = None
        # overflow reports under a static loss scale (the step skipped, the scale unchanged): the
        # first one, its step and how many (a static scaler never backs off: these are no ScaleMoves)
        self.static_overflows: tuple[Source, int | None, int] | None = None
        # one rank's own notes of inf/NaN in its local gradients (see Fingerprint.local_overflow):
        # (rank, local rank, step, order, line), the first LOCAL_OVERFLOW_NOTES of them
        self.local_overflows: list[tuple[int | None, int | None, int | None, int, Source]] = []
        # who printed the scaler's overflow reports: (rank, local rank) -> (first order, last
        # order, first line); the last report that named no printer (its order)
        self.overflow_printers: dict[tuple[int | None, int | None], tuple[int, int, Source]] = {}
        self.unprinted_overflow: int | None = None
        # summaries of skipped steps: (skipped, of the last N steps, arrival order, source)
        self.skip_windows: list[tuple[float, float, int, Source]] = []
        # the scale a dynamic scaler last said it grew back to (since the last back-off)
        self.scale_regrown: float | None = None
        # per file, each rank's last own note in the file's last lines: path → ("g", rank) or ("l",
        # local rank) → (line, the message made comparable, the line) (parse.py ``_last_notes``; correlate.hang)
        self.last_notes: dict[str, dict[tuple[str, int], tuple[int, str, Source]]] = {}
        # a rank's own notes that it caught an error and skipped a batch (parsers/skips.py): (arrival
        # order, global rank or None, local rank or None, where the rank came from, the line), the
        # first MAX_SKIP_NOTES (correlate.hang)
        self.skipped_batches: list[tuple[int, int | None, int | None, str | None, Source]] = []

    def __getstate__(self) -> dict[str, Any]:
        d = self.__dict__.copy()
        d.pop("catalog", None)  # checkpoints hold the state, not the catalog
        return d

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__dict__.update(d)
        self.catalog = load_catalog()
        self.__dict__.setdefault("symptoms", SymptomTrack())  # checkpoints written before issue #8
        self.__dict__.setdefault("_proc_unranked", {})
        self.__dict__.setdefault("_cause_lines", {})
        self.__dict__.setdefault("_bare_exc", {})
        self.__dict__.setdefault("sync_points", {})
        self.__dict__.setdefault("missing_at", {})
        self.__dict__.setdefault("missing_reports", 0)
        self.__dict__.setdefault("missing_lists", {})
        self.__dict__.setdefault("last_traceback_order", 0)
        self.__dict__.setdefault("bar_at", None)
        self.__dict__.setdefault("ranked_line", {})
        self.__dict__.setdefault("max_nranks", 0)
        self.__dict__.setdefault("aborted_ranks", set())
        self.__dict__.setdefault("open_blocks", {})
        self.__dict__.setdefault("window", WINDOW)
        self.__dict__.setdefault("static_skips", None)
        self.__dict__.setdefault("static_overflows", None)
        self.__dict__.setdefault("local_overflows", [])
        self.__dict__.setdefault("overflow_printers", {})
        self.__dict__.setdefault("unprinted_overflow", None)
        self.__dict__.setdefault("skip_windows", [])
        self.__dict__.setdefault("scale_regrown", None)
        self.__dict__.setdefault("trained_to_end", False)
        self.__dict__.setdefault("pslite", None)
        self.__dict__.setdefault("endpoint_wait", None)
        self.__dict__.setdefault("trained_at", None)
        self.__dict__.setdefault("epoch_batches", {})
        self.__dict__.setdefault("last_notes", {})
        self.__dict__.setdefault("skipped_batches", [])

    # ----------------------------------------------------------------- bookkeeping
    def note_file(self, rank: int | None, local: int | None) -> None:
        """A log file whose path names a rank exists (even if it never says anything)."""
        if rank is not None:
            self.seen_global.add(rank)
        if local is not None:
            self.seen_local.add(local)

    def learn(self, local: int, rank: int) -> None:
        """A line tied a local rank to a global one: fold what was seen under the local key."""
        if self.local_to_global.get(local) == rank:
            return
        self.local_to_global[local] = rank
        if local != rank:
            self.multi_node = True
        old = self.ranks.pop(("l", local), None)
        if old is None:
            return
        cur = self.ranks.get(("g", rank))
        if cur is None:
            old.key = ("g", rank)
            self.ranks[("g", rank)] = old
            return
        cur.n_samples += old.n_samples
        if old.last_step_order > cur.last_step_order:
            cur.last_step, cur.last_step_order, cur.last_step_time = old.last_step, old.last_step_order, old.last_step_time
        for attr in ("first_bad_loss", "first_bad_grad", "first_bad_global", "spike", "explosion"):
            a, b = getattr(old, attr), getattr(cur, attr)
            if a is not None and (b is None or a.order < b.order):
                setattr(cur, attr, a)
        cur.samples = deque(sorted([*old.samples, *cur.samples], key=lambda r: r.order), maxlen=self.window)

    def rank_state(self, key: RankKey) -> RankState:
        st = self.ranks.get(key)
        if st is None:
            st = self.ranks[key] = RankState(key, samples=deque(maxlen=self.window))
            if len(self.ranks) * self.window > SAMPLE_BUDGET and self.window > MIN_WINDOW:
                self._shrink_windows()
        return st

    def _shrink_windows(self) -> None:
        """Keep the job's samples within SAMPLE_BUDGET: every rank keeps its latest ``window``.
        Halving (not a tight fit) makes it happen at most twice, each time O(samples kept)."""
        while len(self.ranks) * self.window > SAMPLE_BUDGET and self.window > MIN_WINDOW:
            self.window = max(MIN_WINDOW, self.window // 2)
        for rs in self.ranks.values():
            if rs.samples.maxlen != self.window:
                rs.samples = deque(rs.samples, maxlen=self.window)

    def context(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, votes in self.context_votes.items():
            out[k] = votes.most_common(1)[0][0]
        fw = self.context_votes.get("framework")
        if fw:
            # DeepSpeed or Megatron under an HF/Lightning loop own the precision config
            out["framework"] = next((f for f in _FRAMEWORK_ORDER if f in fw), out["framework"])
        if self.scale_moves:
            # only fp16 with dynamic loss scaling reduces a loss scale
            out.setdefault("precision", "fp16")
            out.setdefault("loss_scaling", True)
        return out

    # ----------------------------------------------------------------- the stage
    def add(self, ev: Event, now: float | None = None) -> None:
        """Fold one event in. ``now`` is the wall time the line was read (live only)."""
        if ev.kind is EventKind.CONTEXT and ev.data.get("key") == "last_notes":
            # (a note of where the file stands, sent after a chunk: no line's event, so it takes no
            # arrival order and closes no block, however the file was cut into chunks)
            self._last_notes(ev)
            return
        self.order += 1
        order = self.order
        path = ev.source.path
        if ev.kind is EventKind.BLOCK and ev.data.get("untagged") and ev.rank is None and ev.local_rank is None:
            said = self.ranked_line.get(path)
            if said is not None and ev.source.line - said[0] == 1:
                # an untagged traceback right below a line that named its rank ("E rank2 train.py:22]
                # OOM at step 27 - skipping batch", then logger.exception's traceback): that rank's
                ev.rank, ev.rank_from = said[1], "block"
        if ev.rank is not None and ev.rank_from in ("prefix", "message"):
            # (only a line that reports an error: logger.exception's message, not any rank's note
            # such as DeepSpeed's "[Rank 0] Creating ZeRO Offload" that another process's traceback follows)
            if not _ERROR_WORD.search(ev.source.text):
                self.ranked_line.pop(path, None)
            elif path in self.ranked_line or len(self.ranked_line) < MAX_PROCS:
                self.ranked_line[path] = (ev.source.line, ev.rank)
        if self.open_blocks and ev.kind in _CLOSES_BLOCK and not _memory_only(ev):
            blk = self.open_blocks.pop(ev.source.path, None)
            if (blk is not None and blk[2] is not None and ev.kind is EventKind.MATCH and ev.rank is None
                    and ev.local_rank is None and "rank" not in ev.data and not ev.data.get("job_scope")):
                # the untagged exception line that ends a traceback whose header named its rank
                # (ParlAI's "rank:  3 | ... CRITICAL | Traceback ..." above bare frames): that rank's
                ev.rank, ev.rank_from = blk[2], "block"
        if ev.data.get("implausible_rank"):
            self.dropped["implausible_rank"] += 1  # the parser refused a rank far outside the job's size
        if ev.rank is not None:
            if len(self.seen_global) < self.max_ranks:
                self.seen_global.add(ev.rank)
            if ev.local_rank is not None and len(self.local_to_global) < self.max_ranks:
                self.learn(ev.local_rank, ev.rank)
        elif ev.local_rank is not None and len(self.seen_local) < self.max_ranks:
            self.seen_local.add(ev.local_rank)
        if ev.kind is EventKind.EXIT and ev.rank is None and ev.data.get("local_rank") is not None:
            key = key_of(None, ev.data["local_rank"])  # the launcher names the worker by local rank
        else:
            key = key_of(ev.rank, ev.local_rank)
        if key is not None and key[0] == "l" and key[1] in self.local_to_global:
            key = ("g", self.local_to_global[key[1]])
        if key is not None and key not in self.ranks and len(self.ranks) - (None in self.ranks) >= self.max_ranks:
            # bounded state: a log with 100,000 "ranks" is garbage or an attack, not a job
            self.dropped["max_ranks"] += 1
            key = None
            ev.rank = ev.local_rank = None
        st = self.rank_state(key)
        step = ev.step
        if ev.kind is EventKind.SAMPLE:
            if ev.step is not None and _late(st, ev):
                self._sample(st, ev, order, moves=False)
                return
            if now is not None and ev.step is not None and (st.last_step is None or ev.step > st.last_step):
                if st.progress_wall is not None:
                    st.step_intervals.append((now - st.progress_wall) / max(1, ev.step - (st.last_step or 0)))
                st.progress_wall = now
            self._sample(st, ev, order)
            return
        if step is None:
            step = st.last_step if st.last_step is not None else ev.data.get("progress")
            noted = getattr(st, "last_progress", None)
            if (ev.kind is EventKind.MATCH and noted is not None and step is not None and noted > step
                    and noted < EPOCH_WEIGHT and st.last_progress_line == (ev.source.path, ev.source.line)):
                # the line itself names the step it was printed at ("[rank 0] step  52 | WARNING ..."),
                # after the rank's last metric line (step 48): the report is of step 52
                step = noted
        if ev.kind is EventKind.MATCH and ev.data.get("presence"):
            self._presence(ev, order)  # who reached a sync point: not a failure of its own
        elif ev.kind is EventKind.MATCH:
            mrank = int(ev.data["rank"]) if "rank" in ev.data else (key[1] if key and key[0] == "g" else None)
            self.match_counts[(mrank, ev.failure or "rank_exception")] += 1
            self._match(ev, order, step)
        elif ev.kind is EventKind.EXIT:
            self.finished = True
            if ev.data.get("host") and any(e.data.get("host") not in (None, ev.data["host"]) for e in self.exits):
                self.multi_node = True  # the launcher reports failed workers on several hosts
            ev.step = step
            ev.data["order"] = order
            self.exits.append(ev)
        elif ev.kind is EventKind.TEARDOWN:
            self.finished = True
            ev.data["order"] = order
            self.teardowns.append(ev)
        elif ev.kind is EventKind.PROGRESS:
            st.last_progress = int(ev.data["progress_at"])
            st.last_progress_line = (ev.source.path, ev.source.line)
        elif ev.kind is EventKind.CONTEXT and ev.data["key"] == "bar_at":
            self.bar_at = (order, int(ev.data["value"]), int(ev.data.get("total") or 0), ev.source)
        elif ev.kind is EventKind.CONTEXT and ev.data["key"] == "skipped_batch":
            if len(self.skipped_batches) < MAX_SKIP_NOTES:
                self.skipped_batches.append((order, ev.rank, ev.local_rank, ev.rank_from, ev.source))
        elif ev.kind is EventKind.CONTEXT and ev.data["key"] == "pslite":
            if self.pslite != "joined":
                self.pslite = str(ev.data["value"])  # (once joined, a later node's message is no new rendezvous)
        elif ev.kind is EventKind.CONTEXT and ev.data["key"] == "endpoint_wait":
            if self.endpoint_wait is None:
                self.endpoint_wait = set()
            if len(self.endpoint_wait) < 64:
                self.endpoint_wait.update(str(ev.data["value"]).split(","))
        elif ev.kind is EventKind.CONTEXT and ev.data["key"] == "trained_to_end":
            self.trained_to_end = True  # the framework's own end-of-training line
            self.trained_at = order
        elif ev.kind is EventKind.CONTEXT:
            self.context_votes.setdefault(ev.data["key"], Counter())[ev.data["value"]] += 1
            if ev.data["key"] == "world_size" and ev.rank is not None:
                claims = getattr(self, "world_claims", None)  # (a JobState pickled by an older version lacks it)
                if claims is None:
                    claims = self.world_claims = {}
                if ev.rank in claims or len(claims) < MAX_RANKS:
                    claims[ev.rank] = (int(ev.data["value"]), ev.source)
        elif ev.kind is EventKind.BLOCK and ev.data.get("untagged"):
            self.last_traceback_order = order
            self._open_block(ev, order, now)
        elif ev.kind is EventKind.BLOCK and ev.data.get("claim_only"):
            self._claim_block(ev)
        elif ev.kind is EventKind.BLOCK:
            self.last_traceback_order = order
            self._open_block(ev, order, now)
            self._claim_block(ev)
            if ev.rank is not None:
                self.traceback_ranks.add(ev.rank)
        elif ev.kind is EventKind.RANKMAP:
            self.context_votes.setdefault("world_size", Counter())[ev.data["world_size"]] += 1
            lr = ev.data.get("local_rank")
            if lr is not None:
                self.learn(lr, ev.data["rank"])
            nranks = int(ev.data["world_size"])
            self.max_nranks = max(self.max_nranks, nranks)
            if ev.data.get("aborted") and len(self.aborted_ranks) < MAX_RANKS:
                self.aborted_ranks.add(int(ev.data["rank"]))
            if ev.data.get("nccl_proc") is not None and nranks >= self.max_nranks:
                # the largest communicator seen is the world's: a sub-group's rank is not the global one
                self._tie_proc(ev.data["nccl_proc"], ev.data["rank"], "prefix")

    def _last_notes(self, ev: Event) -> None:
        """A file's ranks' last own notes (parse.py ``_last_notes``), replacing what it said before."""
        notes = getattr(self, "last_notes", None)  # (a JobState pickled by an older version lacks it)
        if notes is None:
            notes = self.last_notes = {}
        path = ev.source.path
        if path not in notes and len(notes) >= MAX_PROCS:
            return
        got: dict[tuple[str, int], tuple[int, str, Source]] = {}
        for row in str(ev.data["value"]).split("\n"):
            parts = row.split("\t", 3)
            if (len(parts) == 4 and len(got) < MAX_RANKS and parts[0][:1] in ("g", "l", "c", "p") and parts[0][1:].isdigit()
                    and parts[1].isdigit()):
                got[(parts[0][0], int(parts[0][1:]))] = (int(parts[1]), parts[2], Source(path, int(parts[1]), parts[3]))
        if got:
            notes[path] = got
        else:
            notes.pop(path, None)

    def _open_block(self, ev: Event, order: int, now: float | None) -> None:
        if ev.source.path in self.open_blocks or len(self.open_blocks) < MAX_PROCS:
            self.open_blocks[ev.source.path] = (order, ev.source, ev.rank, ev.rank_from, now)

    def _claim_block(self, ev: Event) -> None:
        """A ``[rankN]:``-tagged traceback starts: a rank-less cause finding pasted at most
        ``BLOCK_LINES`` lines above it in the same file is that rank's (``rank_from: block``)."""
        pending = self._unranked.pop(ev.source.path, [])
        if ev.rank is not None and ev.data.get("nccl_proc") is not None:
            self._tie_proc(ev.data["nccl_proc"], ev.rank, "block")  # one NCCL process's chain ends right above it
        for line, f in pending:
            if 0 < ev.source.line - line <= BLOCK_LINES and f.rank is None and ev.rank is not None:
                f.rank = ev.rank
                f.data["rank_from"] = "block"

    def _note_printer(self, ev: Event, order: int) -> None:
        """Which process printed an overflow report (its prefix, or the rank its message names
        as the logger: DeepSpeed's ``OVERFLOW! Rank 1 Skipping step``)."""
        by, by_local = _int(ev.data.get("printed_by")), _int(ev.data.get("printed_by_local"))
        key: tuple[int | None, int | None] | None = None
        if by is not None or by_local is not None:
            key = (by, by_local)
        elif (logged := _int(ev.data.get("logging_rank"))) is not None:
            key = (logged, None)
        if key is None:
            self.unprinted_overflow = order
            return
        got = self.overflow_printers.get(key)
        if got is not None:
            self.overflow_printers[key] = (got[0], order, got[2])
        elif len(self.overflow_printers) < MAX_PROCS:
            self.overflow_printers[key] = (order, order, ev.source)
        else:
            self.dropped["overflow_printers"] += 1

    def _tie_proc(self, proc: str, rank: int, how: str) -> None:
        """An NCCL process (``host:pid``) turned out to be ``rank`` (a ``comm ... rank N`` line,
        its traceback right below its error chain): its rank-less cause findings are that rank's,
        even those read before it said so."""
        for i in self._proc_unranked.pop(proc, []):
            f = self.findings[i]
            if f.rank is None:
                f.rank = rank
                f.data["rank_from"] = how

    def _match(self, ev: Event, order: int, step: int | None) -> None:
        failure = ev.failure or "rank_exception"
        if failure == "fp16_overflow_skips" and ev.data.get("local_overflow"):
            # one rank's note of its own inf/NaN gradients: evidence of whose batch overflowed,
            # no scale move (the scaler's own line tells that)
            if len(self.local_overflows) < LOCAL_OVERFLOW_NOTES:
                self.local_overflows.append((ev.rank, ev.local_rank, step, order, ev.source))
            else:
                self.dropped["local_overflows"] += 1
            return
        if failure == "fp16_overflow_skips" and ev.data.get("skip_window"):
            # a summary of the skipped share of the last steps: a rate the correlator judges
            skipped, window = _float(ev.data.get("skipped")), _float(ev.data.get("window"))
            if skipped is not None and window and 0 <= skipped <= window and len(self.skip_windows) < LOCAL_OVERFLOW_NOTES:
                self.skip_windows.append((skipped, window, order, ev.source))
            return
        if failure == "fp16_overflow_skips" and ev.data.get("scale_growth"):
            # the scaler grew back after a clean window: the next back-off that names only its new
            # scale started here (a regrowth, not one more halving of a falling scale)
            self.scale_regrown = _float(ev.data.get("to_scale") or ev.data.get("to_scale2") or ev.data.get("to_scale3") or ev.data.get("to_scale4"))
            return
        if failure == "fp16_overflow_skips" and ("static_scale" in ev.data or "static_scale2" in ev.data):
            # an overflow under a static loss scale: counted (every rank's copy too: a count of reports)
            so = self.static_overflows
            self.static_overflows = (ev.source, step, 1) if so is None else (so[0], so[1], so[2] + 1)
            return
        if failure == "fp16_overflow_skips":
            d = ev.data
            self._note_printer(ev, order)
            to_scale = _float(d.get("to_scale"))
            if to_scale is None and (lg := _float(d.get("to_scale_log2"))) is not None and math.isfinite(lg):
                to_scale = 2.0 ** max(min(lg, 1000.0), -1000.0)  # a scaler that logs log2(scale)
            move = ScaleMove(
                step if step is not None else _int(d.get("iteration")),
                order,
                ev.time,
                ev.source,
                _float(d.get("from_scale")),
                to_scale,
                hysteresis="hysteresis" in d,
                initial=_float(d.get("initial_scale")),
                glued=bool(d.get("glued")),
            )
            if move.from_scale is not None and move.from_scale == move.to_scale and move.to_scale is not None and (
                    move.to_scale >= HYSTERESIS_SCALE or (move.to_scale >= 2 and sum(
                        1 for m in self.scale_moves if m.from_scale == m.to_scale == move.to_scale) < STUCK_REPEATS - 1)):
                # "Attempted loss scale: 1048576.0, reducing to 1048576.0" (DeepSpeed before it said
                # "but hysteresis is N"): a step skipped without a cut at a scale far above any floor
                # is the scaler's hysteresis, not a scaler stuck at its minimum; so is a first such
                # skip at a scale above 1 (ZeRO-3's "Attempted loss scale: 256, reducing to 256" at
                # its initial scale 2^8): only a scale kept again and again is a floor
                move.hysteresis = True
            grown, self.scale_regrown = self.scale_regrown, None
            if grown is not None and move.to_scale is not None and grown > move.to_scale:
                move.regrown = True
                if move.from_scale is None:
                    move.from_scale = grown
            prev = self.scale_moves[-1] if self.scale_moves else None
            if prev is not None and _halves(prev, move):
                # one overflow told in two lines ("Grad overflow on iteration 8" then "Using
                # dynamic loss scale of 8192.0"): one move with the step of one, the scale of the other
                prev.step = prev.step if prev.step is not None else move.step
                prev.to_scale = prev.to_scale if prev.to_scale is not None else move.to_scale
                prev.from_scale = prev.from_scale if prev.from_scale is not None else move.from_scale
                return
            self.scale_moves.append(move)
            return
        entry = self.catalog[failure]
        rank = ev.rank
        speaker = ev.rank
        if "rank" in ev.data:
            rank = int(ev.data["rank"])  # the message names the global rank itself
            self.seen_global.add(rank)
        role = Role(ev.data.get("role", entry.role))
        cause_line = self._cause_lines.get(ev.source.path)
        explained = (failure == "rank_exception" and cause_line is not None and role is Role.CAUSE
                     and 0 < ev.source.line - cause_line[0] <= BLOCK_LINES)
        if explained and cause_line is not None:
            # a bare exception (no fingerprint of its own) at most BLOCK_LINES below a line that
            # named a specific cause in the same file: that cause's traceback ending (fairseq's
            # "Minimum loss scale reached" garbled into a frame, then "FloatingPointError: ...")
            role = Role.COLLATERAL
        if ev.data.get("observed") and role is Role.CAUSE and "rank" not in ev.data:
            rank = None  # the speaker reports a failure elsewhere (a remote peer): not its own
        if entry.rank_scope == "job":
            rank = None  # e.g. the overflow flag is all-reduced: no rank can be named
        if len(self.findings) >= MAX_FINDINGS:
            self.dropped["findings"] += 1
            return
        data = dict(ev.data)
        if ev.local_rank is not None:
            data["local_rank"] = ev.local_rank
        if rank is not None:
            data["rank_from"] = ev.data.get("rank_how", "message") if "rank" in ev.data else ev.rank_from
            if data["rank_from"] == "odd_one_out":
                data["inferred"] = True
        if speaker is not None and speaker != rank:
            data["speaker"] = speaker  # it names another rank (the one behind): the speaker's exit is explained too
        finding = Finding(
            failure=failure,
            role=role,
            priority=entry.priority,
            rank=rank,
            step=step,
            time=ev.time,
            order=order,
            evidence=[ev.source],
            severity=entry.severity,
            data=data,
        )
        self.findings.append(finding)
        if ev.data.get("job_scope") and role is Role.CAUSE:
            self._job_detail(finding)
        bare = self._bare_exc.pop(ev.source.path, None)
        if (bare is not None and failure != "rank_exception" and bare[2] == speaker
                and not (role is Role.COLLATERAL and _DYING.match(ev.source.text))
                and 0 < ev.source.line - bare[0] <= MESSAGE_LINES and bare[1] < len(self.findings)):
            # the rest of that exception's message: the exception is this line's failure (a line
            # that is itself a consequence, "terminate called without an active exception" as the
            # process dies of it, is not: the exception stays the cause)
            exc = self.findings[bare[1]]
            exc.role = Role.COLLATERAL
            exc.data["explained_by"] = failure
        elif failure == "rank_exception" and role is Role.CAUSE and not explained and (
                ev.source.path in self._bare_exc or len(self._bare_exc) < MAX_PROCS):
            self._bare_exc[ev.source.path] = (ev.source.line, len(self.findings) - 1, speaker)
        if explained and cause_line is not None:
            data["explained_by"] = cause_line[1]
        elif failure != "rank_exception" and role is Role.CAUSE and (
                ev.source.path in self._cause_lines or len(self._cause_lines) < MAX_PROCS):
            self._cause_lines[ev.source.path] = (ev.source.line, failure)
        if rank is None and ev.local_rank is None and role is Role.CAUSE and not ev.data.get("job_scope"):
            pend = self._unranked.setdefault(ev.source.path, [])
            if not _TERMINATE.match(ev.source.text) and not data.get("frames"):
                # (C++'s std::terminate report, "  what():  ...", is a process's last words: no
                # Python traceback of that process can follow it; nor does one that ended a whole
                # traceback of its own: the tagged one below is another process's report)
                pend.append((ev.source.line, finding))
            del pend[:-4]
            proc = data.get("nccl_proc")
            if proc is not None and (proc in self._proc_unranked or len(self._proc_unranked) < MAX_PROCS):
                by_proc = self._proc_unranked.setdefault(proc, [])
                by_proc.append(len(self.findings) - 1)  # an index: a checkpoint keeps no shared objects
                del by_proc[:-4]

    def _presence(self, ev: Event, order: int) -> None:
        """A line naming ranks that reached a sync point (catalog ``presence``)."""
        d = ev.data
        key = str(d.get("key", ""))
        if d["presence"] == "released":
            if key:
                self.sync_points.pop(key, None)
            else:
                self.sync_points.clear()
            self.missing_lists.clear()  # a later stall's lists start over
            return
        ranks = {int(r) for r in str(d.get("ranks", "")).replace(",", " ").split() if r.isdigit() and len(r) < 7}
        if not ranks and "ranks" not in d and ev.rank is not None:
            ranks = {ev.rank}  # the report names no ranks: the speaker says it reached the point itself
        if not ranks:
            return
        keys = [key]
        report = 0
        if d["presence"] == "missing":
            # a stall inspector's list: entries on consecutive lines (a wrapped one leaves a gap of
            # one) are one report; a warning and a header between them start the next report
            at = self.missing_at
            last = at.get(ev.source.path)
            if last is None or not 0 < ev.source.line - last <= 2:
                self.missing_reports += 1
            at[ev.source.path] = ev.source.line
            report = self.missing_reports
            if report <= MAX_STALL_REPORTS:
                listed = self.missing_lists.setdefault(report, set())
                if len(listed) < self.max_ranks:
                    listed |= ranks
        if d["presence"] == "missing" and d.get("more"):
            # a rank listed with several tensors is missing from each of them
            keys += [k.strip() for k in str(d["more"]).split(",") if k.strip()][:MAX_LISTED_KEYS]
        for k in keys:
            self._sync_point(k, ranks, ev, order, report)

    def _sync_point(self, key: str, ranks: set[int], ev: Event, order: int, report: int = 0) -> None:
        d = ev.data
        sp = self.sync_points.get(key)
        if sp is None:
            if len(self.sync_points) >= MAX_PROCS:
                self.dropped["sync_points"] += 1
                return
            sp = self.sync_points[key] = SyncPoint(set(), ev.source, order, order, first_time=ev.time, report=report)
        if d["presence"] == "missing":
            absent = getattr(sp, "absent", None)  # a SyncPoint restored from an older checkpoint lacks it
            if absent is None:
                sp.absent = absent = set()
            if len(absent) < self.max_ranks:
                absent |= ranks
        elif len(sp.ranks) < self.max_ranks:
            sp.ranks |= ranks
        sp.last_order = order
        if ev.time is not None:
            sp.first_time = ev.time if sp.first_time is None else min(sp.first_time, ev.time)
            sp.last_time = ev.time if sp.last_time is None else max(sp.last_time, ev.time)
        if d.get("world_size"):
            sp.world = _int(d["world_size"])
            joined = _int(d.get("joined"))
            # more workers joined than the world has: another job shares the store, not a hang
            sp.foreign = sp.foreign or (joined is not None and sp.world is not None and joined > sp.world)
        if d.get("timeout"):
            sp.timeout = _hms(str(d["timeout"]))
        waited = _float(d.get("waited"))
        sp.stalled = sp.stalled or d["presence"] in ("stalled", "missing") or (
            waited is not None and sp.timeout is not None and waited >= sp.timeout)

    def _interval_skips(self, st: RankState, rec: SampleRec, prev_step: int | None, scale: float | None) -> None:
        """A per-interval skip count (Megatron's ``number of skipped iterations``, reset at each
        log line). Every iteration since the last logged one skipped, line after line, at a loss
        scale that does not move: a dynamic scaler would have lowered it, so the scale is static
        (or stuck) and every step overflows: nothing trains. Kept as ``static_skips``."""
        n = int(rec.data["skipped_iters"])
        st.skipped_total += n
        step = rec.step
        if step is not None and prev_step is not None and step > prev_step:
            sk, its, lines, first, last_scale = st.interval_skips
            if last_scale is not None and scale is not None and scale < last_scale:
                st.interval_skips = (0, 0, 0, None, scale)  # the scale came down: still searching
            else:
                st.interval_skips = (sk + n, its + step - prev_step, lines + (n > 0),
                                     first if first is not None or n == 0 else rec, scale)
        every = n >= 1 and step is not None and prev_step is not None and 0 < step - prev_step <= n
        run = st.skip_run
        if not every:
            st.skip_run = None
            return
        if run is not None and run[0] == scale:
            st.skip_run = (scale, run[1] + 1, run[2])
        else:
            st.skip_run = (scale, 1, rec)
        if st.skip_run[1] >= STATIC_SKIP_LINES and scale is not None and self.static_skips is None:
            self.static_skips = (st.skip_run[2], rec)

    def _sample(self, st: RankState, ev: Event, order: int, moves: bool = True) -> None:
        """Fold one metric sample; ``moves=False`` (a late arrival) keeps the rank's position.

        Called for every metric line of a job (millions at 1 GB): each value is read from the
        dict once, and the checks for anomalies exit on the ordinary finite sample."""
        d = ev.data
        if ev.rank_from is not None:
            d["rank_from"] = ev.rank_from
        step = ev.step
        if step is None and "progress" in d and st.samples and _redraw(st.samples[-1], d):
            # a progress bar redrawn with the postfix it already showed (Lightning refreshes the bar
            # between postfix updates): the same reading again, not a flat series
            return
        rec = SampleRec(step, order, ev.time, ev.source, d)
        self.symptoms.add(st.key, rec)
        batches = d.get("epoch_batches")
        if (isinstance(batches, float) and isinstance(lo := d.get("loss"), float) and isfinite(lo) and "epoch" in d
                and (len(self.epoch_batches) < MAX_EPOCHS_KEPT or int(d["epoch"]) in self.epoch_batches)):
            self.epoch_batches[int(d["epoch"])] = (batches, lo)
        if d.get("perf") == "hf_train":
            self.trained_to_end = True  # the HF Trainer's end-of-training summary (train_runtime ...)
        st.n_samples += 1
        prev_step = st.last_step
        if step is not None and moves:
            st.last_step = step
            st.last_step_order = order
            st.last_step_time = ev.time
            st.last_step_at = (ev.source.path, int(d.get("generation", 0) or 0), ev.source.line)
        get = d.get
        loss: Any = get("loss")
        grad: Any = get("grad_norm")
        scale: Any = get("loss_scale")
        last = st.last
        if loss is not None:
            last["loss"] = loss
            if not isfinite(loss):
                st.nonfinite["loss"] += 1
        if grad is not None:
            last["grad_norm"] = grad
            if not isfinite(grad):
                st.nonfinite["grad_norm"] += 1
        scale_ok = False
        if scale is not None:
            last["loss_scale"] = scale
            scale_ok = isfinite(scale)
            if not scale_ok:
                st.nonfinite["loss_scale"] += 1
        if scale_ok:
            if st.scale_last is not None and scale < st.scale_last and _halvings(st.scale_last, scale):
                st.skipped_total += 1
                self.scale_moves.append(ScaleMove(step, order, ev.time, ev.source, st.scale_last, scale, logged=True))
            elif (self.scale_moves and not self.scale_moves[-1].logged and self.scale_moves[-1].to_scale is not None
                  and scale > self.scale_moves[-1].to_scale):
                # a metric line logging a scale above the last back-off's new one: the scaler grew back
                # since, so the next back-off to that scale is a new overflow, not a copy of the last
                # (DeepSpeed's "reducing to 32768" every few steps, "loss scale 65536.0" between them)
                self.scale_regrown = scale
            st.scale_last = scale
        if "skipped_iters" in d:
            self._interval_skips(st, rec, prev_step, scale if scale_ok else None)
        if "skipped" in d:
            st.skipped_total = max(st.skipped_total, int(d["skipped"]))
            if len(self.skip_samples) < 2:
                self.skip_samples.append(rec)
            else:
                self.skip_samples[-1] = rec  # first and latest are all the skip-rate check needs
        grad_bad = isinstance(grad, float) and not isfinite(grad)  # nonfinite(grad)
        bad_loss = (isinstance(loss, float) and not isfinite(loss)) or bool(get("loss_missing"))
        if "nan_iters" in d and d["nan_iters"] > 0:
            bad_loss = True
        if loss == 0.0 and grad_bad:
            bad_loss = True  # HF: weights already NaN, the logged loss collapses to 0.0
        if bad_loss:
            if st.spike is None and st.first_bad_loss is None and st.first_bad_global is None:
                _jump_before_nan(st, rec)
            if get("scope") == "local" and not get("loss_missing"):
                if st.first_bad_loss is None:
                    st.first_bad_loss = rec
            elif st.first_bad_global is None:
                st.first_bad_global = rec
        if scale_ok:
            if scale > 1:
                st.dynamic_scale = True
            if st.scale_min is None or scale < st.scale_min:
                st.scale_min, st.scale_min_rec = scale, rec
        if self.first_sample_order is None and not _setup_only(d):
            self.first_sample_order = order
        if self.first_step_order is None and step is not None:
            self.first_step_order = order
            self.first_step_value = step
        epoch = get("epoch")
        if isinstance(epoch, float) and isfinite(epoch) and epoch > self.max_epoch:
            self.max_epoch = epoch
        if grad_bad and not st.grad_bad_now:
            st.grad_episodes += 1
        if grad is not None:
            st.grad_bad_now = grad_bad
        if grad_bad and get("reduced"):
            # the line says its norm is the all-reduced one ("global grad_norm=inf"): every rank's
            # view at once, not this rank's gradients
            if st.first_bad_global is None:
                st.first_bad_global = rec
        elif grad_bad and st.first_bad_grad is None:
            st.first_bad_grad = rec
        elif (st.first_bad_grad is not None and st.grad_recovered is None and grad is not None
              and isfinite(grad) and not bad_loss):
            st.grad_recovered = rec  # the non-finite step was skipped: the model is fine
        self._baselines(st, rec)
        ev_loss = get("eval_loss")
        if ev_loss is not None:
            if (isinstance(ev_loss, float) and isnan(ev_loss) and st.first_bad_global is None and st.first_bad_loss is None
                    and get("eval_count") != 0):
                # (a mean over an empty held-out shard, "val_n: 0", is NaN by definition: no failure)
                # the model gives NaN on held-out data: its weights (or its fp16 forward) went
                # non-finite, whatever the training loss line shows (HF's NaN filter hides it)
                st.first_bad_global = rec
            self._eval_jump(st, rec, ev_loss)
        st.samples.append(rec)

    def _job_detail(self, detail: Finding) -> None:
        """A job-wide detail line (NCCL's "Last error: Duplicate GPU detected : rank 0 and rank 1 ...")
        at most ``BLOCK_LINES`` + 1 lines below the same failure's report by one rank (its tagged
        ``DistBackendError: ... invalid usage``): the detail says what the error was, and it is the
        job's configuration, not that rank's own failure."""
        src = detail.evidence[0]
        for prev in itertools.islice(reversed(self.findings), 1, 6):
            p = prev.evidence[0] if prev.evidence else None
            proc = detail.data.get("nccl_proc")
            if proc is not None and proc == prev.data.get("nccl_proc"):
                continue  # the same process's own return-code chain below its WARN: no job-wide detail
            if (p is not None and p.path == src.path and 0 < src.line - p.line <= BLOCK_LINES + 1
                    and prev.failure == detail.failure and prev.role is Role.CAUSE and prev.rank is not None
                    and prev.data.get("rank_from") != "message"):
                # (a line that NAMES the failed rank, "task:1 ... has likely restarted", stays its:
                # only a rank that merely printed the report is the job's speaker)
                prev.data["reported_by"] = prev.rank
                prev.data.pop("rank_from", None)
                prev.data.pop("local_rank", None)
                prev.data["job_scope"] = True
                prev.rank = None

    @staticmethod
    def _eval_jump(st: RankState, rec: SampleRec, v: Any) -> None:
        """An evaluation loss at least ``EVAL_JUMP`` times its best so far while the training
        loss did not fall since that best (or is not logged): the model got worse on data it
        is not fitted to and on the data it is, a divergence. A rising evaluation loss under a
        falling training loss is over-fitting, which is not an incident."""
        if not isinstance(v, float) or not isfinite(v):
            return
        if _EVAL_BATCH.search(rec.source.text):
            return  # one batch of an evaluation pass ("eval batch 2 mse 15.2"), not a whole evaluation
        series = "ppl" if rec.data.get("eval_from_ppl") else "loss"
        train = _train_level(st, rec)
        epoch = rec.data.get("epoch")
        if isinstance(epoch, float) and isfinite(epoch):
            if st.eval_epoch is not None and epoch < st.eval_epoch:
                # the epoch counter went back (fastai's table printed again by a second fit call,
                # a new run pasted below the last): its evaluations start over
                st.eval_bests = ()
            st.eval_epoch = epoch
        got = next((b for b in st.eval_bests if b[0] == series), None)
        if got is None or v < got[1]:
            st.eval_bests = (*(b for b in st.eval_bests if b[0] != series), (series, v, train))
            return
        _, best, before = got
        if (st.spike is not None or st.first_bad_loss is not None or st.first_bad_global is not None
                or best <= 0 or v < EVAL_JUMP * best):
            return
        if series == "loss" and v - best < EVAL_MIN_RISE:
            # a held-out loss of 0.13 drifting to 0.24 between epochs of a small run is noise, not a
            # divergence: judged, like the training loss, on an absolute rise as well
            return
        if train is not None and before is not None and train < before:
            return  # training still improving: over-fitting
        st.spike = rec
        rec.data.setdefault("baseline_median", best)

    def _summed_over_batches(self, rec: SampleRec) -> bool:
        """The record's loss is, within 30 %, the per-batch loss times the batch count that some
        rank's per-batch lines logged for the same epoch (or the last one before it that did) (``Epoch: 76  Batch: 4000/24000 ...
        Loss: 0.0065`` makes 156: ``Epoch: 76  Time: 6868.6  Loss: 157.4`` is that sum)."""
        # (that epoch's, else the last epoch's before it that logged its batches: the count holds)
        epoch = int(rec.data["epoch"])
        near = max((k for k in self.epoch_batches if k <= epoch), default=None)
        got = self.epoch_batches.get(near) if near is not None else None
        loss = rec.data.get("loss")
        if got is None or not isinstance(loss, float) or not isfinite(loss):
            return False
        batches, per_batch = got
        expected = batches * per_batch
        return expected > 0 and 0.7 <= loss / expected <= 1.3

    def _baselines(self, st: RankState, rec: SampleRec) -> None:
        """Loss spikes and grad-norm explosions against a robust baseline of earlier samples.

        With 20+ samples the baseline is the median and MAD of the last ``WINDOW`` samples,
        refreshed every ``BASELINE_EVERY`` samples (one comparison per sample). Short series
        (a pasted excerpt, a few logging windows) use the median of what came before, with
        stricter ratios the fewer samples there are: 3+ samples and 3x (loss) / 10x (grad
        norm), or a single earlier sample and 20x / 1000x.
        """
        if st.first_bad_loss is not None or st.first_bad_global is not None:
            return
        if (rec.step is None and "epoch" in rec.data and "epoch_iter" not in rec.data
                and (any("epoch_iter" in p.data for p in itertools.islice(reversed(st.samples), SUMMARY_LOOKBACK))
                     or self._summed_over_batches(rec))):
            # an epoch's summary line among the epoch's per-batch lines ("Epoch: 45  Time: 1570.85
            # Loss: 12.8469" below "Epoch: 45  Batch: 1800/2000 ... Loss: 0.0064"): another
            # quantity (often the sum over the epoch's batches), not one more batch to judge; so is
            # a rank's summary whose loss is the sum of the batch losses another rank logged for that
            # epoch (its per-batch loss times the epoch's batches)
            return
        if st.n_samples % BASELINE_EVERY == 0 or not st.baseline or st.n_samples <= 24:
            st.baseline = {}
            for metric in ("loss", "grad_norm"):
                base = _median_mad(st.samples, metric)
                if base is not None:
                    st.baseline[metric] = base
        get = rec.data.get
        g = get("grad_norm")
        skipped = get("skipped_iters")
        if isinstance(skipped, float) and skipped > 0:
            # the line's interval skipped steps on overflow (Megatron's "number of skipped
            # iterations: 10"): its gradient norm may be an overflowed step's, still scaled; the
            # loss-scale rules judge those overflows, the norm is no explosion by itself
            g = None
        if st.explosion is None and isinstance(g, float) and isfinite(g) and g >= ABSURD_GRAD_NORM:
            st.explosion = rec  # no training has a gradient norm of a million: no baseline needed
            return
        clip = get("clip_threshold")
        if (st.explosion is None and isinstance(clip, float) and clip > 0 and isinstance(g, float) and isfinite(g)
                and g >= 10 * clip):
            # a clipping report: ten times the threshold the run clips to (icefall sets it at twice
            # the median norm) is an explosion by the run's own measure, no baseline needed
            st.explosion = rec
            rec.data.setdefault("baseline_median", clip)
            return
        v_loss = get("loss")
        if (st.spike is None and isinstance(v_loss, float) and isfinite(v_loss) and abs(v_loss) >= ABSURD_LOSS
                and not get("unkeyed")):
            st.spike = rec  # a loss of a trillion or more: diverged, no baseline needed
            return
        low, before = get("batches_low"), get("mean_before")
        if (st.spike is None and isinstance(low, float) and isinstance(before, float) and before > 0
                and low >= RUNNING_MEAN_JUMP * before):
            # the batches since the last row of a running epoch mean averaged 50 times that mean
            st.spike = rec
            rec.data.setdefault("baseline_median", before)
            return
        ppl = get("ppl")
        if isinstance(ppl, float) and not isfinite(ppl) and isinstance(v_loss, float) and isfinite(v_loss):
            # exp(loss) overflowed its float type (fp16's past a loss of 11.1): the perplexity the loss
            # beside it stands for is what is judged (a loss of 2837 is still far past any vocabulary)
            ppl = math.exp(min(v_loss, 700.0))
        if st.spike is None and isinstance(ppl, float) and ppl >= ABSURD_PPL:
            st.spike = rec  # worse than chance over any vocabulary: no baseline needed
            return
        if isinstance(ppl, float):
            if ppl >= SUSTAINED_PPL and (rec.step is None or rec.step > EARLY_STEPS):
                if st.ppl_high_from is None:
                    st.ppl_high_from, st.ppl_high_n = rec, 0
                st.ppl_high_n += 1
                if st.spike is None and st.ppl_high_n >= SUSTAINED_PPL_N:
                    st.spike = st.ppl_high_from  # held worse than chance: diverged and stayed there
                    return
            else:
                st.ppl_high_from, st.ppl_high_n = None, 0
        if st.spike is None and isinstance(ppl, float) and isfinite(ppl) and self._ppl_spike(st, rec, ppl):
            st.spike = rec
            return
        best = get("best_loss")
        if best is not None:
            v0 = get("loss")
            if (st.spike is None and isinstance(best, float) and isinstance(v0, float) and isfinite(v0)
                    and isfinite(best) and best > 0 and v0 >= 100 * best):
                # the line names the run's best loss: a hundred times it is a blow-up, no history needed
                st.spike = rec
                rec.data.setdefault("baseline_median", best)
        if not st.baseline:
            return  # no metric has a baseline yet: nothing below can be judged
        unkeyed = bool(get("unkeyed"))  # bare number columns: only a gross change counts
        for metric, ratio, big, attr in (("loss", UNKEYED_RATIO if unkeyed else 3.0, UNKEYED_RATIO if unkeyed else 5.0, "spike"),
                                         ("grad_norm", 10.0, 1000.0, "explosion")):
            base = st.baseline.get(metric)
            v = get(metric) if metric == "loss" else g
            if base is None or v is None or not math.isfinite(v) or getattr(st, attr) is not None:
                continue
            med, mad, n = base
            # judged on the rise over the median relative to its size, so a negative loss (an
            # NLL at -4.3 jumping to +4191) is judged like a positive one
            size = abs(med)
            rise = v - med
            if size == 0 or (metric == "grad_norm" and med < 0):
                continue
            if metric == "loss" and abs(rise) >= ABSURD_LOSS_JUMP * max(size, 1.0):
                # a million times its level in one step, up or down (a loss of 8.3 then
                # -2e17): no noise or schedule does that, whatever the history
                setattr(st, attr, rec)
                rec.data.setdefault("baseline_median", med)
                continue
            # the first steps of a run: a raw per-batch loss (Lightning's bar, a CSV log) swings
            # several-fold while the model is random, so a handful of samples is judged as strictly
            # as one or two (a rise of at least 1.0 and 5x; gradient norms keep their own rule)
            # (steps, not samples: a progress bar redraws each step, often with another value)
            # (a bar's postfix has no step: judged the same way while the series is that short)
            short = n < 3 or (metric == "loss" and (rec.step is None or 0 <= rec.step <= EARLY_STEPS)
                              and n < 2 * EARLY_STEPS and len({s.step for s in st.samples}) < 5)
            if rise < (1.0 if short else 0.25) * (1.0 if metric == "loss" else med):
                # too small a rise in absolute terms, unless the series was flat until now, or climbs,
                # or is back at its start, or sits on a new level: tests of a run of values against
                # the series' own, where the floor (meant for one value's ratio: a small loss
                # wobbles by ratios) has no part (a detector's 0.02 at 0.05 for five epochs)
                if metric == "loss" and not unkeyed and (self._plateau_break(st, v) or self._climbing(st, rec, v)
                                                         or self._returned(st, rec, v) or self._level_shift(st, rec, v)):
                    setattr(st, attr, rec)
                    rec.data.setdefault("baseline_median", med)
                continue
            if metric == "loss" and size < 3 * mad and _reached_zero(st):
                # a loss hovering around zero (an NLL of -0.5..0.3): its median is no level to
                # measure ratios from; only a break far out of its own spread counts
                hit = rise > ZERO_HOVER_MADS * mad
            elif n >= 20:
                hit = rise > (ratio - 1) * size and rise > 8 * max(mad, 1e-12)
            elif not short:
                hit = rise > (ratio - 1) * size
            else:
                hit = rise > (big - 1) * size
                if not hit and metric == "loss" and not unkeyed and size >= 1 and rise > (ratio - 1) * size:
                    # the run's first losses all level (a random model at chance, ln of its
                    # vocabulary), then three times that: the logits blew up, not a random batch
                    hit = _level_start(st, rec, med)
            if not hit and metric == "loss" and n >= 5 and not unkeyed:
                hit = (self._diverged(st, v) or self._plateau_break(st, v) or self._level_shift(st, rec, v)
                       or self._climbing(st, rec, v) or self._drifting(st, v) or self._returned(st, rec, v))
            elif not hit and metric == "loss" and n >= 3 and not unkeyed:
                # a short excerpt (a few epoch lines): only a walk back far past its best counts
                hit = self._diverged(st, v)
            if not hit and metric == "grad_norm":
                hit = v >= ABSURD_GRAD_NORM or self._growing(st, v)
                if not hit and self._climbing_norm(st, v):
                    hit = True
                    rec.data["norm_climb"] = True  # (no model leaving a plateau climbs this far this steadily)
            if hit and metric == "grad_norm" and v < NORM_EXPLOSION_FLOOR:
                # a norm still under one after its rise is no explosion, whatever it rose from: a
                # bimodal series (GRPO's batches with no advantage log a norm of 1e-5 beside 0.2)
                hit = False
            if hit:
                setattr(st, attr, rec)
                rec.data.setdefault("baseline_median", med)

    @staticmethod
    def _ppl_spike(st: RankState, rec: SampleRec, ppl: float) -> bool:
        """A perplexity at least ``PPL_JUMP`` times the median of the earlier ones (3+ of them,
        past the first ``EARLY_STEPS`` steps; with 20+ also 8 MADs above it). A perplexity is
        e^loss: the loss rules judge its log, where a window average tripling its effective
        number of choices (7.5 → 45, ln 2.0 → 3.8) is not even a doubled loss. Judged on the
        perplexity, that rise is as plain as a tripled loss."""
        if rec.step is not None and 0 <= rec.step <= EARLY_STEPS:
            return False
        loss = rec.data.get("loss")
        if isinstance(loss, float) and isfinite(loss) and not _is_log_of(loss, ppl):
            # a "perplexity" that is not e^loss (nor 2^loss) beside it measures something else:
            # a VQ codebook's usage grows as training goes well
            return False
        low = finite_min(st.samples, "ppl")  # the sorted copy's first value: most samples end here
        if low is None or ppl < PPL_JUMP * low:
            return False
        base = _median_mad(st.samples, "ppl")
        if base is None:
            return False
        med, mad, n = base
        if n < 3 or med <= 0 or ppl < PPL_JUMP * med:
            return False
        if n >= 20 and ppl - med <= 8 * max(mad, 1e-12):
            return False
        rec.data.setdefault("baseline_median", med)
        return True

    @staticmethod
    def _growing(st: RankState, v: float) -> bool:
        """A gradient norm growing geometrically: each of the last 5 values at least 1.2x the
        one before, 5x over the run (an explosion in progress, before any value is absurd)."""
        prev = _last_finite(st.samples, "grad_norm")
        if prev is None:
            return False
        seq = [*prev, v]
        if seq[0] <= 0:
            return False
        return all(b >= 1.2 * a for a, b in itertools.pairwise(seq)) and seq[-1] >= 5 * seq[0]

    @staticmethod
    def _climbing_norm(st: RankState, v: float) -> bool:
        """A gradient norm that climbed steadily over the window: 12+ values logged after its
        first ones, most moves upward (``NORM_CLIMB_UP`` of them), no single move more than half the
        climb (not one jump: the ratio rule judges those), this value and the 4 before it all at
        least ``NORM_CLIMB_LEVEL`` times the median of the first 3, this one ``NORM_CLIMB_FACTOR``
        times it. Growth by a tenth per logged step is no geometric burst (``_growing``) and stays
        under ten times the running median at every step, yet 30x over the run is no norm a healthy
        run settles at (weights drifting off: a flipped regulariser, a learning rate too high)."""
        prev = [x for r in st.samples if (x := r.data.get("grad_norm")) is not None and math.isfinite(x)]
        if len(prev) < 14:
            return False
        seq = [*prev, v]
        start = sorted(seq[:3])[1]
        if start <= 0 or v < NORM_CLIMB_FACTOR * start or min(seq[-5:]) < NORM_CLIMB_LEVEL * start:
            return False
        moves = [b - a for a, b in itertools.pairwise(seq)]
        if sum(m > 0 for m in moves) < NORM_CLIMB_UP * len(moves):
            return False
        return max(moves) <= 0.5 * (v - start)

    @staticmethod
    def _plateau_break(st: RankState, v: float) -> bool:
        """A loss that sat on a plateau (the last 5 values within 2 % of each other: epoch
        averages, long smoothing windows) and then rose by a quarter of its level and by at
        least 20 times the plateau's own spread: a jump no noise of that series explains."""
        last = st.samples[-1].data.get("loss") if st.samples else None
        if last is None or not v > last:
            # a break needs v above the plateau's top (v - level >= 0.25 |level| > spread);
            # the last value is on the plateau: most samples end here, without reading 5
            return False
        prev = _last_finite(st.samples, "loss")
        if prev is None:
            return False
        level = sorted(prev)[2]
        spread = max(prev) - min(prev)
        if level == 0 or spread > 0.02 * abs(level):
            return False
        return v - level >= 0.25 * abs(level) and v - level >= 20 * spread

    @staticmethod
    def _level_shift(st: RankState, rec: SampleRec, v: float) -> bool:
        """A loss that moved to a new, higher level and stayed there: this value and the 4
        before it all above every earlier value of the window and at least twice its median
        (5+ earlier values), the steps still counting up (a restarted run starts high again).
        Catches a rise that happened between two logged stretches (a paste of two chunks, a
        sparse log), where no single step jumps."""
        if len(st.samples) < 9:
            return False
        top = finite_top(st.samples, "loss", 5)
        if top is not None and v <= top:
            # five earlier values at or above this one: one of them is before the last four, so this
            # value is above no new level (most samples end here, from the window's sorted copy)
            return False
        recent = [r for r in itertools.islice(reversed(st.samples), 4)]
        lows = [x for r in recent if (x := r.data.get("loss")) is not None and isfinite(x)]
        if len(lows) < 4:
            return False
        lo = min(*lows, v)
        before = [(r.step, x) for r in itertools.islice(st.samples, 0, len(st.samples) - 4)
                  if (x := r.data.get("loss")) is not None and isfinite(x)]
        if len(before) < 5:
            return False
        values = sorted(x for _, x in before)
        med = values[len(values) // 2]
        if not (med > 0 and lo >= 2 * med and lo > values[-1]):
            return False
        steps = [s for s, _ in before if s is not None]
        later = [s for s in (*(r.step for r in recent), rec.step) if s is not None]
        return not steps or not later or min(later) > max(steps)

    @staticmethod
    def _climbing(st: RankState, rec: SampleRec, v: float) -> bool:
        """A steady climb: this value and the 5 before it each above the one before, by steps
        of like size (the smallest at least a quarter of the largest), 10 % over the six, past
        the first ``EARLY_STEPS``. Noise does not climb six times in
        a row by even steps (1 in 720 for the order alone); a run drifting away (a learning rate
        too high for its curvature, epoch averages creeping up) does, long before any single
        value jumps."""
        got = _recent_losses(st)
        if len(got) < 5:
            return False
        seq = [*(r.data["loss"] for r in reversed(got)), v]
        ups = [b - a for a, b in itertools.pairwise(seq)]
        if min(ups) <= 0 or seq[0] <= 0 or v < CLIMB_RISE * seq[0] or min(ups) < 0.25 * max(ups):
            return False
        known = [s for s in (rec.step, *(r.step for r in got)) if s is not None]
        # the first steps of a run fall or swing as they please; a step counter that goes back
        # (a restart, an epoch's own bar) is no reason to doubt a climb by even steps
        return not known or min(known) > EARLY_STEPS
        return True

    @staticmethod
    def _drifting(st: RankState, v: float) -> bool:
        """A loss that had come down to a small fraction of where the window starts and has since
        drifted back up, gradually: this value and the 4 before it all at least
        ``DRIFT_FACTOR`` times the window's best, the best at most a fifth of the window's first
        values (the run had learned), 12+ values since the best with most moves upward, and no
        single move more than half the climb (not one jump: the spike rules judge those). A small
        loss walking back up this way is a model unlearning (a learning rate too high for where it
        now is) long before any value is large in absolute terms (``_diverged`` needs +1.0)."""
        prev = [x for r in st.samples if (x := r.data.get("loss")) is not None and math.isfinite(x)]
        if len(prev) < 20:
            return False
        seq = [*prev, v]
        i = min(range(len(seq)), key=seq.__getitem__)
        best = seq[i]
        after = seq[i:]
        if best <= 0 or len(after) < 12 or min(seq[-5:]) < DRIFT_FACTOR * best:
            return False
        if best > 0.2 * sorted(seq[:5])[2]:
            return False
        moves = [b - a for a, b in itertools.pairwise(after)]
        if sum(m > 0 for m in moves) < 0.6 * len(moves):
            return False
        return max(moves) <= 0.5 * (sorted(seq[-5:])[2] - best)

    @staticmethod
    def _returned(st: RankState, rec: SampleRec, v: float) -> bool:
        """A loss that had learned and went back to where it started, and stays there: the window's
        best at most a third of its first level (the median of its first 3 values), then this value
        and the 5 before it all at least ``RETURN_LEVEL`` times that first level, 3x the best and 1.0
        above it, every one logged after the best with the step counter still counting up (a run
        restarted from scratch counts again from its first step). A model that unlearned all it had
        learned (a learning rate raised far too high puts a classifier back at chance) climbs there
        over a few noisy lines: no single value jumps, and the recent level rises with it, so the
        spike rules and ``_diverged`` (twice the recent level) do not see it."""
        if v < 1.0 or len(st.samples) < 10:
            return False  # (1.0 above a positive best; most samples end here, or on the first level below)
        first: list[float] = []
        for r in itertools.islice(st.samples, 12):  # the window's first values: a few reads
            x = r.data.get("loss")
            if x is not None and isfinite(x):
                first.append(x)
                if len(first) == 3:
                    break
        if len(first) < 3 or v < RETURN_LEVEL * sorted(first)[1]:
            return False
        best = finite_min(st.samples, "loss")  # the window's sorted copy
        if best is None or best <= 0 or v < 3 * best or v - best < 1.0:
            return False
        last = [r.data["loss"] for r in _recent_losses(st)]
        low = min(*last, v) if len(last) == 5 else -math.inf
        if low < 3 * best or low - best < 1.0:
            return False
        start = sorted(first)[1]
        if best > start / 3 or low < RETURN_LEVEL * start:
            return False
        vals = [(r.step, x) for r in st.samples if (x := r.data.get("loss")) is not None and isfinite(x)]
        if len(vals) < 10:
            return False
        at = max(i for i, (_, x) in enumerate(vals) if x == best)
        steps = [s for s, _ in vals[at:]] + [rec.step]
        known = [s for s in steps if s is not None]
        return len(known) == len(steps) and all(a < b for a, b in itertools.pairwise(known))

    @staticmethod
    def _diverged(st: RankState, v: float) -> bool:
        """Divergence after convergence: the loss back at 3x its best value so far, twice the
        recent median and at least 1.0 above the best (a model walking back toward its
        initial, near-random loss), judged on the last ``WINDOW`` samples."""
        best = finite_min(st.samples, "loss")  # min(prev), from the window's sorted copy
        if best is None or not (best > 0 and v >= 3 * best and v - best >= 1.0):
            return False  # the last condition below fails whatever the rest says
        prev = [x for r in st.samples if (x := r.data.get("loss")) is not None and math.isfinite(x)]
        if len(prev) < 3:
            return False
        best = min(prev)
        if _swung_back(prev, best, v):
            return False
        recent = sorted(prev[-5:])[len(prev[-5:]) // 2]
        tail = [x for x in prev[-20:] if x > 0]
        steps = sorted(abs(math.log(b / a)) for a, b in itertools.pairwise(tail))
        if steps and steps[len(steps) // 2] > 0.6:
            return False  # per-batch losses jumping 2x from one log line to the next: noise, not a trend
        return best > 0 and v >= 3 * best and v >= 2 * recent and v - best >= 1.0


def _swung_back(prev: list[float], best: float, v: float) -> bool:
    """A noisy per-batch loss (batch size 1, short sequences): once the series had come down near
    its best (within 2x), it already rose to 3/4 of ``v`` and fell back to half that within the
    window. A value like ``v`` is then the series' own noise, not a walk back to the initial loss
    (the high values of the initial descent come before the series first reaches 2x its best)."""
    start = next((i for i, x in enumerate(prev) if x <= 2 * best), len(prev))
    low_after = math.inf
    for x in reversed(prev[start:]):
        if x >= 0.75 * v and low_after <= x / 2:
            return True
        low_after = min(low_after, x)
    return False


def _is_log_of(loss: float, ppl: float) -> bool:
    """``loss`` is the natural or base-2 log of ``ppl`` (to 5 % of its size, at least 0.05)."""
    if ppl <= 0:
        return False
    tol = 0.05 * max(abs(loss), 1.0)
    return abs(loss - math.log(ppl)) <= tol or abs(loss - math.log2(ppl)) <= tol


def _train_level(st: RankState, rec: SampleRec) -> float | None:
    """The training loss where an evaluation finds it: the median of the last (up to) 5 finite
    training losses of the rank, this line's own included (Keras prints both on one line), so
    one noisy batch does not decide whether the training loss fell. None when none is logged."""
    vals: list[float] = []
    own = rec.data.get("loss")
    if isinstance(own, float) and isfinite(own):
        vals.append(own)
    later = rec.data.get("epoch")
    for r in reversed(st.samples):
        if len(vals) >= 5:
            break
        epoch = r.data.get("epoch")
        if isinstance(epoch, float) and isinstance(later, float) and epoch > later:
            break  # the epoch counter went back after it: that loss is an earlier run's
        if isinstance(epoch, float):
            later = epoch
        x = r.data.get("loss")
        if isinstance(x, float) and isfinite(x):
            vals.append(x)
    if not vals:
        return None
    vals.sort()
    return vals[len(vals) // 2]


def _last_finite(samples: deque[SampleRec], metric: str) -> list[Any] | None:
    """The values of ``metric`` in the last 5 samples, oldest first, when all 5 have a finite
    one (else None). Called on most samples: reads 5 items, never copies the window."""
    if len(samples) < 5:
        return None
    out = []
    for i in range(-5, 0):
        x = samples[i].data.get(metric)
        if x is None or not isfinite(x):
            return None
        out.append(x)
    return out


def _halvings(before: float, after: float) -> bool:
    """A scaler backs off by powers of two (or to zero): 299499.5 → 267780.1 is an average
    over an epoch moving, and 100 → 99.995 a learned scale drifting, not a scale going down."""
    if after <= 0:
        return True
    ratio = before / after
    k = round(math.log2(ratio))
    # at least one halving: 100 → 99.995 (open_clip's "Logit Scale", a learned temperature) is
    # within 1 % of 2^0, which is no move at all
    return k >= 1 and abs(ratio - 2**k) <= 0.01 * ratio


def _halves(a: ScaleMove, b: ScaleMove) -> bool:
    """Two untimed lines of the same file, at most 2 apart, one saying the step and the other
    the scale (timestamped pairs are matched by their time in correlate's de-duplication)."""
    if a.time is not None or b.time is not None:
        return False
    if a.source.path != b.source.path or not 0 < b.source.line - a.source.line <= 2:
        return False
    a_scale = a.to_scale is not None or a.from_scale is not None
    b_scale = b.to_scale is not None or b.from_scale is not None
    return (a.step is not None and not a_scale and b_scale and b.step is None) or (
        b.step is not None and not b_scale and a_scale and a.step is None)


def _recent_losses(st: RankState, n: int = 5) -> list[SampleRec]:
    """The rank's last ``n`` finite losses, newest first, among its last 12 samples (throughput or
    evaluation-only lines in between); fewer when a non-finite one or the window's end comes first."""
    got: list[SampleRec] = []
    for r in itertools.islice(reversed(st.samples), 12):
        x = r.data.get("loss")
        if x is None:
            continue
        if not isfinite(x) or len(got) == n:
            break
        got.append(r)
    return got


_NOT_METRICS = frozenset({"progress", "scope", "rank_from", "generation", "attempt"})


def _redraw(prev: SampleRec, d: dict[str, Any]) -> bool:
    """``d`` repeats ``prev``'s metric values exactly: the bar was redrawn, nothing new was read."""
    if prev.step is not None or "progress" not in prev.data:
        return False
    a = {k: v for k, v in prev.data.items() if k not in _NOT_METRICS}
    b = {k: v for k, v in d.items() if k not in _NOT_METRICS}
    return bool(b) and a.keys() == b.keys() and all(
        a[k] == b[k] or (isinstance(a[k], float) and isinstance(b[k], float) and a[k] != a[k] and b[k] != b[k]) for k in b)


def _median_mad(samples: Iterable[SampleRec], metric: str) -> tuple[float, float, int] | None:
    """(median, MAD x 1.4826, count) of the finite values of ``metric`` in ``samples`` (upper
    median). Called once per ``BASELINE_EVERY`` samples per rank over ``WINDOW`` samples; a
    rank's window is kept sorted as it slides (``detectors.window``), the result is the sort's."""
    return median_mad(samples, metric)


def _float(v: Any) -> float | None:
    try:
        return float(v) if v is not None else None
    except (TypeError, ValueError):
        return None


def _int(v: Any) -> int | None:
    try:
        return int(v) if v is not None else None
    except (TypeError, ValueError):
        return None


def _hms(v: str) -> float | None:
    """``0:30:00`` or ``1 day, 0:00:00`` (a timedelta as Python prints it) → seconds."""
    days = 0
    if "," in v:  # "1 day, 0:00:00"
        head, v = v.split(",", 1)
        days = int(head.split()[0]) if head.split() and head.split()[0].isdigit() else 0
    parts = v.strip().split(":")
    if len(parts) != 3 or not all(p.replace(".", "", 1).isdigit() for p in parts):
        return None
    h, m, sec = parts
    return days * 86400 + int(h) * 3600 + int(m) * 60 + float(sec)
