"""Job-wide correlation: the state of all ranks → incidents, initiator vs collateral.

Principles (DESIGN.md "Key ideas"):
- initiator, not first reporter: cause classes outrank collateral ones (catalog
  ``priority``); a launcher's "root cause" line and exit codes are evidence, not verdicts;
- steps are the clock; wall time only breaks ties; arrival order is the last tie-breaker;
- a NaN in one rank's LOCAL loss at step s outranks NaN grad norms on every rank at s
  (all-reduced) and NaN losses elsewhere at s+1;
- when every rank that speaks reports a timeout or a lost peer, the initiator is the rank
  that stopped making progress and did not report one (a hang);
- when the logs cannot tell which rank started it, the initiator rank is None.

``incidents(state)`` is a pure function of the detect stage's state: call it at any
time (the live daemon does, repeatedly) and it returns the verdict for what was seen.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import itertools
import math
import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterator
from typing import Any

from detectors.detect import ABSURD_LOSS, JobState, RankState
from detectors.gpus import compute_capability
from detectors.model import Event, Finding, Incident, RankKey, Role, SampleRec, ScaleMove, Source
from detectors.oddrank import is_warning, lagging_rank, note_template
from detectors.parsers.progress import EPOCH_WEIGHT
from detectors.prefixes import split_prefixes
from detectors.stacks import (
    RankStack,
    Where,
    classify,
    compare,
    decode_frames,
    is_launcher,
    is_library,
    reads,
)
from detectors.symptoms import symptom_incidents

__all__ = ["Incident", "incidents"]

_SEVERITY_RANK = {"critical": 3, "warning": 2, "info": 1}
_FATAL_CATEGORIES = {"crash", "distributed", "hardware", "memory"}
_NUMERIC = {"nonfinite_loss", "amp_bf16_vs_fp16"}
# ranks logging a non-finite loss within this many seconds of each other, where the lines carry no
# step, are taken to have gone bad in the same step: ranks print one step's metrics within tens of
# milliseconds of each other (they leave the same all-reduce; QwenAudio/CosyVoice#652: 4 ranks in
# 21 ms), the next step comes a forward and backward pass later
SAME_STEP_S = 0.1
# the dynamic scalers' initial scales: torch GradScaler / apex / DeepSpeed 2^16, DeepSpeed
# initial_scale_power 32, fairseq --fp16-init-scale 128
LATE_STEP = 1000  # overflows past this step (or from LATE_EPOCH on) are not the start-up search
LATE_EPOCH = 2
# an unbroken run of this many halvings (a 1024x fall, no growth in between) overshoots the
# range fp16 training settles in (2^10..2^16 from torch/apex/DeepSpeed's 2^16 start; fairseq's
# 128 start is below 1 after ten): past any start-up calibration
LONG_RUN = 10
STATIC_OVERFLOWS = 5  # overflow reports under a static loss scale that make it a problem
_HEX = re.compile(r"0x[0-9a-fA-F]+")
HANDLED_OWN_SAMPLES = 2  # ... its own rank's metric lines after it, when it names its rank
SURVIVED_WARN_SAMPLES = 10  # metric lines after an NCCL WARN, nothing failing: NCCL went on from it
HANDLED_SAMPLES_BEFORE = 6  # metric lines between a caught OOM and a later failure: the job trained on from it
HANDLED_SAMPLES = 3  # metric lines after a traceback (its rank's, or any with no rank): it was handled
RANK_COPY_LINES = 6  # how far below a move another rank's copy of it may be printed (wrapped lines)
# a start-up descent: the first STARTUP_RUN+ halvings in a row, ending at STARTUP_FLOOR or above,
# before any metric line of a later epoch (or past step LATE_STEP / 5), then at most
# STARTUP_AFTER overflows, none below the floor: the scaler searching, whatever its initial scale
STARTUP_RUN = 3
STARTUP_FLOOR = 1024
STARTUP_AFTER = 2
FIRST_STEPS = 5  # overflows before a run's 5th logged step, then clean lines: the scaler finding its scale
RELEARN_VALUES = 8  # losses after a jump that come down at nearly every step: a model learning anew
RELEARN_DOWN = 0.85  # ... this share of their moves downward
SPIKE_PASSED_AFTER = 4  # finite losses logged after a spike that came back at once: enough to call it passed
SPIKE_BACK_WITHIN = 2  # logged values within which a passing spike's loss is back near its level
LEARNING_DROP = 0.75  # a loss at most 3/4 of its earlier median while the grad norm rises: learning
# a scaler that regrows and overflows again REGROWTHS+ times, one overflow per 20 logged steps or
# more over SPAN_STEPS+ steps, keeps paying for skips (a healthy one overflows once per window)
REGROWTHS = 3
SPAN_STEPS = 50
# ... or over any span, when the cycles are this many: every framework's scaler waits hundreds of
# clean steps before it grows (apex/GradScaler 2000, DeepSpeed/Megatron 1000), so eight cycles in a
# short span are a scaler overflowing again right after each growth, not a sliver of a healthy run
MANY_CYCLES = 8
SKIP_LINES = 3  # log lines, at least, whose own interval skipped iterations (not one burst)
# a non-finite grad norm on this many logged steps in a row, the loss beside it finite and moving
# (it changes on at least EVERY_STEP_MOVING of the consecutive pairs): updates never applied
EVERY_STEP_RUN = 8
EVERY_STEP_MOVING = 0.8
HIGH_SKIP_RATE = 0.05
# a rank's loss where an all-rank failure began stands apart from its peers' when it is this many
# times as far from theirs as they are from zero (the ratio the per-rank spike rule uses over time)
ONSET_APART = 3.0
RISING_FACTOR = 2.0  # a loss this many times its own recent level is already rising (see _spiked_everywhere)
FP16_MAX = 65504.0  # the largest finite float16: a loss above it overflows in an fp16 forward
# frameworks whose metric lines log the loss scale only for fp16 with a dynamic scaler (fairseq
# logs ``loss_scale`` only under --fp16/--amp): a scale of 1 there is the scaler, ten-plus
# halvings down; Megatron prints a constant ``loss scale: 1.0`` in bf16 and fp32 runs
_DYNAMIC_SCALE_LOGGERS = frozenset({"fairseq"})
_INITIAL_SCALES: dict[str | None, set[float]] = {None: {float(2**16), float(2**32)}, "fairseq": {128.0}}
_COLLATERAL_SIGNALS = {"SIGTERM", "SIGINT", "SIGHUP", "SIGABRT"}
_NEAR_PIDS = 64  # worker pids of one torchrun agent lie this close together
MIDRUN_STREAK = 4  # unbroken halvings from a scale the run had grown to: overflows, not the start-up search
CALM_STEPS = 5  # loss lines of the same file logged before a streak's first halving: the run had been training
PLACEHOLDER_AFTER = 5  # finite losses after a series' first value, NaN, that make it a placeholder
CUT_MIN_CHARS = 20  # an exception line cut at least this far in, the start of another's, is a copy of it
# a scale that climbed back to this many times its lowest (and to 2 or more) after the last halving
# had found a working scale again, even from below the scaler's floor
REGROWN_FACTOR = 8.0
RODE_OUT_SPACING = 250  # logged steps per overflow, at least, of a scaler that rode its lows out
RODE_OUT_FACTOR = 4.0  # ... or this many times its lowest after the halving that reached the lowest
_MAX_SEQ_BEHIND = 8  # a rank behind its peers by more collectives than this is in another process group
_COMM_FAILURES = ("nccl_error", "nccl_version_mismatch")
# the key a store wait of Gloo's set-up names: the process group's prefix, the device, the rank
_STORE_KEY_RANK = re.compile(r"\bkeys: \S*//cpu//\d+/(\d{1,6})\s*$")
LONE_BACKOFF_FLOOR = 1024  # one halving to at least this scale, and no other, is the scaler's cycle
CALM_AFTER_SPIKE = 1  # logged values back near the pre-spike level that make a later NaN its own event  # a communication library's own error
_OOM_WORDS = re.compile(r"(?i)out of memory")
_PG = re.compile(r"\[PG (?:ID )?(\d+)")  # ProcessGroupNCCL's process group tag on a watchdog line


_STEP_IN = re.compile(r"\b(?:step|iter(?:ation)?)[ :=#]{0,3}(\d{1,9})\b", re.IGNORECASE)


def _sans_own(message: object, rank: int | None) -> object:
    """A message with its speaker's own rank number (its device index, under one process per
    GPU) made a placeholder: "found at least two devices, cpu and cuda:6!" on rank 6 and "cuda:3!" on
    rank 3 are one message."""
    if not isinstance(message, str) or rank is None:
        return message
    return re.sub(rf"(?<![\d.]){rank}(?![\d.])", "#", message)


def _sort_key(f: Finding) -> tuple[float, bool, float, float, float, float, int]:
    """Priority, then a finding that names its rank, then the step clock (for a line with no step,
    its epoch and iteration within it), time, arrival."""
    step = f.step if f.step is not None else math.inf
    t = f.time if f.time is not None else math.inf
    ep, it = _position(f)
    return (-f.priority, f.rank is None, step, ep, it, t, f.order)


def _position(f: Finding) -> tuple[float, float]:
    """(epoch, iteration within it) a finding from a metric line with no step was read at
    ("[2] Epoch 2 [400/1600]  loss: 19785224.0"), ``inf`` where unknown."""
    ep, it = f.data.get("at_epoch"), f.data.get("at_iter")
    return (ep, it) if isinstance(ep, float) and isinstance(it, float) else (math.inf, math.inf)


def _fmt_ranks(ranks: list[int]) -> str:
    return ", ".join(str(r) for r in ranks[:16]) + (f" … (+{len(ranks) - 16})" if len(ranks) > 16 else "")


class _Correlator:
    def __init__(self, st: JobState, ended: bool = False) -> None:
        self.st = st
        self.ended = ended  # the input is complete (offline diagnosis): where the logs stop means something
        self.cat = st.catalog
        self.ctx = st.context()
        self.extra: list[Finding] = []
        self.order = st.order
        # launcher exit codes the catalog explains (exit_codes: [-9] → rank_killed, ...)
        self.exit_failures = {c: e.id for e in self.cat for c in e.exit_codes}
        # non-finite grad norms the run recovered from (finite values after): skipped steps
        self.recovered: list[SampleRec] = []
        # each series whose grad norm was non-finite on every logged step from its first bad one on,
        # its loss finite and moving: fp16 gradients overflowing, no update applied (see _overflowing_every_step)
        self.every_step: list[tuple[SampleRec, int]] = []
        self._grad_loggers: list[RankState] | None = None  # ranks that logged a grad norm (_lone_grad_logger)
        self.spawn_waiting: list[Event] = []  # spawn exits whose traceback below ends in a wait (see exits)

    # ----------------------------------------------------------------- helpers
    def resolve(self, rank: int | None, local: int | None) -> int | None:
        if rank is not None:
            return rank
        if local is None:
            return None
        if local in self.st.local_to_global:
            return self.st.local_to_global[local]
        return None if self.st.multi_node else local

    def finding(self, failure: str, rank: int | None, step: int | None, time: float | None,
                evidence: list[Source], role: Role | None = None, severity: str | None = None,
                priority: int | None = None, **data: Any) -> Finding:
        e = self.cat[failure]
        self.order += 1
        return Finding(failure, role or Role(e.role), priority if priority is not None else e.priority,
                       rank, step, time, self.order, evidence, severity or e.severity, data=data)

    def last_step(self, rank: int, local: int | None = None) -> int | None:
        steps = [rs.last_step for k in (("g", rank), ("l", local if local is not None else rank))
                 if (rs := self.st.ranks.get(k)) is not None and rs.last_step is not None]
        return max(steps) if steps else None

    def pid_rank(self, pid: int) -> int | None:
        """The rank of the worker whose process id a launcher's report gives (torchrun's summary
        ``rank : 2 (local_rank: 2)`` / ``exitcode : -15 (pid: 15095)``, its agent's ``failed
        (exitcode: -6) local_rank: 1 (pid: 15094)``): the process a kernel's report names
        (``NVRM: Xid (PCI:0000:41:00): 13, pid=15095, ...``) is that rank's. None when no
        report, or two that disagree, give it."""
        got = {r for e in self.st.exits if e.data.get("pid") is not None and int(e.data["pid"]) == pid
               and (r := self.resolve(e.rank, e.data.get("local_rank"))) is not None}
        return got.pop() if len(got) == 1 else None

    def world_size(self) -> int | None:
        ws = self.ctx.get("world_size")
        return int(ws) if ws else None

    # ----------------------------------------------------------------- numerics
    def nonfinite(self) -> list[Finding]:
        out: list[Finding] = []
        loss_bad: list[tuple[RankKey, SampleRec]] = []
        grad_bad: list[tuple[RankKey, SampleRec]] = []
        global_bad: list[tuple[RankKey, SampleRec]] = []
        for key, rs in self.st.ranks.items():
            if rs.first_bad_loss is not None and _placeholder_nan(rs, rs.first_bad_loss):
                continue
            if rs.first_bad_global is not None and rs.first_bad_loss is None and _placeholder_nan(rs, rs.first_bad_global):
                continue
            if rs.first_bad_loss and _finite_loss_at(rs, rs.first_bad_loss):
                # the rank also said its own loss was finite at that step ("[RANK 0] step 7: local
                # loss 0.23" beside a bar's NaN mean): the NaN is a reduced view, not its loss
                global_bad.append((key, rs.first_bad_loss))
            elif rs.first_bad_loss:
                loss_bad.append((key, rs.first_bad_loss))
            if rs.first_bad_grad and not rs.grad_recovered and (run := _overflowing_every_step(rs, self.ctx.get("precision"))):
                self.every_step.append((rs.first_bad_grad, run))
            elif rs.first_bad_grad and not rs.grad_recovered and not _calibrating(rs, self.ctx.get("precision")):
                grad_bad.append((key, rs.first_bad_grad))
            elif rs.first_bad_grad:
                self.recovered.append(rs.first_bad_grad)
            if rs.first_bad_global:
                if rs.first_bad_loss is None and self._differs_from_peers(key, rs.first_bad_global):
                    # a "reduced" shape (a dict print) whose value other ranks printed finite at
                    # that step: a reduced value is the same on every rank, so this one is its own
                    loss_bad.append((key, rs.first_bad_global))
                else:
                    global_bad.append((key, rs.first_bad_global))
        if self.scaling():
            # a NaN loss on the line where a logged scale dropped, with finite losses after it:
            # the step the dynamic scaler skipped (mmcv's "grad_scale: 2.000, total_loss: nan"),
            # when no rank is named (a rank's own skipped NaN says whose batch overflowed)
            loss_bad = [(k, r) for k, r in loss_bad if k is not None or not _skipped_step(self.st.ranks.get(k), r)]
        lone_grad = self._lone_bad_grad(grad_bad)
        if self.scaling() and lone_grad is None:
            # fp16 with a dynamic scaler: a non-finite grad norm is an overflow the scaler
            # skipped (its moves are judged by loss_scale()), not a NaN in the model
            grad_bad = []
        if not (loss_bad or grad_bad or global_bad):
            return out

        def clock(rec: SampleRec) -> tuple[float, float, float, int]:
            # no step: a per-epoch counter ("Epoch(train) [1][ 9/20]") still orders one epoch's lines
            # across ranks, whose blocks a file interleaves in any order
            ep, it = _epoch_iter(rec)
            return (rec.step if rec.step is not None else math.inf, ep, it, rec.order)

        def rank_of(key: RankKey) -> int | None:
            if key is None:
                return None
            return key[1] if key[0] == "g" else self.resolve(None, key[1])

        initiator: tuple[RankKey, SampleRec] | None = None
        if loss_bad:
            loss_bad.sort(key=lambda kr: clock(kr[1]))
            first_step = loss_bad[0][1].step
            if first_step is not None:
                same = [kr for kr in loss_bad if kr[1].step == first_step]
            elif not math.isinf((first_pos := _epoch_iter(loss_bad[0][1]))[0]):
                same = [kr for kr in loss_bad if kr[1].step is None and _epoch_iter(kr[1]) == first_pos]
            else:
                # no step on the lines: ranks whose non-finite loss came within SAME_STEP_S of the
                # first one's (by the lines' clocks) went bad in the same step, as far as the log shows
                t0 = loss_bad[0][1].time
                same = loss_bad[:1] + [kr for kr in loss_bad[1:] if t0 is not None and kr[1].time is not None
                                       and abs(kr[1].time - t0) <= SAME_STEP_S]
                if t0 is None:
                    # no step and no clock: ranks whose first non-finite loss sits on the lines right
                    # below the first one's (a per-rank table's rows, one console's interleaved lines)
                    # went bad at the same point as far as the log can tell; their order is the printer's
                    same = loss_bad[:1]
                    for kr in loss_bad[1:]:
                        last = same[-1][1].source
                        if kr[1].time is None and kr[1].source.path == last.path and 0 < kr[1].source.line - last.line <= 2:
                            same.append(kr)
            earlier_grad = [kr for kr in grad_bad if first_step is not None and kr[1].step is not None and kr[1].step < first_step]
            # only one rank prints metrics in a multi-rank job (rank-zero-only logging): its
            # loss says nothing about which rank went bad first
            if len(same) == 1 and not earlier_grad and rank_of(same[0][0]) is not None and not self.zero_only():
                initiator = same[0]
        if (initiator is None and lone_grad is not None and loss_bad and not self.zero_only()
                and lone_grad[1].step is not None and loss_bad[0][1].step is not None
                and lone_grad[1].step < loss_bad[0][1].step
                and (lone_grad[1].data.get("own_grad") or self._finite_grad_beside(*lone_grad)
                     or self._own_norms(lone_grad[0]))):
            # several ranks' losses went NaN at once, after one rank's OWN grad norm had gone
            # non-finite at an earlier step: the all-reduced inf spread from that rank's gradients
            initiator = lone_grad
        if initiator is None and lone_grad is not None and not loss_bad and not self.zero_only():
            # one rank's own grad norm non-finite while the others logged finite ones at that step:
            # its gradients, before any reduction (a reduced norm is the same on every rank)
            initiator = lone_grad
        if initiator is None and not loss_bad and not grad_bad and not self.zero_only():
            # a rank's own evaluation went non-finite ("[R2] Epoch 3 validation: msle nan") while the
            # other ranks' evaluations of that point were finite: that rank's model or data
            own_eval = sorted(((k, r) for k, r in global_bad if k is not None and k[0] == "g"
                               and r.data.get("scope") == "local" and isinstance(v := r.data.get("eval_loss"), float)
                               and math.isnan(v)), key=lambda kr: clock(kr[1]))
            if own_eval and not any(clock(kr[1])[:3] == clock(own_eval[0][1])[:3] for kr in own_eval[1:]):
                initiator = own_eval[0]
        all_bad = loss_bad + grad_bad + global_bad
        all_bad.sort(key=lambda kr: clock(kr[1]))
        head = initiator or all_bad[0]
        rank = rank_of(head[0]) if initiator else None
        rec = head[1]
        metric = ("grad_norm" if head is lone_grad else "eval_loss" if head in global_bad else "loss") if initiator or head in loss_bad else (
            "loss (reduced over ranks)" if head in global_bad else "grad_norm")
        odd = None
        if initiator is None and rec.step is not None and not self.zero_only():
            # every rank went non-finite at once (an all-reduced gradient): the one rank whose own
            # loss was already anomalous at the step where it began is where it came from
            odd = self._onset_odd_rank(rec.step - 1, rec.step)
        f = self.finding("nonfinite_loss", rank if odd is None else odd[0], rec.step, rec.time,
                         [rec.source] if odd is None else _uniq([odd[1].source, rec.source]), metric=metric,
                         local=initiator is not None, value=_value_text(rec, metric))
        if rank is not None:
            f.data["rank_from"] = rec.data.get("rank_from")
            if head is lone_grad and not self._finite_grad_beside(*lone_grad):
                f.data["peers_later"] = True  # no peer's finite norm at that step: theirs went bad after it
        elif odd is not None:
            f.data.update(rank_from="onset_loss", onset_loss=odd[1].data.get("loss"),
                          onset_baseline=odd[1].data.get("baseline_median"))
        out.append(f)
        for key, r in all_bad:
            if r.order == rec.order:  # the same record (by value: a restored checkpoint has copies)
                continue
            out.append(self.finding("nonfinite_loss", rank_of(key), r.step, r.time, [r.source], role=Role.COLLATERAL,
                                    metric="loss" if (key, r) in loss_bad else "grad_norm"))
        return out

    def thread_deaths(self, fatal: list[Finding]) -> list[Finding]:
        """A thread of a rank died of an exception (threading.excepthook's report) and then its
        peers timed out or lost it: the rank lived on without the work that thread did (a prefetch
        or data thread) and never reached the collective. That rank hung; the exception is why."""
        out: list[Finding] = []
        threads = [f for f in fatal if f.failure == "rank_exception" and f.data.get("in_thread")
                   and f.role is Role.CAUSE and f.rank is not None]
        if not threads:
            return out
        waits = sorted((g for g in fatal if g.failure in ("collective_timeout", "peer_connection_lost")),
                       key=lambda g: -g.order)
        if not waits:
            return out
        # the latest wait, and the latest one from another rank than it: a wait after a thread's
        # death from another rank than the thread's, if there is one, is one of these two
        last = waits[0]
        other = next((g for g in waits if g.rank != last.rank), None)
        for f in threads:
            seen = [g for g in (last, other) if g is not None and g.order > f.order and g.rank != f.rank]
            if not seen:
                continue
            f.role = Role.COLLATERAL
            out.append(self.finding("rank_hang", f.rank, f.step, f.time, [f.evidence[0], seen[0].evidence[0]],
                                    rank_from=f.data.get("rank_from") or "prefix", thread_died=f.data.get("exc_type"),
                                    reporters=sorted({g.rank for g in waits if g.rank is not None and g.order > f.order})))
        return out

    def survived_warns(self, base: list[Finding]) -> None:
        """An ``NCCL WARN`` line (no traceback, no abort with it) after which the job went on
        training: SURVIVED_WARN_SAMPLES or more metric lines below it (or the framework's own end-of-training
        line; a UCX ERROR line alike), and no process exited, was
        torn down or failed. NCCL warned and went on (an IB device it could not open and skipped,
        a transport it fell back from): a note, not the job's failure. So are WARNs that all came
        after the framework's end-of-training line: the communicators' teardown on the way out."""
        if self.st.exits or self.st.teardowns:
            return
        warns = [f for f in base if f.role is Role.CAUSE and not f.data.get("frames") and f.evidence and (
            (f.failure in _COMM_FAILURES and _LIBRARY_WARN.search(f.evidence[0].text))
            or (f.failure == "cuda_oom" and _TF_PROBE.search(f.evidence[0].text)))]
        if not warns or any(f.role is Role.CAUSE and f not in warns and f.failure not in _COMM_FAILURES for f in base):
            return
        orders = sorted(p.order for rs in self.st.ranks.values() for p in rs.samples)
        last = max(warns, key=lambda f: f.order)
        last_warn = last.order
        ended = self.st.trained_at is not None and self.st.trained_at > last_warn  # the framework said it finished
        after = len(orders) - bisect_right(orders, last_warn)
        # (the same line, word for word but its numbers, that the job already trained ten lines past,
        # then a few metric lines again: a restarted run meeting it again, survived again)
        said = _DIGITS.sub("N", last.evidence[0].text)
        again = after >= HANDLED_SAMPLES and any(
            f is not last and _DIGITS.sub("N", f.evidence[0].text) == said
            and len(orders) - bisect_right(orders, f.order) - after >= SURVIVED_WARN_SAMPLES for f in warns)
        # (or every WARN came after the framework said the run finished: its processes tearing the
        # communicators down on the way out, MLPerf's run_stop "success" then the proxies' "Failed to
        # execute operation Close" from 512 ranks)
        shutdown = self.st.trained_at is not None and min(f.order for f in warns) > self.st.trained_at
        if after < SURVIVED_WARN_SAMPLES and not ended and not again and not shutdown:
            return
        for f in warns:
            f.role = Role.BENIGN
            f.data["survived"] = True

    def exit_finalizers(self, base: list[Finding]) -> None:
        """An exception raised in a cleanup that runs while the interpreter exits (its outermost
        frame multiprocessing's ``_run_finalizers`` or ``_exit_function``, or ``atexit``'s callbacks):
        Python prints the traceback and goes on exiting, so it ends nothing. A semaphore already
        unlinked (``sem_unlink`` → ``FileNotFoundError``) after an MLPerf SSD run's ``run_stop``
        success (corpus holdout28 h28b-009) is the usual one. A note (info), not a failure."""
        for f in base:
            if f.failure != "rank_exception" or f.role is not Role.CAUSE:
                continue
            frames = decode_frames(f.data.get("frames"))
            outer = frames[-1] if frames else None
            if outer is not None and (
                    (outer.function in _EXIT_FINALIZERS and outer.file.endswith("multiprocessing/util.py"))
                    or outer.file.endswith("/atexit.py")):
                f.role = Role.BENIGN
                f.data["at_exit"] = True

    def _ranks_went_on(self, src: Source) -> bool:
        """Every rank the job has logged a line of its own after ``src``, in the same file."""
        known = self.st.seen_global | {r for lr in self.st.seen_local if (r := self.resolve(None, lr)) is not None}
        after: set[int] = set()
        for (kind, n), (line, _, _) in getattr(self.st, "last_notes", {}).get(src.path, {}).items():
            r = n if kind == "g" else self.resolve(None, n) if kind == "l" else None
            if r is None:
                continue
            known.add(r)  # (a rank whose last own line is in this file is one the job has)
            if line > src.line:
                after.add(r)
        return bool(known) and known <= after

    def handled_exceptions(self, base: list[Finding]) -> None:
        """A Python exception the program caught, logged (``logger.exception``) and went on from:
        its rank (or, with no rank, the job) kept logging metric lines after it (HANDLED_SAMPLES or
        more), and nothing after it says a process ended (no launcher exit or teardown, no peer
        timing out or losing its peer, no other cause). A note (info), not the job's failure. So is
        an out-of-memory error the program caught (a batch-size search that halves the batch and
        retries, then trains). The same exception raised again later, with a metric line after it, was handled again (a loop
        that skips each bad record near its end too). One pass from the last finding back (a later traceback that was handled too does not make
        an earlier one fatal), the samples after one found by bisection: linear in the job's size."""
        if not any(f.failure in _HANDLED for f in base):
            return
        # (a process ended after the last of them: only an OOM the job trained on from before a
        # later failure is told apart then)
        ended = bool(self.st.exits or self.st.teardowns)
        by_rank: dict[int, list[int]] = {}
        every: list[int] = []
        for key, rs in self.st.ranks.items():
            orders = [p.order for p in rs.samples]
            every += orders
            if key is not None and key[0] == "g":
                by_rank.setdefault(key[1], []).extend(orders)
        every.sort()
        for orders in by_rank.values():
            orders.sort()
        def after(f: Finding) -> tuple[int, int]:
            """(metric lines after the finding that count, how many it takes to call it handled)"""
            # (a traceback a log message printed was caught by the program: any process's lines
            # after it count, as for one with no rank; only rank 0 may log metrics)
            shared = f.rank is None or bool(f.data.get("logged"))
            orders = every if shared or f.rank is None else by_rank.get(f.rank, [])
            # (two lines of the rank's own after its traceback: that process went on; with no
            # rank, any process's lines count, so it takes more)
            return len(orders) - bisect_right(orders, f.order), HANDLED_SAMPLES if shared else HANDLED_OWN_SAMPLES

        # the same exception (its rank, type, message but its numbers, innermost frame) already
        # handled earlier in the log: a program that skips each bad record and logs why raises it
        # again near the end too, with fewer metric lines left after it
        survived = {_exception_key(f) for f in base if f.failure in _HANDLED and f.role is Role.CAUSE
                    and (counted := after(f))[0] >= counted[1]}
        fatal_after = False
        raised_at: int | None = None  # the arrival order of the earliest exception or OOM after the finding
        for f in sorted(base, key=lambda f: -f.order):
            if (f.failure == "cuda_oom" and f.role is Role.CAUSE and raised_at is not None
                    and bisect_left(every, raised_at) - bisect_right(every, f.order) >= HANDLED_SAMPLES_BEFORE):
                # an out-of-memory error the job trained on from for several logged steps before a
                # later exception or OOM (a batch-size search's OOMs, then the run's own): caught, not
                # the failure
                f.role = Role.BENIGN
                f.data["handled"] = True
                continue
            if f.failure in _HANDLED and f.role is Role.CAUSE and not fatal_after and not ended:
                n, need = after(f)
                if f.failure == "cuda_oom" and f.rank is not None and n < need and self._noted_below(f):
                    # a rank that logs no metric lines of its own (rank 0 logs them) printed its own
                    # next note below its OOM ("trying per-device batch_size=64"): it went on, and
                    # the job's metric lines count
                    n, need = len(every) - bisect_right(every, f.order), HANDLED_SAMPLES
                elif f.failure == "cuda_oom" and f.rank is not None and n < need and not by_rank.get(f.rank):
                    # a rank that never logs metric lines of its own (rank 0 logs the job's): the
                    # job's lines went on after its OOM (one a retry or a batch-size search
                    # caught; an uncaught traceback's process ends), and with every rank in each step's
                    # collectives they could not have, had it died (its peers would wait, then time
                    # out): more of them than for one rank's own
                    n, need = len(every) - bisect_right(every, f.order), HANDLED_SAMPLES_BEFORE
                if n >= need or (n >= 1 and _exception_key(f) in survived and any(
                        g.order < f.order and g.failure == f.failure and _exception_key(g) == _exception_key(f)
                        for g in base)):
                    f.role = Role.BENIGN
                    f.data["handled"] = True
                    continue
            if f.role is not Role.BENIGN and (f.role is Role.CAUSE or f.failure in ("collective_timeout", "peer_connection_lost")):
                fatal_after = True
            if f.role is Role.CAUSE and f.failure in _HANDLED and not f.data.get("weak"):
                raised_at = f.order  # (a launcher's exit report of a worker is no exception of its own)

    def stalls_that_passed(self, base: list[Finding]) -> None:
        """A hang report (a watchdog's ``Timeout (0:00:08)!`` dump, a stall warning) after which
        every rank that logs metric lines logged a later step than its last one before it: the job
        was slow there (a checkpoint written while the others waited at a barrier), not stuck. A
        note (info), as long as nothing after it says a process ended."""
        if self.st.exits or (self.st.teardowns and any(not t.data.get("interrupted") for t in self.st.teardowns)):
            return
        ranks = [rs for key, rs in self.st.ranks.items() if key is not None and rs.samples]
        if not ranks:
            return
        for f in base:
            if f.failure != "rank_hang" or f.role is not Role.CAUSE or not f.evidence:
                continue
            at = f.evidence[0]
            if all(_stepped_past(rs, at) for rs in ranks):
                f.role = Role.BENIGN
                f.data["passed"] = True

    def _noted_below(self, f: Finding) -> bool:
        """The finding's rank printed a note of its own (its last one in the file's last lines)
        below the finding's line in the same file."""
        if not f.evidence:
            return False
        at = f.evidence[0]
        notes = getattr(self.st, "last_notes", {}).get(at.path, {})
        got = notes.get(("g", f.rank)) if f.rank is not None else None
        return got is not None and got[0] > at.line

    def _differs_from_peers(self, key: RankKey, rec: SampleRec) -> bool:
        """This rank's loss is non-finite and another rank (a global tag) logged a finite loss
        at that step: the two were not one reduced value."""
        own = rec.data.get("loss")
        if key is None or key[0] != "g" or rec.step is None or not isinstance(own, float) or math.isfinite(own):
            return False
        for other, rs in self.st.ranks.items():
            if other == key or other is None or other[0] != "g":
                continue
            for p in reversed(rs.samples):
                if p.step is not None and p.step < rec.step:
                    break
                v = p.data.get("loss")
                if p.step == rec.step and isinstance(v, float) and math.isfinite(v):
                    return True
        return False

    def _lone_bad_grad(self, grad_bad: list[tuple[RankKey, SampleRec]]) -> tuple[RankKey, SampleRec] | None:
        """The one rank (a global tag) whose grad norm went non-finite while another rank logged a
        finite grad norm at that same step; or the one rank whose own norm (a ``local_grad_norm``
        key) went non-finite first, whatever the reduced norm other ranks logged beside it."""
        own = sorted((kr for kr in grad_bad if kr[1].data.get("own_grad") and kr[0] is not None and kr[0][0] == "g"
                      and kr[1].step is not None), key=lambda kr: (kr[1].step, kr[1].order))
        if own and (len(own) == 1 or own[1][1].step != own[0][1].step) and not any(
                kr[1].step is not None and kr[1].step < (own[0][1].step or 0) for kr in grad_bad):
            return own[0]
        # (or the one rank whose grad norm went non-finite at the earliest such step, the others'
        # only after it: every rank's norm went bad once the inf was all-reduced into the weights)
        dated = [kr for kr in grad_bad if kr[0] is not None and kr[0][0] == "g" and kr[1].step is not None]
        if not dated and len(grad_bad) == 1 and grad_bad[0][0] is not None and grad_bad[0][0][0] == "g":
            # no step on the lines (ESPnet's "1epoch:train:21-40batch: ... grad_norm=inf"): the one rank
            # whose norm went non-finite while every other rank that logs one kept logging finite norms
            # after it (an all-reduced inf would have reached them all)
            return grad_bad[0] if self._peers_finite_after(*grad_bad[0]) else None
        if not dated or len(dated) != len(grad_bad):
            return None
        first_step = min(kr[1].step for kr in dated if kr[1].step is not None)
        at_first = [kr for kr in dated if kr[1].step == first_step]
        if len(at_first) != 1:
            return None
        return at_first[0] if self._finite_grad_beside(*at_first[0]) or self._own_norms(at_first[0][0]) else None

    def _peers_finite_after(self, key: RankKey, rec: SampleRec) -> bool:
        """Every other rank that logs a grad norm (one at least) logged finite ones only, and one
        at least after ``rec`` arrived."""
        peers = 0
        for other, ors in self.st.ranks.items():
            if other == key or other is None or other[0] != "g":
                continue
            norms = [(p.order, g) for p in ors.samples if isinstance(g := p.data.get("grad_norm"), float)]
            if not norms:
                continue
            if not all(math.isfinite(g) for _, g in norms) or not any(o > rec.order for o, _ in norms):
                return False
            peers += 1
        return peers >= 1

    def _own_norms(self, key: RankKey) -> bool:
        """The rank's finite grad norms differed from another rank's at every step both logged
        one (two steps at least): each logs its own norm, before any reduction (a norm of
        all-reduced gradients is one value on every rank), even where no peer logged that step."""
        rs = self.st.ranks.get(key)
        if key is None or rs is None:
            return False
        mine = {p.step: g for p in rs.samples if p.step is not None and isinstance(g := p.data.get("grad_norm"), float)
                and math.isfinite(g) and p.data.get("scope") != "global"}
        shared = 0
        for other, ors in self.st.ranks.items():
            if other == key or other is None:
                continue
            for p in ors.samples:
                g = p.data.get("grad_norm")
                if p.step in mine and isinstance(g, float) and math.isfinite(g) and p.data.get("scope") != "global":
                    if g == mine[p.step]:
                        return False
                    shared += 1
        return shared >= 2

    def _finite_grad_beside(self, key: RankKey, rec: SampleRec) -> bool:
        """Another rank logged a finite grad norm of its own at the step ``rec`` went non-finite:
        ``rec``'s norm is that rank's own (a reduced norm is the same on every rank)."""
        for other, rs in self.st.ranks.items():
            if other == key or other is None:
                continue
            for p in rs.samples:
                g = p.data.get("grad_norm")
                if p.step == rec.step and isinstance(g, float) and math.isfinite(g) and p.data.get("scope") != "global":
                    return True
        return False

    def infer_from_gpu_index(self, base: list[Finding]) -> None:
        """The weakest link of the rank chain: ``GPU 3`` in a rank-less error message.

        Only on one node, only when nothing else in the logs names a rank for any cause,
        only when one GPU failed, and only when the logs show a multi-GPU job (a world size
        above 1, several ranks, or a traceback through ``torch.multiprocessing.spawn``): a bare OOM line, or a single-process job's ``GPU 0``,
        names no rank. The answer is marked ``inferred``.
        """
        if self.st.multi_node or any(f.rank is not None and f.role is Role.CAUSE for f in base):
            return
        ws = self.world_size()
        ranks_seen = len(self.st.seen_global | self.st.seen_local)
        gpus = {f.data["gpu"] for f in base if f.rank is None and f.role is Role.CAUSE and f.data.get("gpu") is not None}
        spawned = self.ctx.get("launcher") == "mp.spawn"  # torch.multiprocessing.spawn: a process per GPU
        # an NCCL process on a device other than 0 sees several GPUs: a multi-GPU job
        nccl_multi = any(f.data.get("nccl_proc") and str(f.data.get("gpu")) not in ("0", "None") for f in base)
        # a launcher that killed two or more worker processes had started a process per GPU
        killed = len({t.data.get("pid") for t in self.st.teardowns if t.data.get("pid") is not None}) > 1
        # a peer's report from another device of the same host (HCCL's heartbeat: "Location[IP/ID]:
        # [90.90.92.240/1] ... Discoverer:[90.90.92.240/0]"): two devices of one node at work
        peers = any(f.data.get("discoverer_ip") is not None and f.data.get("discoverer_ip") == f.data.get("host_ip")
                    and f.data.get("discoverer_dev") != f.data.get("gpu") for f in base)
        if len(gpus) != 1 or not ((ws or 0) > 1 or ranks_seen > 1 or spawned or nccl_multi or killed or peers):
            return  # several GPUs failed (no one initiator), or nothing shows a multi-GPU job
        for f in base:
            gpu = f.data.get("gpu")
            if f.rank is not None or f.role is not Role.CAUSE or gpu is None or "local_rank" in f.data:
                continue
            idx = int(gpu)
            if ws is not None and idx >= ws:
                continue
            f.rank = idx
            f.data["rank_from"] = "gpu_index"
            f.data["inferred"] = True

    def spikes(self) -> list[Finding]:
        out: list[Finding] = []
        zero_only: bool | None = None  # asked once, and only when a rank has something to report
        for key, rs in self.st.ranks.items():
            if not (rs.spike or rs.explosion):
                continue
            if zero_only is None:
                zero_only = self.zero_only()
            rank = key[1] if key and key[0] == "g" and not zero_only else None
            if rs.spike:
                if key and key[0] == "l" and not zero_only:
                    # a local rank ("[default1]:" from torchrun's --tee) is the global one on one node
                    # (a grad norm, below, is all-reduced under DDP: only a global tag names its rank)
                    rank = self.resolve(None, key[1])
                r = rs.spike
                # a value reduced over ranks before it was logged (HF Trainer's dict, Megatron's line)
                # names no rank, whichever rank's file it is in
                if rank is not None and self._diverged_elsewhere(rs, r.data.get("loss")):
                    rank = None
                passed = _spike_passed(rs, r)
                pos = _epoch_iter(r) if r.step is None else (math.inf, math.inf)
                spike = self.finding("loss_spike", None if r.data.get("scope") == "global" else rank, r.step, r.time,
                                     [r.source], severity="info" if passed else None,
                                     value=r.data.get("loss", r.data.get("eval_loss")),
                                     baseline=r.data.get("baseline_median"), passed=passed)
                if math.isfinite(pos[0]):
                    spike.data["at_epoch"], spike.data["at_iter"] = pos
                out.append(spike)
            if rs.explosion and (rs.explosion.data.get("norm_climb") or not _learning_through(rs, rs.explosion)):
                r = rs.explosion
                if rank is not None and self._lone_grad_logger(rs):
                    # the only rank that logs a grad norm in a multi-rank job: DDP all-reduces the
                    # gradients before the norm, so its value is the job's, whoever prints it
                    rank = None
                gone = _explosion_passed(rs, r)
                out.append(self.finding("grad_norm_explosion", None if r.data.get("scope") == "global" else rank,
                                        r.step, r.time, [r.source], severity="info" if gone else None,
                                        value=r.data.get("grad_norm"), baseline=r.data.get("baseline_median"),
                                        passed=gone))
        _spike_names_the_rank(out)
        self._spiked_everywhere(out)
        return out

    def _spiked_everywhere(self, found: list[Finding]) -> None:
        """The first rank's loss spike, and another rank's own spike at the first step that rank
        logged after it (ranks logging at different cadences: rank 0 every step, the others every
        ten): every rank that could show it diverged at once, a job-wide cause (a learning rate
        raised, a bad shared batch): no one rank is named."""
        spikes = sorted((f for f in found if f.failure == "loss_spike" and f.rank is not None and f.step is not None),
                        key=lambda f: (f.step, f.order))
        if len({f.rank for f in spikes}) < 2:
            return
        first = spikes[0]
        at_once = False
        for other in spikes[1:]:
            if other.rank is None or other.rank == first.rank or other.step is None or first.step is None:
                continue
            rs = self.st.ranks.get(("g", other.rank))
            if rs is None:
                continue
            between = [p for p in rs.samples if p.step is not None and first.step <= p.step < other.step
                       and isinstance(p.data.get("loss"), float)]
            before = [p.data["loss"] for p in rs.samples if p.step is not None and p.step < first.step
                      and isinstance(p.data.get("loss"), float) and math.isfinite(p.data["loss"])][-8:]
            level = sorted(before)[len(before) // 2] if before else None
            if level is not None and level > 0:
                # a loss already RISING_FACTOR times its own level before its spike was no ordinary
                # one: that rank was diverging too, its detector's bar not yet crossed (a learning
                # rate ramp every rank follows, 0.065 → 0.24 → 0.36 → 0.93 before it fired)
                between = [p for p in between if p.data["loss"] < RISING_FACTOR * level]
            if between:
                # this rank logged an ordinary loss at or after the first spike's step before its
                # own: the first rank spiked first (another rank's line missing at that step, a
                # row the output interleaved away, says nothing against it)
                return
            at_once = True
        if at_once:
            for f in spikes:
                f.rank = None
                f.data["every_rank"] = True

    def _only_rank_without_own_report(self) -> int | None:
        """In a world of known size, the one rank that printed neither an error nor a lost peer
        or timeout of its own, when every other rank printed one of those."""
        ws = self.world_size()
        if not ws or ws > 1024 or ws < 2:
            return None
        reported = {f.rank for f in self.st.findings if f.rank is not None and f.failure in (
            "peer_connection_lost", "collective_timeout")}
        erred = {f.rank for f in self.st.findings if f.rank is not None and f.role is Role.CAUSE}
        if erred - reported:
            return None  # a rank with an error of its own: not only lost peers
        quiet = set(range(ws)) - reported
        return quiet.pop() if len(quiet) == 1 and len(reported) == ws - 1 else None

    def _lone_grad_logger(self, logger: RankState) -> bool:
        """No other rank logged a grad norm, while the job has other ranks (the loggers are
        counted once per verdict: this is asked for every rank with an explosion)."""
        if len(self.st.seen_global | self.st.seen_local) < 2 and (self.world_size() or 0) < 2:
            return False
        if self._grad_loggers is None:
            self._grad_loggers = [rs for rs in self.st.ranks.values() if any("grad_norm" in p.data for p in rs.samples)]
        return all(rs is logger for rs in self._grad_loggers[:2])

    def _diverged_elsewhere(self, spiking: RankState, value: Any) -> bool:
        """Another rank's own loss sat at or above this spike's value in every sample it logged:
        that rank had diverged before (its first line already exploded), so the spike names no
        one rank (Horovod ranks at 8e6 and at 80 → 8687)."""
        if not isinstance(value, float) or not math.isfinite(value):
            return False
        for rs in self.st.ranks.values():
            if rs is spiking or not rs.n_samples:
                continue
            logged = False
            for p in rs.samples:  # stops at the first own loss below the spike: most ranks at once
                x = p.data.get("loss")
                if not isinstance(x, float) or not math.isfinite(x) or p.data.get("scope") == "global":
                    continue
                if x < value:
                    break
                logged = True
            else:
                if logged:
                    return True
        return False

    def zero_only(self) -> bool:
        """Only one rank prints metrics in a multi-rank job (rank-zero-only logging): its values
        say nothing about which rank went bad first."""
        loggers = {k for k, rs in self.st.ranks.items() if k is not None and rs.n_samples}
        # (torchrun's OMP_NUM_THREADS banner says it started several processes on the node)
        others = (len(self.st.seen_global | self.st.seen_local) > 1 or (self.world_size() or 0) > 1
                  or bool(self.ctx.get("several_processes")))
        return len(loggers) == 1 and others

    # ----------------------------------------------------------------- loss scale
    def loss_scale(self) -> list[Finding]:
        out = self._loss_scale()
        # the scale's own moves read as calibration, but the run's summaries of skipped steps say
        # it kept skipping: those summaries are the verdict
        if not any(f.failure in ("fp16_overflow_skips", "loss_scale_collapse") for f in out) and (
                windowed := self._skip_windows()):
            out = [f for f in out if f.failure != "loss_scale_warmup"] + windowed
        for f in out:
            if f.rank is None and f.role is Role.CAUSE and f.failure in ("fp16_overflow_skips", "loss_scale_collapse"):
                # however the overflows were told (a skip counter, a scale column), the one rank that
                # noted inf/NaN in its own gradients is whose batch overflowed
                rank, rank_from, note = self._local_overflow_rank(None)
                if rank is None and (longest := _longest_run_start(
                        [m for m in _dedupe_moves(self.st.scale_moves) if not m.hysteresis])) is not None:
                    # several ranks' notes at the start, one rank's through the longest descent
                    rank, rank_from, note = self._local_overflow_rank(longest.order)
                if rank is None:
                    rank, rank_from, note = self._out_of_range_rank()
                if rank is None and f.step is not None and not self.zero_only() and (
                        odd := self._onset_odd_rank(*self._overflow_window(f.step))) is not None:
                    # every rank skipped (the flag is all-reduced), one rank's own loss stood apart
                    # where the overflows began
                    rank, rank_from, note = odd[0], "onset_loss", odd[1].source
                    f.data.update(onset_loss=odd[1].data.get("loss"), onset_baseline=odd[1].data.get("baseline_median"))
                if rank is not None and note is not None:
                    f.rank, f.data["rank_from"] = rank, rank_from
                    f.evidence = [*f.evidence, note]
        return out

    def _own_loss_finite(self, rank: int | None, step: int) -> bool:
        """The rank logged its own (local) loss finite at ``step``."""
        if rank is None:
            return False
        for r, rs in self._ranked_series():
            if r == rank and any(rec.step == step and rec.data.get("scope") == "local" and rec.data.get("own_loss")
                                 and isinstance(v := rec.data.get("loss"), float) and math.isfinite(v) for rec in rs.samples):
                return True
        return False

    def _onset_odd_rank(self, after: int, until: int) -> tuple[int, SampleRec] | None:
        """The one rank whose own loss stood apart where a failure that shows on every rank began.

        The onset is the first step past ``after`` (up to ``until``) that any line logged; there,
        two ranks or more must have logged their own losses, and one rank's must be anomalous
        (non-finite, or the first spike its own series shows) and ``ONSET_APART`` times as far
        from its peers' as theirs are from zero, while every peer's is ordinary (finite, no
        spike of its own). Gradients (and the overflow flag) are all-reduced, so every rank's
        norm, skip or NaN follows the one batch that went wrong; the losses are each rank's own
        (a reduced loss is the same on every rank and names none). None otherwise."""
        onset: int | None = None
        for rs in self.st.ranks.values():
            for rec in rs.samples:
                if rec.step is not None and after < rec.step <= until and (onset is None or rec.step < onset):
                    onset = rec.step
        if onset is None:
            return None
        here: dict[int, tuple[SampleRec, bool]] = {}
        for r, rs in self._ranked_series():
            for rec in rs.samples:
                loss = rec.data.get("loss")
                if rec.step != onset or not isinstance(loss, float) or rec.data.get("scope") == "global" or r in here:
                    continue
                here[r] = (rec, not math.isfinite(loss) or (rs.spike is not None and rs.spike.order == rec.order))
        odd = [(r, rec) for r, (rec, bad) in here.items() if bad]
        peers = [rec.data["loss"] for rec, bad in here.values() if not bad]
        if len(odd) != 1 or not peers:
            return None
        v = odd[0][1].data["loss"]
        mid = sorted(peers)[len(peers) // 2]
        if math.isfinite(v) and abs(v - mid) <= (ONSET_APART - 1) * max(abs(p) for p in peers):
            return None  # the peers' own losses were as far out: the batches of several ranks
        return odd[0]

    def _overflow_window(self, step: int) -> tuple[int, int]:
        """The steps (after, until] in which the overflows that the scale move at ``step`` shows
        began. A move told by its own line happened at its step; a move read off a scale column
        happened after the last step that logged the scale it came down from, and before the line
        that shows the lower scale (unless that is the very next step): that line's own losses
        were logged after the skip, so where the overflow began is not at it."""
        move = next((m for m in self.st.scale_moves if m.step == step), None)
        if move is None or move.from_scale is None or not move.logged:
            return step - 1, step
        held = [rec.step for _, rs in self._ranked_series() for rec in rs.samples
                if rec.step is not None and rec.step < step and rec.data.get("loss_scale") == move.from_scale]
        after = max(held, default=step - 1)
        return after, step if after == step - 1 else step - 1

    def _ranked_series(self) -> Iterator[tuple[int, RankState]]:
        """Each rank that logged metric lines, by its global rank (local ones mapped; unmapped skipped)."""
        for key, rs in self.st.ranks.items():
            if key is None or not rs.n_samples:
                continue
            r = key[1] if key[0] == "g" else self.resolve(None, key[1])
            if r is not None:
                yield r, rs

    def _out_of_range_rank(self) -> tuple[int | None, str | None, Source | None]:
        """The one rank whose own logged loss left fp16's range (above ``FP16_MAX`` or not finite)
        while another rank logged an ordinary loss at that same step: its batch is what overflowed
        (the flag is all-reduced, so every rank skips and reports the skips alike)."""
        bad: dict[int, SampleRec] = {}
        ordinary: dict[int, set[int]] = {}
        for r, rs in self._ranked_series():
            for rec in rs.samples:
                loss = rec.data.get("loss")
                if rec.step is None or not isinstance(loss, float) or rec.data.get("scope") == "global":
                    continue
                if not math.isfinite(loss) or abs(loss) > FP16_MAX:
                    bad.setdefault(r, rec)
                else:
                    ordinary.setdefault(rec.step, set()).add(r)
        if len(bad) != 1:
            return None, None, None
        r, rec = next(iter(bad.items()))
        if not ordinary.get(rec.step or -1, set()) - {r}:
            return None, None, None
        return r, "out_of_range_loss", rec.source

    def _loss_scale(self) -> list[Finding]:
        moves = _dedupe_moves(self.st.scale_moves)
        out: list[Finding] = []
        explicit = [f for f in self.st.findings if f.failure == "loss_scale_collapse"]
        if not moves and not explicit:
            logged = [rs.scale_min for rs in self.st.ranks.values() if rs.scale_min is not None]
            if logged and (min(logged) < 1 or (min(logged) <= 1 and self._scale_logged_dynamic())):
                rec = min((rs.scale_min_rec for rs in self.st.ranks.values() if rs.scale_min_rec is not None),
                          key=lambda r: r.order)
                return [self.finding("loss_scale_collapse", None, rec.step, rec.time, [rec.source], overflows=0,
                                     lowest_scale=min(logged), stuck_at_minimum=True, consecutive=0)]
            skips = self._skip_rate()
            if not skips and self.every_step:
                first_rec, run = min(self.every_step, key=lambda rr: rr[0].order)
                return [self.finding("fp16_overflow_skips", None, first_rec.step, first_rec.time, [first_rec.source],
                                     overflows=run, lowest_scale=None, every_step=True)]
            if not skips and self.recovered and not any(
                    rs.first_bad_loss or rs.first_bad_global for rs in self.st.ranks.values()):
                first_rec = min(self.recovered, key=lambda r: r.order)
                episodes = sum(rs.grad_episodes for rs in self.st.ranks.values() if rs.grad_recovered)
                # one early window of skipped steps is the scaler calibrating; windows that
                # keep coming back are overflows the run keeps paying for
                # (nor is one window that began only after the run had logged CALM_STEPS finite
                # grad norms: the scaler had been calm, these overflows are new, mid-run)
                calm = sum(1 for rs in self.st.ranks.values() for p in rs.samples
                           if p.order < first_rec.order and p.source.path == first_rec.source.path
                           and isinstance(g := p.data.get("grad_norm"), float) and math.isfinite(g))
                failure = "loss_scale_warmup" if episodes <= 1 and calm < CALM_STEPS else "fp16_overflow_skips"
                return [self.finding(failure, None, first_rec.step, first_rec.time, [first_rec.source],
                                     overflows=episodes, lowest_scale=None, recovered=True)]
            return skips
        real = [m for m in moves if not m.hysteresis]
        scales = [v for m in real for v in (m.to_scale, m.from_scale) if v is not None]
        lowest = min(scales) if scales else None
        steps = [m.step for m in real if m.step is not None]
        stuck = any(m.from_scale is not None and m.to_scale is not None and m.from_scale == m.to_scale for m in real)
        tail_run = _final_run(real)
        evidence = [m.source for m in (moves[:2] + moves[-3:] if len(moves) > 5 else moves)]
        first = moves[0] if moves else None
        last = moves[-1] if moves else None
        # the lowest scale any metric line logged: below 1 ("loss_scale 0.000", "grad scale 0")
        # the scaler is pinned under its floor
        logged = [rs.scale_min for rs in self.st.ranks.values() if rs.scale_min is not None]
        pinned = bool(logged) and min(logged) < 1
        every_step = _every_step_run(real)
        # the scaler had found a working scale, then overflows came back on every step and
        # drove it down again: not calibration (which never resumes), the gradients are growing
        resumed = every_step >= 5 and len(real) > every_step and lowest is not None and lowest <= 128
        # one unbroken run of LONG_RUN+ halvings that ends at 8 or less: the scaler fell through
        # every scale fp16 training works at without one clean window (stylegan2's 16384 → 2.0);
        # a shorter burst from a scale it had settled at (apex 512 → 2.0) is overflow skips
        long_fall = tail_run >= LONG_RUN and real[-1].to_scale is not None and real[-1].to_scale <= 8
        # a scale of 1 is DeepSpeed's and Megatron's floor (min_loss_scale 1) but not fairseq's (1e-4,
        # "--fp16-init-scale 4" runs start just above it): there, only a scale below 1 is the floor
        floor = 1.0 if self.ctx.get("framework") != "fairseq" else 0.5
        # the scale grew back after the streak's last halving, the loss finite all the while: the
        # scaler rode the overflows out (skips, not a scale stuck at its floor)
        # (from below the floor too, when it climbed far back: fairseq's start-up search down to
        # 0.25, then a logged 8 for the rest of the run, is a scaler that found its scale)
        grown_to = self._regrew_after(last, lowest) if lowest is not None and last is not None else None
        regrew = grown_to is not None and lowest is not None and (
            lowest > floor or (grown_to >= REGROWN_FACTOR * lowest and grown_to >= 2))
        if not regrew and lowest is not None and real:
            # or it climbed back from its lowest by two growth windows in a row (x4, to 2 or more),
            # the loss finite all the while, before the overflows that came after: the scaler rode
            # a rough patch out (fairseq 2 → 0.5 → 2 → 1 over thousands of updates), no floor held it
            bottom = min((m for m in real if m.to_scale == lowest), key=lambda m: m.order, default=None)
            back = self._regrew_after(bottom, lowest) if bottom is not None else None
            regrew = back is not None and back >= RODE_OUT_FACTOR * lowest and back >= 2
        # (every rank prints its copy of each report, DeepSpeed's "OVERFLOW! Rank 3 ..."; copies a
        # second apart are not told apart by their clocks when steps take milliseconds: the reports
        # per process that printed them count; DeepSpeed's hysteresis keeps the scale once, not
        # report after report)
        flat = [m for m in self.st.scale_moves if m.from_scale is not None and m.from_scale == m.to_scale]
        if (flat and not explicit and not pinned and len(flat) == len(self.st.scale_moves)
                and len({m.from_scale for m in flat}) == 1 and (level := flat[0].from_scale) is not None and level > floor):
            # the scale never moved: every back-off "reduces" it to where it was, well above the
            # framework's floor, and no descent led there (DeepSpeed's "Attempted loss scale: 128,
            # reducing to 128" under a static --loss-scale): not a scaler at its floor, a fixed
            # scale that keeps overflowing, each overflow a step thrown away
            writers = max(1, len(self.st.seen_global | self.st.seen_local))
            count = max(len(real), len(flat) // writers)
            if count < STATIC_OVERFLOWS:
                return out
            rank, rank_from, note = self._local_overflow_rank(None)
            static = self.finding("fp16_overflow_skips", rank, flat[0].step, flat[0].time,
                                  _uniq([flat[0].source, flat[-1].source] + ([note] if note else [])), overflows=count,
                                  lowest_scale=level, static_scale=level)
            if rank is not None:
                static.data["rank_from"] = rank_from
            return [static]
        if explicit or stuck or (pinned and not regrew) or (not regrew and (resumed or long_fall or (lowest is not None and lowest <= floor) or (
                lowest is not None and lowest <= 8 and every_step >= 3))):
            if explicit:
                evidence = evidence + [f.evidence[0] for f in explicit]
            run_start = real[-tail_run] if real and tail_run else last
            step = explicit[0].step if explicit else (run_start.step if run_start else None)
            begun = _descent_start(self.st.scale_moves)
            source, source_from = self._overflowing_rank(begun.step if begun is not None else None)
            if source is None:
                source, source_from, note = self._local_overflow_rank(begun.order if begun is not None else None)
                if source is None and run_start is not None:
                    # early overflows noted by several ranks; the final run down to the floor by one
                    source, source_from, note = self._local_overflow_rank(run_start.order)
                if note is not None:
                    evidence = [*evidence, note]
            extra: dict[str, Any] = {"rank_from": source_from} if source is not None else {}
            out.append(self.finding(
                "loss_scale_collapse", source, step, explicit[0].time if explicit else (last.time if last else None),
                _uniq(evidence), overflows=len(real), lowest_scale=lowest, stuck_at_minimum=stuck or bool(explicit),
                consecutive=tail_run, explicit=bool(explicit), **extra))
            return out
        trend = _spacing_trend(real)
        if self._overflow_rate_high(real):
            # the scaler grew back and overflowed again, cycle after cycle, on a large share of the
            # logged steps: not the start-up search (one descent) nor a scaler riding its edge
            # (one overflow per growth window of hundreds of steps): the run pays for the skips
            streak_start = _longest_run_start(real) or first
            rank, rank_from, note = self._local_overflow_rank(streak_start.order if streak_start else None)
            extra = {"rank_from": rank_from} if rank is not None else {}
            out.append(self.finding("fp16_overflow_skips", rank, first.step if first else None,
                                    first.time if first else None, evidence + ([note] if note else []),
                                    overflows=len(real), lowest_scale=lowest, consecutive=tail_run, trend=trend,
                                    **extra))
            return out
        tos = [m.to_scale for m in real if m.to_scale is not None and m.to_scale > 1]
        if len(tos) >= 3 and max(tos) <= 2 * min(tos) and len(tos) > len(set(tos)) > 1:
            # knocked back to the same scale again and again (65536, 65536, 32768, 65536): it
            # grew back in between, the dynamic scaler riding its edge; nothing to report
            return out
        last_steps = [rs.last_step for rs in self.st.ranks.values() if rs.last_step is not None]
        first_val = self.st.first_step_value
        rode_out = regrew and lowest is not None and lowest <= 1 and not self._startup_descent(real, floor=lowest)
        span = max(last_steps) - first_val if last_steps and first_val is not None else self._epoch_iter_span()
        if (real and span is not None and lowest is not None
                and span / len(real) >= (500 if lowest > 1 else RODE_OUT_SPACING if rode_out else math.inf)):
            # at most one overflow per 500 logged steps: the dynamic scaler's normal cycle (it
            # grows after a clean window and halves on the next overflow), nothing to report;
            # (also below 1, one per RODE_OUT_SPACING steps, when the scale climbed back from its
            # lowest mid-run: fairseq's window is 2^14 / workers updates, 128 on 128 GPUs; a descent
            # at the start that climbed back is the start-up search, told below as a note)
            return out
        # how far into training the overflows are: a step counter past the start, or a later
        # epoch (an excerpt may begin mid-run, so "before the first metric line" is not "early")
        first_val = self.st.first_step_value
        late = (bool(steps) and min(steps) > LATE_STEP) or (first_val is not None and first_val > LATE_STEP) or (
            self.st.max_epoch >= LATE_EPOCH)
        inits = _INITIAL_SCALES[None] | _INITIAL_SCALES.get(self.ctx.get("framework"), set())
        said = self.ctx.get("initial_scale")  # the run's own word for where its scaler started
        if isinstance(said, float):
            inits = inits | {said}
        head0 = real[0] if real else None
        start = None if head0 is None else head0.from_scale if head0.from_scale is not None else (
            head0.to_scale * 2 if head0.to_scale is not None else None)
        # calibration descends from the initial scale: ten halvings below it is not warm-up
        # (a DeepSpeed run overflowing at scale 32 in its first steps has a real problem)
        calibrating = start is None or start >= min(inits) / 1024
        # overflows that keep coming above the scaler's own starting scale: it had grown back over
        # many good steps, so this is not warm-up (one such overflow alone is the scaler probing)
        # (not when the overflows began before the run's first metric line and that line's step is
        # early: no scaler grows 2^16 → 2^24 within a few dozen steps, apex's window is 2000; the run
        # was configured to start higher, apex-style 2^24 → 2^18)
        first_logged_step = self.st.first_step_order
        searched_first = (bool(real) and first_logged_step is not None and real[0].order < first_logged_step
                          and self.st.first_step_value is not None and self.st.first_step_value <= LATE_STEP)
        # (or the first back-off came at one of the run's first FIRST_STEPS steps, by its own step or
        # the metric line logged with it: no scaler has grown over clean windows by then either)
        searched_first = searched_first or (bool(real) and real[0].step is not None and 0 <= real[0].step <= FIRST_STEPS
                                            and self.st.first_step_value is not None
                                            and self.st.first_step_value <= real[0].step)
        # (or, in a run that logs no step counter, before its first metric line of any kind, that
        # line still of the first epoch: "epoch 0 done: loss=572.6 scale=4096" after the descent)
        first_line = min((p for rs in self.st.ranks.values() for p in rs.samples), key=lambda p: p.order, default=None)
        searched_first = searched_first or (
            bool(real) and first_logged_step is None and first_line is not None and real[0].order < first_line.order
            and isinstance(e0 := first_line.data.get("epoch"), float) and 0 <= e0 < 1)
        grown = len(real) >= 2 and any(
            (initial := said if isinstance(said, float) else m.initial) is not None and start is not None and start > initial
            for m in real) and not searched_first
        # or a metric line had already logged the scale settled below its start before the
        # overflows came (guided-diffusion's table: lg_loss_scale 17.9 for a while, start 20):
        # the search was over, these overflows are new
        head = real[0] if real else None
        settled = head is not None and head.initial is not None and any(
            rs.scale_min_rec is not None and rs.scale_min is not None and rs.scale_min_rec.order < head.order
            and rs.scale_min < head.initial for rs in self.st.ranks.values())
        # or the run's own first logged scale was below the scale the overflows began from: the
        # scaler had grown over clean steps since (1024 logged at step 10, overflows from 8192)
        first_logged = min((p for rs in self.st.ranks.values() for p in rs.samples
                            if isinstance(p.data.get("loss_scale"), float) and math.isfinite(p.data["loss_scale"])),
                           key=lambda p: p.order, default=None)
        streak = 1
        while streak < len(real):
            now_to, prev_to = real[streak].to_scale, real[streak - 1].to_scale
            if now_to is None or prev_to is None or not now_to < prev_to or real[streak].from_scale not in (None, prev_to):
                break
            streak += 1
        # (not a row logged at the first back-off's own step: its scale is that back-off's result,
        # printed before the back-off's message, "1  2.3005  8388608.0  True" then "reducing loss
        # scale to 8388608.0", no level the scale had held before the overflows began)
        same_step = (head is not None and first_logged is not None and first_logged.step is not None
                     and head.step is not None and first_logged.step >= head.step)
        if (head is not None and start is not None and first_logged is not None and first_logged.order < head.order
                and not same_step and start > first_logged.data["loss_scale"] > 0 and streak >= MIDRUN_STREAK):
            grown = True  # (a streak: one halving per growth window is the scaler's normal cycle)
        if (head is not None and streak >= MIDRUN_STREAK
                and sum(1 for rs in self.st.ranks.values() for p in rs.samples
                        if p.order < head.order and p.source.path == head.source.path
                        and "loss" in p.data) >= CALM_STEPS):
            # the streak began only after the run had logged several steps with no overflow at
            # all: the scaler had been calm at its scale, these are new overflows mid-run
            grown = True
        if (grown and not settled and real and first_line is not None and streak == len(real) and self._held_after(real)
                and (self.st.first_step_value is None or self.st.first_step_value <= LATE_STEP)):
            # (one unbroken descent, every halving of it before the run's first metric line, and the
            # scale it reached then held through CALM_STEPS metric lines or more with no overflow:
            # nothing says the scaler had grown over clean steps before it (a run configured to start
            # high, "2^24 → 2^16" right after amp's banner); a burst the run then rode out is no
            # stream of skipped steps either way; not when the first metric line's own step is late:
            # step 40000 may follow a scaler that grew back over clean windows)
            grown = False
        if grown or settled:
            calibrating = False
            grown = True
        # a descent below the usual floor, that the scale then climbed far back from (fairseq's
        # 128 → 0.25 in its first minutes, then 8 for the rest of the run): the search too
        climbed = regrew and lowest is not None and lowest < STARTUP_FLOOR and self._startup_descent(real, floor=lowest)
        if not explicit and not grown and (self._startup_descent(real) or self._first_steps_then_clean(real) or climbed):
            out.append(self.finding("loss_scale_warmup", None, first.step if first else None,
                                    first.time if first else None, evidence, overflows=len(real),
                                    lowest_scale=lowest, trend=trend, startup_descent=True))
            return out
        early = bool(steps) and len(set(steps)) > 1 and max(steps) <= 200 and calibrating
        # one unbroken run of halvings down from the initial scale, no more than 9 of them
        # (2^32 → 2^24 in DeepSpeed's first seconds; apex's 2^16 → 64 in ten overflows right
        # after amp.initialize is no search, corpus holdout18 h18a-017), or ending at a scale fp16 training
        # commonly settles at (2^10 and above: 2^32 → 2^15 is 17 halvings in tacotron2's
        # fp16 optimizer): the scaler searching, whatever the spacing
        # (an excerpt may begin mid-descent: a run in the first 200 steps down to 2^10 or more)
        descent = (_final_run(real) == len(real) and lowest is not None and start is not None and (
            (start in inits and lowest >= min(start / 512, 1024))
            or (lowest >= 1024 and bool(steps) and max(steps) <= 200)))
        if not early and not late and real and (trend != "speeding" or descent) and not grown:
            # start-up: the moves begin at a framework's initial scale (2^16 torch/apex/
            # DeepSpeed, 2^32 DeepSpeed's initial_scale_power 32, 128 fairseq), or all of
            # them came before the first metric line that counts steps
            first_step = self.st.first_step_order
            early = (start in inits and trend is None and (lowest is None or lowest >= min(start / 512, 1024))) or descent or (
                first_step is not None and all(m.order < first_step for m in real))
        isolated = len(real) <= 3
        if trend == "speeding" and lowest is not None and lowest <= 128 and not regrew:
            run_start = real[-tail_run] if real and tail_run else last
            out.append(self.finding(
                "loss_scale_collapse", None, run_start.step if run_start else None, last.time if last else None,
                _uniq(evidence), overflows=len(real), lowest_scale=lowest, stuck_at_minimum=False,
                consecutive=tail_run, trend=trend))
            return out
        # the scaler calibrating: a high scale still, and overflows that thin out (or only a
        # few, or all in the first steps) — judged on the spacing, not on a count alone
        above_floor = lowest is None or lowest > 1
        if above_floor and not grown and (
                trend == "thinning" or early or (isolated and not late and (lowest is None or lowest >= 128))):
            out.append(self.finding("loss_scale_warmup", None, first.step if first else None,
                                    first.time if first else None, evidence, overflows=len(real),
                                    lowest_scale=lowest, trend=trend))
            return out
        if len(real) == 1 and getattr(real[0], "logged", False) and lowest is not None and lowest >= LONE_BACKOFF_FLOOR:
            # one back-off seen only in a metric line's scale column, to a scale still high, and
            # no other: the dynamic scaler probing (it doubles after a clean window and halves on
            # the first overflow after it, a cycle every few thousand steps). A framework's own
            # overflow message mid-run is reported (users act on those)
            return out
        # the one rank whose own gradients overflowed through the longest streak of back-offs on, if one did
        streak_start = _longest_run_start(real) or first
        rank, rank_from, note = self._local_overflow_rank(streak_start.order if streak_start else None)
        extra = {"rank_from": rank_from} if rank is not None else {}
        out.append(self.finding("fp16_overflow_skips", rank, first.step if first else None, first.time if first else None,
                                evidence + ([note] if note else []), overflows=len(real), lowest_scale=lowest,
                                consecutive=tail_run, **extra))
        return out

    def _startup_descent(self, real: list[ScaleMove], floor: float = STARTUP_FLOOR) -> bool:
        """The moves open with an unbroken run of halvings that stops at a scale fp16 trains at
        (``floor``: lower for a run whose scale then climbed far back from where the run stopped),
        at the start of the run, and hardly any come after it (see STARTUP_*)."""
        run = 1
        while run < len(real):
            a, b = real[run - 1], real[run]
            if a.to_scale is None or b.to_scale is None or b.to_scale >= a.to_scale or b.from_scale not in (None, a.to_scale):
                break
            run += 1
        end = real[run - 1].to_scale if real else None
        rest = real[run:]
        # a back-off from a scale the scaler had just grown back to (its growth line said so) is
        # its normal cycle, not more search: such moves are not counted against STARTUP_AFTER (a
        # high rate of them is caught before, see _overflow_rate_high)
        cycle = sum(1 for a, b in itertools.pairwise(real[run - 1:]) if a.to_scale is not None
                    and b.from_scale is not None and b.from_scale > a.to_scale)
        if run < STARTUP_RUN or end is None or end < floor or len(rest) - cycle > STARTUP_AFTER:
            return False
        if any(m.to_scale is None or m.to_scale < floor for m in rest):
            return False
        later = min((p.order for rs in self.st.ranks.values() for p in rs.samples
                     if (isinstance(p.data.get("epoch"), float) and p.data["epoch"] >= 1)
                     or (p.step is not None and p.step > LATE_STEP // 5)), default=math.inf)
        return all(m.order < later for m in real[:run])

    def _regrew_after(self, last: ScaleMove, lowest: float) -> float | None:
        """The highest scale a metric line logged after the last halving, when it is above the
        lowest one and every loss logged after it is finite; else None."""
        # (after it in the run, not only in reading order: the files of several ranks are read one
        # after another, and another rank's early lines come later in that order)
        after = [p for rs in self.st.ranks.values() for p in rs.samples if p.order > last.order
                 and (p.step is None or last.step is None or p.step > last.step)]
        scales = [v for p in after if isinstance(v := p.data.get("loss_scale"), float) and math.isfinite(v)]
        losses = [v for p in after if isinstance(v := p.data.get("loss"), float)]
        return max(scales) if scales and max(scales) > lowest and all(math.isfinite(v) for v in losses) else None

    def _first_steps_then_clean(self, real: list[ScaleMove]) -> bool:
        """Every overflow came within the first FIRST_STEPS logged steps of the run, and at least
        SPIKE_PASSED_AFTER finite metric lines followed with no other: the scaler found its scale
        from whatever the run set it to start at (fairseq's ``--fp16-init-scale 4``: 4 → 2 → 1)."""
        if not real or len(real) > STARTUP_AFTER + 1:
            return False
        samples = [p for rs in self.st.ranks.values() for p in rs.samples if p.step is not None]
        last = max(m.order for m in real)
        before = [p.step for p in samples if p.order < last and p.step is not None]
        after = [p for p in samples if p.order > last]
        losses = [p.data.get("loss") for p in after]
        return (bool(before) and max(before) <= FIRST_STEPS and len(after) >= SPIKE_PASSED_AFTER
                and all(isinstance(v, float) and math.isfinite(v) for v in losses if v is not None))

    def _held_after(self, real: list[ScaleMove]) -> bool:
        """Every back-off came before the first metric line, and CALM_STEPS metric lines or more
        logged the scale the last one reached (or one above it), with no back-off after them."""
        lines = sorted((p for rs in self.st.ranks.values() for p in rs.samples), key=lambda p: p.order)
        last = real[-1]
        if not lines or lines[0].order < last.order or last.to_scale is None:
            return False
        scales = [p.data.get("loss_scale") for p in lines]
        held = [v for v in scales if isinstance(v, float) and math.isfinite(v)]
        return len(held) >= CALM_STEPS and len(held) == len(scales) and min(held) >= last.to_scale

    def _overflow_rate_high(self, real: list[ScaleMove]) -> bool:
        """Overflows after the scale had grown back, again and again (REGROWTHS+ cycles), at a
        rate of one per 20 logged steps or more over a span of SPAN_STEPS+ steps (or of any
        length, with MANY_CYCLES+ of them)."""
        # (a back-off that names only its new scale, at or above the last one: "reduced to 512"
        # after "reduced to 256" backed off from 1024, the scale had grown back in between)
        grew = [i for i, (a, b) in enumerate(itertools.pairwise(real), 1)
                if a.to_scale is not None and ((b.from_scale is not None and b.from_scale > a.to_scale)
                                               or (b.from_scale is None and b.to_scale is not None
                                                   and b.to_scale >= a.to_scale))]
        if len(grew) < REGROWTHS:
            return False
        last_steps = [rs.last_step for rs in self.st.ranks.values() if rs.last_step is not None]
        first_val = self.st.first_step_value
        if not last_steps or first_val is None:
            # no metric line counts the steps (a paste of the overflow lines alone, ``grep overflow``,
            # or metric lines in a shape not read): the back-offs' own step numbers span the run
            own = [m.step for m in real if m.step is not None]
            if len(own) < len(real) or not own:
                return False
            last_steps, first_val = [max(own)], min(own)
        # the rate after the start-up search: from the first back-off after a regrowth on (the
        # unbroken descent from the initial scale is the scaler calibrating, counted apart)
        after = real[grew[0]:]
        begin = after[0].step if after[0].step is not None and after[0].step >= first_val else first_val
        span = max(last_steps) - begin
        return span > 0 and (span >= SPAN_STEPS or len(after) >= MANY_CYCLES) and len(after) / span >= HIGH_SKIP_RATE

    def _epoch_iter_span(self) -> float | None:
        """How many iterations the metric lines span when they count iterations per epoch and no
        step (GNMT's "TRAIN [3][840/1938]", HRNet's "Epoch: [19][300/7922]"): the epochs between
        the first and the last line times the longest epoch seen, plus the iterations within
        them; None without such lines (or with a step counter: see ``first_step_value``)."""
        pos = [(float(e), float(i)) for rs in self.st.ranks.values() for p in rs.samples
               if p.step is None and isinstance(e := p.data.get("epoch"), float) and isinstance(i := p.data.get("epoch_iter"), float)
               and math.isfinite(e) and math.isfinite(i)]
        if len(pos) < 2:
            return None
        per_epoch = max(i for _, i in pos) + 1
        first, last = min(pos), max(pos)
        return (last[0] - first[0]) * per_epoch + last[1] - first[1]

    def _scale_logged_dynamic(self) -> bool:
        """The logged loss scale is a dynamic scaler's, so 1 is far down its range rather than a
        constant: the job is fp16 (its own context says so) or its framework logs the scale
        only for fp16 with dynamic scaling. A static scale (``loss_scaling`` false) is no scaler."""
        if self.ctx.get("loss_scaling") is False:
            return False
        return self.ctx.get("precision") == "fp16" or self.ctx.get("framework") in _DYNAMIC_SCALE_LOGGERS

    def _skip_rate(self) -> list[Finding]:
        """DeepSpeed ``step=N, skipped=M``: a high skip rate after warm-up; or Megatron lines on
        which every iteration was skipped at a loss scale that never moves (``static_skips``)."""
        so = getattr(self.st, "static_overflows", None)
        if so is not None and so[2] >= STATIC_OVERFLOWS:
            # a static loss scale overflowing again and again: every such step is thrown away and the
            # scale never comes down to where the gradients fit
            rank, rank_from, note = self._local_overflow_rank(None)
            extra: dict[str, Any] = {"rank_from": rank_from} if rank is not None else {}
            return [self.finding("fp16_overflow_skips", rank, so[1], None, [so[0]] + ([note] if note else []),
                                 skipped=so[2], static_scale=True, **extra)]
        static = getattr(self.st, "static_skips", None)
        if static is not None:
            a, b = static
            return [self.finding("fp16_overflow_skips", None, a.step, a.time, [a.source, b.source],
                                 skipped=(b.step or 0) - (a.step or 0), steps=(b.step or 0) - (a.step or 0), rate=1.0,
                                 static_scale=b.data.get("loss_scale"))]
        if windowed := self._skip_windows():
            return windowed
        for rs in self.st.ranks.values():
            sk, its, lines, first, _ = getattr(rs, "interval_skips", (0, 0, 0, None, None))
            if first is not None and its >= SPAN_STEPS and lines >= SKIP_LINES and sk / its >= HIGH_SKIP_RATE:
                # Megatron's per-interval counts since the scale last came down: iterations still thrown
                # away, line after line, at a scale the scaler no longer lowers (its hysteresis forgives
                # overflows that do not come back to back): the run keeps paying for them
                last = rs.samples[-1] if rs.samples else first
                return [self.finding("fp16_overflow_skips", None, first.step, first.time, _uniq([first.source, last.source]),
                                     skipped=sk, steps=its, rate=round(sk / its, 3), intervals=True)]
        recs = [r for r in self.st.skip_samples if r.step]
        if len(recs) < 2:
            return []
        a, b = recs[0], recs[-1]
        dsteps = (b.step or 0) - (a.step or 0)
        dskip = b.data["skipped"] - a.data["skipped"]
        if dsteps >= 50 and dskip / dsteps > 0.05:
            return [self.finding("fp16_overflow_skips", None, a.step, a.time, [a.source, b.source],
                                 skipped=dskip, steps=dsteps, rate=round(dskip / dsteps, 3))]
        return []

    def _skip_windows(self) -> list[Finding]:
        """Summaries of the skipped share of the last steps ("skipped 17 of the last 50 steps"). The
        first may cover the scaler's start-up search; the later ones do not: two or more of them at
        HIGH_SKIP_RATE or above, or one summary of 2 * SPAN_STEPS+ steps past that rate (a run's
        closing tally, "68/300 optimizer steps skipped"), is a run paying for its skips."""
        windows = getattr(self.st, "skip_windows", [])
        later = [w for w in windows[1:] if w[0] / w[1] >= HIGH_SKIP_RATE]
        whole = [w for w in windows if w[1] >= 2 * SPAN_STEPS and w[0] / w[1] >= HIGH_SKIP_RATE]
        if len(later) < 2 and not whole:
            return []
        w = whole[0] if whole else later[0]
        return [self.finding("fp16_overflow_skips", None, None, None, _uniq([w[3]] + [x[3] for x in later[:2]]),
                             skipped=int(w[0]), steps=int(w[1]), rate=round(w[0] / w[1], 3), windows=len(windows))]

    def _local_overflow_rank(self, since: int | None) -> tuple[int | None, str | None, Source | None]:
        """The one rank that wrote notes of inf/NaN in its OWN gradients (from arrival order
        ``since`` on) in a job of several ranks: the overflow flag is all-reduced, so every rank
        skips the step, but the overflow came from that rank's batch. Any note whose rank is
        unknown, or notes from two ranks, name nobody."""
        notes = [n for n in getattr(self.st, "local_overflows", []) if since is None or n[3] >= since]
        if not notes:
            return self._overflow_printer(since)
        ranks = {self.resolve(n[0], n[1]) for n in notes}
        # (a rank numbered 1 or more is itself one of several)
        several = (len(self.st.seen_global | self.st.seen_local) > 1 or (self.world_size() or 0) > 1
                   or any(r is not None and r >= 1 for r in ranks))
        if len(ranks) != 1 or None in ranks or not several:
            return None, None, None
        return next(iter(ranks)), "local_overflow", notes[0][4]

    def _overflow_printer(self, since: int | None) -> tuple[int | None, str | None, Source | None]:
        """The one rank other than 0 that printed every overflow report of the job (one of
        them from arrival order ``since`` on) while its peers logged lines of their own: a job
        that logs a reduced signal from one rank logs it from rank 0; a rank that alone prints
        it reports its own view, where the overflow was found. Reports that name no printer, or
        two printers (per-rank files pasted one after the other: any of them), or only rank 0's
        (rank-zero-only logging), name nobody."""
        if getattr(self.st, "unprinted_overflow", None) is not None:
            return None, None, None
        found = getattr(self.st, "overflow_printers", {})
        if not any(since is None or last >= since for _, last, _ in found.values()):
            return None, None, None
        printers = {self.resolve(r, lr): src for (r, lr), (_, _, src) in found.items()}
        if len(printers) != 1 or None in printers:
            return None, None, None
        ((rank, src),) = printers.items()
        logged = {self.resolve(k[1], None) if k[0] == "g" else self.resolve(None, k[1])
                  for k in self.st.ranks if k and k[0] in ("g", "l")}
        others = (self.st.seen_global | {r for lr in self.st.seen_local if (r := self.resolve(None, lr)) is not None}
                  | logged) - {rank, None}
        if rank is None or rank < 1 or not others:
            return None, None, None
        return rank, "overflow_printer", src

    def _overflowing_rank(self, step: int | None) -> tuple[int | None, str | None]:
        """The one rank whose own logged loss went non-finite at the step the overflows began,
        while another rank logged a finite loss there: the overflow flag is all-reduced, so every
        rank skips, but the inf came from that rank's batch."""
        if step is None:
            return None, None
        bad: dict[int, str | None] = {}
        good: set[int] = set()
        for r, rs in self._ranked_series():
            fb = rs.first_bad_loss
            if fb is not None and fb.step == step:
                bad[r] = fb.data.get("rank_from")
            elif (fb is None or (fb.step is not None and fb.step > step)) and any(rec.step == step for rec in rs.samples):
                good.add(r)
        if len(bad) == 1 and good:
            return next(iter(bad.items()))
        return None, None

    def _spike_before_descent(self, spikes: list[Finding], scale: list[Finding]) -> bool:
        """A loss spike logged at a step before the loss scale's final descent began, with no
        calm between (the loss never came back near its level before the spike): the unbroken run of overflows that ends the
        logs (each move starting at the scale the one before left) started after the spike."""
        collapse = [f for f in scale if f.failure == "loss_scale_collapse" and f.role is Role.CAUSE]
        spike = min(spikes, key=lambda f: (f.step if f.step is not None else math.inf, f.order))
        descent = _descent_start(self.st.scale_moves)
        if not collapse or spike.step is None or descent is None:
            return False
        if descent.step is None or spike.step >= descent.step:
            return False
        probe = _copy(collapse[0])
        probe.step = descent.step
        return not self._recovered(spikes, [probe])

    def _recovered(self, spikes: list[Finding], numeric: list[Finding]) -> bool:
        """The loss came back down after the first spike (``CALM_AFTER_SPIKE`` logged values in a
        row within twice the level it spiked from) before the first non-finite value: the NaN is an event of its
        own, not the explosion's end. Judged on step numbers; without them the spike leads."""
        spike = min(spikes, key=lambda f: (f.step if f.step is not None else math.inf, f.order))
        nan = min(numeric, key=lambda f: (f.step if f.step is not None else math.inf, f.order))
        if spike.step is None or nan.step is None:
            return False
        for rs in self.st.ranks.values():
            if rs.spike is None or rs.spike.step != spike.step:
                continue  # not the series that spiked
            base = rs.spike.data.get("baseline_median")
            if not isinstance(base, (int, float)) or base <= 0:
                continue
            calm = 0
            for rec in rs.samples:
                if rec.step is None or not spike.step < rec.step < nan.step:
                    continue
                v = rec.data.get("loss")
                if isinstance(v, float) and math.isfinite(v) and v <= 2 * base:
                    calm += 1
                    if calm >= CALM_AFTER_SPIKE:
                        return True
                elif v is not None:
                    calm = 0
        return False

    # ----------------------------------------------------------------- launchers
    def exits(self, own: dict[int | None, list[Finding]]) -> list[Finding]:
        out: list[Finding] = []
        ds_kills = sum(1 for t in self.st.teardowns if t.data.get("reporter") == "deepspeed")
        agents = bool(self.st.seen_local or self.st.local_to_global) or any(
            str(e.data.get("reporter", "")).startswith(("torchrun", "deepspeed")) for e in [*self.st.exits, *self.st.teardowns])
        positive = [e for e in self.st.exits if e.data["exitcode"] > 0]
        # the exception text in the logs is a failure of the whole job (the loss scale
        # collapsed, every rank stops itself): a worker's exception exit is that, not its own
        job_cause = any(f.role is Role.CAUSE and self.cat[f.failure].rank_scope == "job" and f.failure not in _NUMERIC
                        for f in own.get(None, []))
        # an NCCL error the logs show without a rank: the workers' exception exits are that error
        # (often every rank's), and the launcher names the first to exit, not the one that failed first
        comm_cause = any(f.role is Role.CAUSE and f.failure in _COMM_FAILURES for f in own.get(None, []))
        # the same kind of error printed by one named rank (its tagged traceback) while the launcher
        # names another rank, whose own lines are not in the logs, as the first to fail: that rank
        # most likely died of the same communicator error (every member of a communicator sees a
        # system or remote error), so neither rank is known to have started it
        comm_ranked = [f for r, fs in own.items() if r is not None for f in fs
                       if f.role is Role.CAUSE and f.failure in _COMM_FAILURES]
        timed_out = any(f.failure == "collective_timeout" and not f.data.get("observed")
                        for fs in own.values() for f in fs)
        waiting: list[Event] = []  # exits whose own error was a consequence (see below)
        lone_abort = self._lone_abort()
        agent_exits = any(str(e.data.get("reporter", "")).startswith("torchrun") for e in self.st.exits)
        # torchrun's summary: 'Root Cause (first observed failure)' names the first failed worker;
        # the blocks under 'Failures:' (and those above it, cut from an excerpt) are the others
        claimed = any(e.data.get("root_cause") for e in self.st.exits)
        # a worker's pid as the summary names it with its global rank ("rank : 3 (local_rank: 1)",
        # "exitcode : -11 (pid: 19204)"): the agent's own "failed ... local_rank: 1 (pid: 19204)" line
        # is the same worker, whatever local rank 1 is on another node
        pid_rank = {e.data["pid"]: e.rank for e in self.st.exits if e.rank is not None and e.data.get("pid") is not None}
        for ev in self.st.exits:
            d = ev.data
            other = d.get("reporter") == "torchrun_summary" and not d.get("root_cause") and (claimed or d.get("other_failure"))
            code = d["exitcode"]
            rank = self.resolve(ev.rank if ev.rank is not None else pid_rank.get(d.get("pid")), d.get("local_rank"))
            step = ev.step
            if step is None and rank is not None:
                step = self.last_step(rank, d.get("local_rank"))  # it died after its last logged step (state is not touched)
            if not d.get("trusted") and ds_kills != 1:
                rank = None  # DeepSpeed names the last-started command, not the failed rank
            if d.get("reporter") == "srun" and agents:
                rank = None  # srun started one launcher per node: its task number is the node's, not a rank
                if agent_exits:
                    # that launcher exits because the worker failure it reported: its own end is teardown
                    out.append(self.finding("launcher_teardown", None, None, ev.time, [ev.source], role=Role.COLLATERAL,
                                            exitcode=code, signal=d.get("signal"), reporter="srun"))
                    continue
            sig = d.get("signal")
            kw = dict(exitcode=code, signal=sig, reporter=d.get("reporter"), local_rank=d.get("local_rank"),
                      root_cause_claimed=bool(d.get("root_cause")))
            if rank is not None and any(f.data.get("rank_from") != "launcher"
                                        or (f.failure in ("collective_timeout", "peer_connection_lost") and code > 0)
                                        for f in own.get(rank, [])):
                # the rank's own log already explains it (a launcher's own lines about it do not;
                # the timeout its summary quotes from the worker's error file does: the worker
                # raised it, and its exception exit is that): the exit is supporting evidence
                for f in own[rank]:
                    if f.role is Role.CAUSE:
                        f.evidence.append(ev.source)
                        break
                out.append(self.finding("launcher_teardown", rank, step, ev.time, [ev.source], role=Role.COLLATERAL, **kw))
                continue
            if other and not claimed:
                rank = None  # the first observed failure is not in these lines: the others do not name it
            if rank is not None:
                kw["rank_from"] = "launcher"
            if code > 0 and d.get("reporter") == "torch.multiprocessing.spawn" and self._error_below(ev) is Role.COLLATERAL:
                # spawn prints the first failed process's traceback below its notice: a timeout or a
                # lost peer there is that process waiting on another one, not a crash of its own
                waiting.append(ev)
                self.spawn_waiting.append(ev)
                out.append(self.finding("launcher_teardown", rank, step, ev.time, [ev.source], role=Role.COLLATERAL, **kw))
                continue
            by_code = self.exit_failures.get(code)
            if d.get("reporter") == "shell" and rank is None and self._ranks_went_on(ev.source):
                # the shell's "Killed" for a process that was none of the ranks: every rank logged
                # a line of its own after it (a helper the job killed in its cleanup, a sidecar)
                out.append(self.finding(by_code or "launcher_teardown", None, step, ev.time, [ev.source], role=Role.BENIGN,
                                        severity="info", helper_killed=True, **kw))
                continue
            if by_code is not None and not d.get("trusted", True) and any(
                    f.role is Role.CAUSE and f.data.get("frames") for fs in own.values() for f in fs):
                # an untrusted launcher line (DeepSpeed's "exits with return code = -11" names the last
                # process it spawned) beside a failure the lines show with its own traceback: a process
                # that died after it, not another cause
                out.append(self.finding("launcher_teardown", rank, step, ev.time, [ev.source], role=Role.COLLATERAL, **kw))
            elif by_code is not None:
                # another worker under 'Failures:' beside the one the summary calls the first
                # observed: the same death a moment later (two SIGBUS in one second) ranks behind it
                later = other and claimed and rank is not None
                out.append(self.finding(by_code, rank, step, ev.time, [ev.source],
                                        priority=self.cat[by_code].priority - 1 if later else None, **kw))
            elif code > 0 and (job_cause or comm_cause or (rank is None and comm_ranked)):
                # (an exit naming no rank, "srun: error: nid006742: tasks 32-33: Exited with exit
                # code 1", beside ranks' own communication errors: those ranks' exits)
                out.append(self.finding("launcher_teardown", rank, step, ev.time, [ev.source], role=Role.COLLATERAL, **kw))
            elif (code > 0 and timed_out and not own.get(rank if rank is not None else -1) and not other
                  and str(d.get("reporter", "")).startswith("torchrun")):
                # a watchdog timed a collective out while torchrun still ran every worker: had this
                # one crashed first, torchrun would have torn the others down within seconds, long
                # before any timeout. Its exit is the timeout's consequence (the exception it raises)
                out.append(self.finding("launcher_teardown", rank, step, ev.time, [ev.source], role=Role.COLLATERAL, **kw))
            elif code > 0 and rank is not None and comm_ranked and not own.get(rank) and not other and d.get("trusted", True):
                for f in comm_ranked:
                    f.data.setdefault("reported_by", f.rank)
                    f.rank = None
                out.append(self.finding("launcher_teardown", rank, step, ev.time, [ev.source], role=Role.COLLATERAL, **kw))
            elif code > 0:
                out.append(self.finding("rank_exception", rank, step, ev.time, [ev.source],
                                        priority=self.cat["rank_exception"].priority - (3 if other else 2), weak=True, **kw))
            elif ev is lone_abort:
                # one worker died of SIGABRT and no watchdog timeout explains it: it aborted itself
                out.append(self.finding("native_abort", rank, step, ev.time, [ev.source],
                                        priority=self.cat["rank_exception"].priority - 2, weak=True, **kw))
            elif sig in _COLLATERAL_SIGNALS or code in (-6, -15, -2, -1):
                out.append(self.finding("launcher_teardown", rank, step, ev.time, [ev.source], role=Role.COLLATERAL, **kw))
            elif code < 0:
                out.append(self.finding("rank_exception", rank, step, ev.time, [ev.source], **kw))
        killed = [t for t in self.st.teardowns if t.data.get("reporter") in ("torchrun", "deepspeed")]
        stopped = any(f.failure == "launcher_teardown" and "pid" not in f.data
                      and str(f.data.get("signal")).removeprefix("Signals.") in _OUTSIDE_STOPS
                      for fs in own.values() for f in fs)
        if killed and not self.st.exits and not stopped:
            # the launcher tears its workers down, so one of them failed; the line saying which and
            # how is not in these logs (an excerpt cut before it): the teardown is all there is
            first = min(killed, key=lambda t: t.data.get("order", 0))
            out.append(self.finding("launcher_teardown", None, None, first.time, [first.source], role=Role.COLLATERAL,
                                    reporter=first.data.get("reporter"), workers=len({t.data.get("pid") for t in killed})))
        # a failure whose lines name no rank (the kernel's or Slurm's OOM-killer report) and the one
        # rank a trusted launcher saw end the way that failure ends a process (SIGKILL): that rank
        for f in own.get(None, []):
            codes = _codes(f.data.get("ends_rank_with")) or self.cat[f.failure].ends_rank_with
            if f.role is not Role.CAUSE or f.rank is not None or not codes:
                continue
            ended = {self.resolve(e.rank, e.data.get("local_rank")) for e in self.st.exits
                     if e.data["exitcode"] in codes and e.data.get("trusted", True)}
            if len(ended) > 1:
                # several ended that way (the others aborted a moment later, "terminate called
                # without an active exception"): torchrun's first observed failure is the one
                observed = {self.resolve(e.rank, e.data.get("local_rank")) for e in self.st.exits
                            if e.data["exitcode"] in codes and e.data.get("root_cause")}
                ended = observed if len(observed) == 1 else ended
            if len(ended) == 1 and None not in ended:
                f.rank = ended.pop()
                f.data["rank_from"] = "launcher"
            elif not self.st.exits and (quiet := self._only_rank_without_own_report()) is not None:
                # no launcher said who ended so, but every other rank of the world printed its own
                # lost peer or timeout: the one that printed none is the one that aborted
                f.rank = quiet
                f.data["rank_from"] = "absence"
                f.data["inferred"] = True
        # untagged exception text + exactly one failed worker with a positive exit code (the agent's
        # "failed (exitcode: 1) local_rank: 2" and its summary's root cause are one worker, one pid)
        workers = {e.data.get("pid") if e.data.get("pid") is not None else (e.rank, e.data.get("local_rank"))
                   for e in positive}
        if len(workers) == 1 and len(positive) > 1 and all(e.data.get("trusted", True) for e in positive):
            positive = positive[:1]
        # (a worker listed under torchrun's 'Failures:' with the root cause cut from the excerpt is
        # not the first to fail: another worker was, and the lone error text may be that one's)
        if (len(positive) == 1 and positive[0].data.get("trusted", True) and positive[0] not in waiting
                and not (positive[0].data.get("other_failure") and not claimed)):
            # (an untrusted launcher line names the last-spawned worker, not the failed one)
            r = self.resolve(positive[0].rank, positive[0].data.get("local_rank"))
            local = positive[0].data.get("local_rank")
            # spawn prints the failed process's own traceback below its notice: an error text that
            # names another device than that process's is another process's. torchrun's agent line
            # and summary show no error of the worker's, and a device index is no rank (a script's
            # device map, remapped visible devices): the lone error text is the failed worker's
            own_error_shown = positive[0].data.get("reporter") == "torch.multiprocessing.spawn"
            # one NCCL error in the text (each of its lines once: the error and its detail line) is
            # that worker's; the same lines repeated are every rank's (the launcher names the first
            # to exit, not the first to fail)
            comm_lines = Counter(str(f.data.get("pattern")) for f in own.get(None, [])
                                 if f.role is Role.CAUSE and f.failure in _COMM_FAILURES)
            comm_one = bool(comm_lines) and max(comm_lines.values()) == 1
            # ... unless every member of the world aborted its communicator on it ("comm 0x… rank R
            # nranks N … Abort COMPLETE" from each): every rank saw the error, the job's
            ws = self.world_size()
            if comm_one and ws and 1 < ws <= len(self.st.aborted_ranks) and set(range(ws)) <= self.st.aborted_ranks:
                comm_one = False
            # the same exception printed by several processes (only object addresses differ): every
            # rank's own error, as when all of them fail on one config check; not that worker's alone
            exc_lines = Counter((f.data.get("exc_type"), _HEX.sub("0x?", str(f.data.get("message"))))
                                for f in own.get(None, []) if f.role is Role.CAUSE and f.failure == "rank_exception")
            exc_one = not exc_lines or max(exc_lines.values()) == 1
            if r is not None:
                for f in own.get(None, []):
                    if own_error_shown and f.data.get("gpu") is not None and local is not None and int(f.data["gpu"]) != local:
                        continue  # the message names another device than the failed worker's
                    if f.role is Role.CAUSE and ((f.failure == "rank_exception" and exc_one)
                                                 or f.failure in ("nonfinite_loss", "cuda_oom", "host_oom", "bf16_unsupported_gpu")
                                                 # a device fault a worker raised (torch.AcceleratorError)
                                                 or self.cat[f.failure].category == "hardware"
                                                 # any other failure raised as an exception (its
                                                 # traceback's frames above it), told once
                                                 or (bool(f.data.get("frames")) and exc_one and not f.data.get("job_scope")
                                                     and self.cat[f.failure].category != "distributed")
                                                 # (a line of the job's set-up, not of a process:
                                                 # no worker claims it, as no traceback does)
                                                 or (comm_one and f.failure in _COMM_FAILURES
                                                     and not f.data.get("job_scope"))):
                        f.rank = r
                        f.data["rank_from"] = "launcher"
        return out

    def _lone_abort(self) -> Event | None:
        """The launcher's report of the one worker that died of SIGABRT, when nothing else says why.

        The NCCL watchdog aborts a rank after a collective timeout, and then usually every rank of
        the collective aborts within a second (several -6 exits: teardown). One worker's abort with
        no timeout or NCCL error in the logs (other than a rank observing another's dump signal) is
        the crash."""
        aborts = [e for e in self.st.exits if e.data["exitcode"] == -6]
        workers = {e.data.get("pid") or (self.resolve(e.rank, e.data.get("local_rank")), e.data.get("local_rank"))
                   for e in aborts}
        if len(workers) != 1 or any(f.failure in ("collective_timeout", "nccl_error") and not f.data.get("observed")
                                    for f in self.st.findings):
            return None
        ev = aborts[0]
        pid = ev.data.get("pid")
        if pid is not None:
            # torchrun SIGTERMs the workers still running once one failed; a worker between them (the
            # agent starts its workers one after another) that it neither reports nor SIGTERMs had
            # already ended: more than one worker died, as after a timeout
            near = {int(t.data["pid"]) for t in self.st.teardowns if t.data.get("reporter") == "torchrun"
                    and t.data.get("pid") is not None and abs(int(t.data["pid"]) - int(pid)) <= _NEAR_PIDS} | {int(pid)}
            # (unless the launcher's summary gives each of them its local rank and those are
            # consecutive: workers are spawned in local-rank order, so no worker lies between two
            # with consecutive local ranks; the pid between was another process, not a worker)
            local = {int(e.data["pid"]): e.data.get("local_rank") for e in self.st.exits
                     if e.data.get("pid") is not None and e.data.get("local_rank") is not None}
            ranks = sorted(int(lr) for p in near if (lr := local.get(p)) is not None)
            accounted = len(ranks) == len(near) and ranks[-1] - ranks[0] + 1 == len(ranks)
            if max(near) - min(near) + 1 > len(near) and not accounted:
                return None
        return ev

    def _error_below(self, ev: Event) -> Role | None:
        """The role of the first failure read from the lines right below a launcher's exit notice
        (the traceback it prints there), if any."""
        path, line = ev.source.path, ev.source.line
        below = [f for f in self.st.findings if f.evidence and f.evidence[0].path == path
                 and 0 < f.evidence[0].line - line <= _SPAWN_TRACEBACK_LINES]
        # (an exception chained into a later one of the same traceback, "Caught OSError in
        # DataLoader worker process 0." above "The above exception was the direct cause of the
        # following exception:", is no wait of its own: the traceback's own error comes below it)
        own = [f for f in below if not (f.failure == "rank_exception" and f.role is Role.COLLATERAL) and not _own_reset(f)]
        return min(own or below, key=lambda f: f.evidence[0].line).role if below else None

    def teardown_collateral(self, initiator: int | None) -> list[dict[str, Any]]:
        """torchrun SIGTERMs every other worker of the node after one fails."""
        sigterms = [t for t in self.st.teardowns if t.data.get("reporter") == "torchrun"]
        failed = [e for e in self.st.exits if e.data.get("reporter") == "torchrun"]
        if not sigterms or len(failed) != 1 or initiator is None or self.st.multi_node:
            return []
        n = len({t.data["pid"] for t in sigterms}) + 1
        if initiator >= n:
            return []
        return [{"rank": r, "failure": "launcher_teardown", "step": None, "inferred": True}
                for r in range(n) if r != initiator]

    # ----------------------------------------------------------------- hangs
    def world_mismatch(self, fatal: list[Finding]) -> list[Finding]:
        """Every rank stated the world size it was given (``init_process_group(..., rank=2,
        world_size=4)``, a JSON ``"world_size"``), and one rank's differs from what all the others
        (two or more) said: that process was started with another configuration, so the group
        could not form and its set-up failed (a store wait for a member that does not exist, a
        gloo enforce). The job's failure is that rank's communication set-up, whatever timed out."""
        stated: dict[int, tuple[int, Source]] = getattr(self.st, "world_claims", None) or {}
        if len(stated) < 3 or not fatal or any(f.data.get("world_mismatch") for f in fatal):
            return []
        claims = {r: v for r, (v, _) in stated.items()}
        counts = Counter(claims.values())
        if len(counts) != 2:
            return []
        (common, n), (odd_value, m) = counts.most_common(2)
        if m != 1 or n < 2:
            return []
        odd = next(r for r, v in claims.items() if v == odd_value)
        causes = [f for f in fatal if f.role is Role.CAUSE]
        if any(self.cat[f.failure].hardware or f.failure in ("cuda_oom", "host_oom") for f in causes):
            return []  # a failure of its own came first: the configuration is a side note
        for f in fatal:
            if f.role is Role.CAUSE:
                f.role = Role.COLLATERAL
        own = [f.evidence[0] for f in sorted(fatal, key=lambda f: f.order) if f.rank == odd and f.evidence]
        return [self.finding("nccl_error", odd, None, None, [stated[odd][1], *own[:1]], rank_from="message", world_mismatch=True,
                             world_size_claimed=odd_value, world_size_others=common)]

    def hang(self, fatal: list[Finding]) -> list[Finding]:
        reporters = {f.rank for f in fatal if f.failure in ("collective_timeout", "peer_connection_lost")
                     and f.rank is not None and not f.data.get("observed")}
        if not reporters or any(f.failure == "rank_hang" and f.rank is not None for f in fatal):
            return []
        if self.st.exits and all(e.data.get("exitcode") == 0 for e in self.st.exits):
            # every worker a launcher reported on returned 0: the lost peers were the job's own
            # shutdown (the store's host leaving first), not a rank that died or hung
            return []
        if (not any(f.failure == "collective_timeout" for f in fatal) and not self.st.exits
                and self._every_rank_counted_to_end()):
            # every rank's last metric line counted its steps up to the total (step 50/50): the
            # lost peers came after the work was done, one rank leaving first at shutdown
            return []
        # a cause that outranks a hang, or a communication error a rank printed itself (it called the
        # collective wrongly or its transport failed: its peers wait on it, they do not hang)
        causes = [f for f in fatal if f.role is Role.CAUSE and not f.data.get("weak") and (
            f.priority > self.cat["rank_hang"].priority
            or (f.rank is not None and self.cat[f.failure].category == "distributed")
            # (gloo's own abort, "terminate called after throwing gloo::EnforceNotMet", whoever printed it)
            or (f.failure in _COMM_FAILURES and "gloo" in f.evidence[0].text.lower() if f.evidence else False))]
        if causes:
            return []
        speaking: set[int] = set()
        for key, rs in self.st.ranks.items():
            said = rs.n_samples or getattr(rs, "last_progress", None) is not None
            if key and key[0] == "g" and (said or key[1] in reporters):
                speaking.add(key[1])
            elif key and key[0] == "l":
                r = self.resolve(None, key[1])
                if r is not None and said:
                    speaking.add(r)
        known = (speaking | self.st.seen_global | {r for lr in self.st.seen_local if (r := self.resolve(None, lr)) is not None}
                 | self.noted_ranks(fatal, reporters))
        ws = self.world_size()
        # a rank that printed a traceback is dying of its own error, not hanging silently; one
        # whose NCCL communicator was aborted had seen an error too
        # nor is one the launcher saw exit with an error code: it raised (a hung rank is killed)
        raised = {r for e in self.st.exits if e.data["exitcode"] > 0
                  and (r := self.resolve(e.rank, e.data.get("local_rank"))) is not None}
        # (a rank whose only traceback ends in KeyboardInterrupt was stopped where it waited, Ctrl-C:
        # no error of its own, as silent about the hang as one that printed nothing)
        own_error = {f.rank for f in self.st.findings if f.rank is not None and f.role is not Role.BENIGN}
        stopped = {r for t in self.st.teardowns if t.data.get("interrupted") and t.data.get("reporter") == "self"
                   and (r := self.resolve(t.rank, t.local_rank)) is not None} - own_error
        candidates = sorted(known - reporters - (self.st.traceback_ranks - stopped) - self.st.aborted_ranks - raised)
        if ws and len(candidates) == 1 and len(known | reporters) < ws and ws <= 1024:
            # ranks of the world that never appear at all are as silent as the one it shows: no rank
            # is singled out (ranks 0, 2, 3 time out in a world of 8, rank 1 only in the launcher's
            # list of exits, 4-7 nowhere)
            candidates = []
        if ws and len(reporters) == 1 and 2 * len(known | reporters) < ws:
            # one timeout in an excerpt that shows fewer than half the world (one rank's NCCL setup
            # lines beside one report of 16 ranks): a rank it happens to show is no more silent than
            # those it does not
            candidates = []
        woken = self._woken_by_teardown(fatal, reporters)
        if woken is None and not candidates:
            woken = self._woken_apart(fatal, reporters, known, ws)
        if not candidates and woken is not None:
            candidates = [woken]
            reporters = reporters - {woken}  # its lost peer was the teardown's, not a report of the hang
        inferred = guessed_world = False
        if not ws:
            ws = self.spawn_world()  # spawn's failed and terminated processes: every process there was
        if not candidates and ws and len(reporters) == ws - 1:
            candidates = sorted(set(range(ws)) - reporters)
            inferred = True
        if not candidates and not ws:
            candidates = _absent_below(reporters)
            inferred = guessed_world = bool(candidates)
        if candidates and any(f.data.get("cut") for f in fatal if f.failure == "collective_timeout"):
            # the excerpt ends inside a timeout report (a paste cut mid-line): the reports that
            # followed are not in it, so a rank missing from them is not known to be silent
            candidates = []
        if candidates and _desynced(fatal):
            # the reporters wait in different collectives: the one absent from their reports is not
            # known to hold them all (a rank behind in sequence numbers, below, still is)
            candidates = []
        if not candidates:
            behind = _behind_in_sequence(fatal, reporters)
            candidates = [behind] if behind is not None else []
        stacked = None
        if not candidates and (stacked := self._timeout_stacks(fatal)) is not None:
            candidates = [stacked[0]]
        skipped = None
        if not candidates and (skipped := self._lone_skip(fatal, reporters)) is not None:
            candidates = [skipped[0]]
        if not candidates:
            return []
        # prefer ranks whose own last step is behind the reporters' steps
        def last_step(r: int) -> float:
            rs = self.st.ranks.get(("g", r))
            if rs is None or rs.last_step is None:
                lr = next((lr for lr, g in self.st.local_to_global.items() if g == r), r)
                rs = self.st.ranks.get(("l", lr))
            return rs.last_step if rs and rs.last_step is not None else -1

        def last_progress(r: int) -> float:
            """How far a rank's metric-less progress lines got (heartbeats, per-step notes)."""
            for key in (("g", r), ("l", next((lr for lr, g in self.st.local_to_global.items() if g == r), r))):
                rs = self.st.ranks.get(key)
                mark = getattr(rs, "last_progress", None) if rs is not None else None
                if mark is not None:
                    return float(mark)
            return -1

        from_progress = False
        apart: tuple[int, str, Source] | None = None
        if len(candidates) > 1:
            steps = {r: last_step(r) for r in candidates}
            lowest = min(steps.values())
            tied = [r for r in candidates if steps[r] == lowest]
            if len(tied) > 1 and lowest < 0:
                # no metric line says where they stopped: a heartbeat that stopped short does, when
                # every candidate printed one and exactly one is behind the rest
                marks = {r: last_progress(r) for r in tied}
                low = min(marks.values())
                short = [r for r in tied if marks[r] == low]
                if low >= 0 and len(short) == 1:
                    tied, from_progress = short, True
            if (len(tied) > 1 and any(f.failure == "collective_timeout" for f in fatal)
                    and (lag := self.lagging(known | reporters, ws)) is not None and lag[0] in tied):
                # level in steps and progress, but one of them last noted something its peers did not
                # (``running validation`` while they print ``epoch 1 done``): it went elsewhere, and
                # the collective its peers then timed out in waited for it
                tied, apart = [lag[0]], lag
            if len(tied) > 1 and (behind := _completed_far_behind(fatal, reporters)) is not None:
                # several silent ranks that nothing tells apart, but one reporter's own watchdog report
                # says its collectives stopped completing long before its peers' did: it stopped first
                tied = [behind]
                reporters = reporters - {behind}
            candidates = tied
            if len(candidates) != 1:
                return []
        r = candidates[0]
        st = last_step(r)
        timeouts = [f for f in fatal if f.failure == "collective_timeout"]
        first_to = min(timeouts, key=_sort_key) if timeouts else min(
            (f for f in fatal if f.rank in reporters), key=_sort_key)
        evidence = [first_to.evidence[0]]
        with_samples = [c for k in (("g", r), ("l", r)) if (c := self.st.ranks.get(k)) is not None and c.samples]
        if with_samples:
            evidence.insert(0, max(with_samples, key=lambda c: c.last_step_order).samples[-1].source)
        extra: dict[str, Any] = {"inferred": True, "world_guess": max(reporters) + 1} if guessed_world else {}
        if woken is not None and r == woken:
            extra["woken_by_teardown"] = True
        # no one timed out: the peers' sockets were closed under them, so the silent rank's process
        # is gone (a hung one keeps its sockets open and its peers time out): it died without a word
        # (one whose own KeyboardInterrupt traceback shows it was still running when the job was
        # stopped, in its own code before the collective its peers waited in, did not die: it hung)
        interrupted = any(t.rank == r and t.data.get("interrupted") for t in self.st.teardowns)
        died = not timeouts and woken is None and "rank_killed" in self.cat and not interrupted
        if died:
            extra["silent_death"] = True
        if from_progress:
            extra["behind_in_progress"] = True
        if apart is not None:
            extra.update(last_note=apart[1], last_note_line=apart[2].text)
            evidence.insert(0, apart[2])
        if stacked is not None:
            extra.update(stacks=stacked[1], stacks_from="timeout", rank_from="stacks")
        if skipped is not None:
            extra.update(skipped_batch=skipped[1].text, rank_from=skipped[2])
            evidence.insert(0, skipped[1])
        extra.setdefault("rank_from", "progress")
        return [self.finding("rank_killed" if died else "rank_hang", r, int(st) + 1 if st >= 0 else first_to.step, first_to.time, evidence,
                             last_step=int(st) if st >= 0 else None, reporters=sorted(reporters),
                             inferred_from_world_size=inferred, seq=first_to.data.get("seq"),
                             **extra)]

    def _lone_skip(self, fatal: list[Finding], reporters: set[int]) -> tuple[int, Source, str] | None:
        """Every rank timed out, and one of them alone had noted before the first timeout that it
        caught an error and skipped a batch (parsers/skips.py: ``skipping bad batch at step 33:
        Expected input batch_size (8) ...``): it left that step's collectives out while its peers
        ran them, so from then on the ranks waited in different collectives. That rank, its note
        and where the note's rank came from; None when no rank or several did, or a note's rank is
        not known."""
        timeouts = [f for f in fatal if f.failure in ("collective_timeout", "peer_connection_lost") and f.rank in reporters]
        if not timeouts or len(reporters) < 2:
            return None
        first = min(f.order for f in timeouts)
        skippers: dict[int, tuple[Source, str]] = {}
        for order, rank, local, how, src in getattr(self.st, "skipped_batches", []):
            if order >= first:
                continue
            r = self.resolve(rank, local)
            if r is None:
                return None  # (a note of no known rank may be any rank's)
            skippers.setdefault(r, (src, how or "message"))
        if len(skippers) != 1:
            return None
        ((r, (src, how)),) = skippers.items()
        return (r, src, how) if r in reporters else None

    def unnamed_wait(self, fatal: list[Finding]) -> list[Finding]:
        """Collectives (or the store's set-up barrier) timed out in reports that name no rank (a
        traceback with no rank tag, printed by every waiting rank alike), nothing else failed, and
        the one rank whose last own note stands apart from every other rank's (``lagging``: every
        rank of a known world has one) is the one they waited for: ``preparing dataset cache ...``
        while its peers printed ``dataset ready; init_process_group(gloo)``."""
        timeouts = [f for f in fatal if f.failure == "collective_timeout" and not f.data.get("observed")]
        if not timeouts or any(f.rank is not None for f in timeouts) or any(
                f.failure in ("rank_hang", "rank_killed") for f in fatal):
            return []
        if any(f.role is Role.CAUSE and not f.data.get("weak") for f in fatal):
            return []
        ws = self.world_size() or self.spawn_world()
        if not ws:
            return []
        known = set(self.st.seen_global) | {r for lr in self.st.seen_local if (r := self.resolve(None, lr)) is not None}
        lag = self.lagging(known, ws)
        if lag is None or lag[1] != "apart":
            # (a note with other numbers than its peers' need not be behind them with nothing else
            # to go by: a store address of its own, ``localhost:29511`` against ``:44131``)
            return []
        for f in fatal:
            if f.role is Role.CAUSE and f.data.get("weak"):
                # (a launcher's exit of a rank with no error of its own here: the timeouts were theirs)
                f.role = Role.COLLATERAL
        first = min(timeouts, key=_sort_key)
        return [self.finding("rank_hang", lag[0], self.last_step(lag[0]), first.time, [lag[2], first.evidence[0]],
                             rank_from="progress", last_note=lag[1], last_note_line=lag[2].text,
                             seq=first.data.get("seq"))]

    def noted_ranks(self, fatal: list[Finding], reporters: set[int]) -> set[int]:
        """The ranks whose last own note (JobState.last_notes: a line its prefix or tag names it
        in, a metric or not) came after a reporter's timeout in the same file: they were still
        running, and printing, while their peers had given up waiting in a collective
        (``rank 1: cache locked by another process, waiting (40s)`` below rank 0's gloo
        timeout)."""
        first: dict[str, int] = {}
        for f in fatal:
            if f.failure == "collective_timeout" and f.rank in reporters and f.evidence:
                src = f.evidence[0]
                first[src.path] = min(first.get(src.path, src.line), src.line)
        out: set[int] = set()
        for path, notes in getattr(self.st, "last_notes", {}).items():
            if path not in first:
                continue
            for (kind, n), (line, _, _) in notes.items():
                rank = n if kind == "g" else self.resolve(None, n) if kind == "l" else None
                if rank is not None and line > first[path]:
                    out.add(rank)
        return out

    def lagging(self, known: set[int], ws: int | None) -> tuple[int, str, Source] | None:
        """The one rank whose last own note stands apart from every other rank's last note
        (detectors.oddrank.``lagging_rank`` over each file's last lines: JobState.last_notes), with
        why ("apart", "behind") and its line; None when no one rank does, or when the notes do not
        cover every rank of the world (of ``ws`` ranks; every rank ``known`` to the job too):
        a rank whose last note is not there may be the one that stands apart."""
        last: dict[int, tuple[str, Source]] = {}
        for notes in getattr(self.st, "last_notes", {}).values():
            for (kind, n), (_, body, src) in notes.items():
                rank = n if kind == "g" else self.resolve(None, n) if kind == "l" else None
                if rank is not None:
                    last[rank] = (body, src)
        if not known <= last.keys() or (ws and set(range(ws)) != last.keys()):
            return None
        got = lagging_rank({r: body for r, (body, _) in last.items()})
        return (got[0], got[1], last[got[0]][1]) if got is not None else None

    def spared_by_teardown(self, fatal: list[Finding]) -> list[Finding]:
        """Every rank of a known world but one reports the launcher's SIGTERM reaching it (Paddle's
        per-worker ``Termination signal`` report, one file each) and nothing failed: the launcher
        tears the workers down when one has exited, so the one it did not have to stop is the
        one that ended first, without a word (its log just stops)."""
        if any(f.role is Role.CAUSE and not f.data.get("weak") for f in fatal) or any(
                f.failure in ("rank_hang", "rank_killed") for f in fatal):
            return []
        ws = self.world_size()
        torn = {f.rank for f in fatal if f.failure == "launcher_teardown" and f.role is Role.COLLATERAL
                and f.rank is not None}
        if not ws or ws > 1024 or len(torn) < 2 or len(torn) != ws - 1 or not torn <= set(range(ws)):
            return []
        spared = (set(range(ws)) - torn).pop()
        if any(f.rank == spared for f in fatal):
            return []
        first = min((f for f in fatal if f.failure == "launcher_teardown" and f.rank in torn), key=_sort_key)
        return [self.finding("rank_killed", spared, None, first.time, [first.evidence[0]], silent_death=True,
                             rank_from="absence", torn_down=sorted(torn))]

    def interrupted_stacks(self, fatal: list[Finding]) -> list[Finding]:
        """A job stopped from outside (Ctrl-C, a launcher's SIGINT) with no failure of its own:
        each worker's ``KeyboardInterrupt`` traceback is a stack sample taken at that moment
        (detectors.stacks). When every rank but one waits in the same collective and that one
        is somewhere else, it is the rank the others waited for: it hung. One process stopped
        while it waited on its data loader, a queue or a lock was stuck there (a warning: no
        peer to compare with). A job whose metric lines ran up to the stop was still making
        progress (a healthy run someone stopped): nothing. A hang watchdog's stack dumps
        (faulthandler, parsers/exceptions.py) are samples too; the exits with no exception of their
        own that follow them are the watchdog ending its process, not failures."""
        if any(f.failure == "rank_hang" and f.rank is not None for f in fatal) or any(
                f.role is Role.CAUSE and not f.data.get("weak") for f in fatal):
            return []
        samples: dict[int | None, tuple[Event, tuple[Any, ...]]] = {}
        unranked: list[tuple[Event, tuple[Any, ...]]] = []  # each process's sample that names no rank
        ranked = [rs for key, rs in self.st.ranks.items() if key is not None and rs.samples]
        for t in self.st.teardowns:
            raw = t.data.get("frames")
            if not t.data.get("interrupted") or not raw:
                continue
            if ranked and all(_stepped_past(rs, t.source) for rs in ranked):
                continue  # (every rank logged later steps after it: a watchdog's timed dump of a slow step)
            frames = decode_frames(raw)
            if frames and not is_launcher(frames):
                samples.setdefault(rank := self.resolve(t.rank, t.local_rank), (t, frames))
                if rank is None:
                    unranked.append((t, frames))
        if samples.keys() == {None} and len(unranked) >= 3 and (
                found := self._unranked_outlier(unranked)) is not None and not self._progressing_at(found[0].time):
            return [found[1]]
        if not samples or self._progressing_at(min(t.time for t, _ in samples.values() if t.time is not None)
                                               if any(t.time is not None for t, _ in samples.values()) else None):
            return []
        ranks = sorted(r for r in samples if r is not None)
        if len(ranks) >= 2:
            verdict = compare([RankStack(r, samples[r][1]) for r in ranks])
            if verdict.outlier is None:
                return []
            ev = samples[verdict.outlier][0]
            where = verdict.outlier_place.frames[0].text() if verdict.outlier_place and verdict.outlier_place.frames else None
            dumped = {r for r in ranks if samples[r][0].data.get("stack_dump")}
            for f in fatal:
                if f.failure == "rank_exception" and f.role is Role.CAUSE and f.data.get("weak") and f.rank in dumped:
                    # a positive exit with no exception of its own, from a rank whose watchdog had just
                    # dumped its stacks (faulthandler): the watchdog ended it, after the hang
                    f.role = Role.COLLATERAL
            return [self.finding("rank_hang", verdict.outlier, None, ev.time, [ev.source], rank_from="stacks",
                                 stacks=verdict.reason, waiting=list(verdict.waiting)[:64], where=where,
                                 last_step=self.last_step(verdict.outlier))]
        if len(samples) != 1 or self.world_size() not in (None, 1):
            return []
        rank = next(iter(samples))
        ev, frames = samples[rank]
        place = classify(frames)
        if place.kind not in (Where.DATALOADER, Where.QUEUE, Where.LOCK, Where.COLLECTIVE):
            return []
        return [self.finding("rank_hang", rank, None, ev.time, [ev.source], severity="warning",
                             rank_from="prefix" if rank is not None else None, stacks=f"interrupted in {place.name}",
                             where=place.frames[0].text() if place.frames else None, single=True)]

    def _unranked_outlier(self, unranked: list[tuple[Event, tuple[Any, ...]]]) -> tuple[Event, Finding] | None:
        """Stack samples of a stopped job that name no rank (faulthandler dumps of each worker at
        a scheduler's SIGTERM, printed with no prefix), one per process of the world: when every
        process but one waits in the same collective and that one is elsewhere, the job had hung.
        Which rank that was the dumps cannot say; the one rank whose last own note stands apart
        from its peers' (``loading next shard`` while they logged their step) can: it went
        elsewhere, and the others waited for it. Without such a note the hang names no rank."""
        ws = self.world_size() or self.spawn_world()
        if ws and len(unranked) != ws:
            return None
        verdict = compare([RankStack(i, frames) for i, (_, frames) in enumerate(unranked)])
        if verdict.outlier is None:
            return None
        ev = unranked[verdict.outlier][0]
        lag = self._stopped_apart()
        rank = lag[0] if lag is not None and lag[1] == "apart" else None
        where = verdict.outlier_place.frames[0].text() if verdict.outlier_place and verdict.outlier_place.frames else None
        evidence = [ev.source] + ([lag[2]] if lag is not None and rank is not None else [])
        return ev, self.finding("rank_hang", rank, self.last_step(rank) if rank is not None else None, ev.time, evidence,
                                rank_from="progress" if rank is not None else None, where=where,
                                stacks=f"one of {len(unranked)} unnamed processes was elsewhere", samples_unranked=True)

    def _counted_to_end(self) -> bool:
        """The job's last metric line counts its step up to its total (``step 200/200``,
        ``iter 5000/5000``): the run trained to its planned end."""
        last = max((rs.samples[-1] for rs in self.st.ranks.values() if rs.samples), key=lambda r: r.order, default=None)
        if last is None or last.step is None:
            return False
        return any(int(a) == int(b) == int(last.step) for a, b in _STEP_OF_TOTAL.findall(last.source.text))

    def _every_rank_counted_to_end(self) -> bool:
        """Two ranks or more, and each one's last metric line counts its step up to its total."""
        lasts = [rs.samples[-1] for key, rs in self.st.ranks.items() if key is not None and rs.samples]
        return len(lasts) >= 2 and all(
            last.step is not None and any(int(a) == int(b) == int(last.step) for a, b in _STEP_OF_TOTAL.findall(last.source.text))
            for last in lasts)

    def stalled_before_stop(self, fatal: list[Finding]) -> list[Finding]:
        """A launcher stopped by a signal from outside (``Received 15 death signal``: a scheduler's
        time limit, someone's kill) after the ranks' metric lines had stopped for far longer than
        they used to come: the job had hung, and whoever stopped it saw that. Judged only when
        every rank's metric lines carry times and the stop does too; the rank named is the one
        whose last line was behind the others'."""
        if any(f.failure == "rank_hang" for f in fatal) or any(
                f.role is Role.CAUSE and not f.data.get("weak") for f in fatal):
            return []
        signalled = [f for f in fatal if f.failure == "launcher_teardown" and f.data.get("signal") and f.rank is None]
        stops = [f for f in signalled if f.time is not None]
        ranks = {k: rs for k, rs in self.st.ranks.items() if rs.samples}
        clocked = (bool(ranks) and sum(len(rs.samples) for rs in ranks.values()) >= STALL_MIN_LINES
                   and all(rs.samples[-1].time is not None for rs in ranks.values()))
        if not clocked or not stops:
            return self._stopped_unjudged(signalled, ranks, clocked)
        stop = min(stops, key=lambda f: f.order)
        last = max(rs.samples[-1].time for rs in ranks.values() if rs.samples[-1].time is not None)
        gaps = sorted(b - a for rs in ranks.values()
                      for a, b in itertools.pairwise(s.time for s in rs.samples if s.time is not None) if b > a)
        # (lines within one second of each other, at the clock's resolution: a cadence under a second)
        usual = gaps[len(gaps) // 2] if gaps else 0.0
        if stop.time is None:
            return []
        if stop.time - last < max(STALL_MIN_SECONDS, STALL_FACTOR * usual):
            # too short a silence to call by itself (a checkpoint written while someone stopped
            # the job), unless it was STALL_FACTOR times the cadence and one rank went on printing
            # a note of its own after every metric line, apart from its peers' last lines (a
            # retry loop: "record 1829 failed checksum, retrying (attempt 33177256)"): it went
            # elsewhere, and the others waited for it
            # (the cadence over each rank's whole series: a clock printed to the second makes every
            # gap inside a second look like none)
            spans = [(t1 - t0) / (len(rs.samples) - 1) for rs in ranks.values() if len(rs.samples) >= 4
                     and (t0 := rs.samples[0].time) is not None and (t1 := rs.samples[-1].time) is not None and t1 > t0]
            cadence = min([usual, *spans]) if usual > 0 else min(spans, default=0.0)
            apart = self._stopped_apart() if cadence > 0 and stop.time - last >= STALL_FACTOR * cadence else None
            newest = max((rs.samples[-1].source for rs in ranks.values()), key=lambda s: (s.path, s.line))
            if apart is None or apart[2].path != newest.path or apart[2].line <= newest.line:
                return []
            return [self.finding("rank_hang", apart[0], self.last_step(apart[0]), stop.time, [apart[2], stop.evidence[0]],
                                 severity="warning", rank_from="progress", last_note=apart[1],
                                 last_note_line=apart[2].text, stalled_seconds=round(stop.time - last, 1),
                                 usual_seconds=round(usual, 3), stopped_from_outside=True)]
        behind = self._behind(ranks)
        src = max((rs.samples[-1] for rs in ranks.values()), key=lambda r: r.order).source
        return [self.finding("rank_hang", behind, self.last_step(behind) if behind is not None else None, stop.time,
                             [src, stop.evidence[0]], rank_from="progress" if behind is not None else None,
                             stalled_seconds=round(stop.time - last, 1), usual_seconds=round(usual, 3),
                             stopped_from_outside=True)]

    def _behind(self, ranks: dict[RankKey, RankState]) -> int | None:
        """The one rank whose last metric line is behind every other rank's (by step, by progress
        counter, or by epoch then batch), else None."""
        where: dict[int, tuple[float, ...]] = {}
        for k, rs in ranks.items():
            mark = rs.last_step if rs.last_step is not None else rs.last_progress
            noted = getattr(rs, "last_progress", None)
            if mark is not None and noted is not None and mark < noted < EPOCH_WEIGHT:
                mark = noted  # a note of the step it began ("step_begin 23") after its last metric line
            if k is not None and k[0] == "g" and mark is not None:
                where[k[1]] = (float(mark),)
        if len(where) < 2:
            # per-epoch counters ("Epoch 2 [20/31]"): the epoch, then the batch within it
            where = {k[1]: (float(d["epoch"]), float(d["epoch_iter"])) for k, rs in ranks.items()
                     if k is not None and k[0] == "g" and "epoch" in (d := rs.samples[-1].data) and "epoch_iter" in d}
        if len(where) > 1 and len(set(where.values())) > 1:
            low = min(where.values())
            lows = [r for r, v in where.items() if v == low]
            return lows[0] if len(lows) == 1 else None
        if len(where) > 1:
            # every rank but one got as far as a step or a counter, and that one (a rank the job
            # has: its world, or a line of its own) never logged one: it is the one behind
            world = self.world_size()
            members = set(range(world)) if world and world <= 1024 else set(self.st.seen_global)
            silent = members - set(where)
            if len(silent) == 1 and set(where) <= members:
                return next(iter(silent))
        return None

    def _stopped_unjudged(self, signalled: list[Finding], ranks: dict[RankKey, RankState],
                          clocked: bool) -> list[Finding]:
        """The job was stopped from outside: its launcher received SIGTERM or SIGINT (``Received
        15 death signal``, ``SignalException: ... got signal: 2``) or a process printed a
        ``KeyboardInterrupt`` traceback (Ctrl-C), no rank had failed, and no clock tells how long
        the metric lines had been silent (they carry no time, there are too few of them, or the
        stop has none). Jobs are stopped from outside before their end when they no longer make
        progress (a scheduler's time limit says so in its own line and is left to it): a
        ``warning`` rank_hang, naming the rank whose last line was behind the others' if one was.
        A job that printed its end-of-training summary had not hung; one whose clocked metric
        lines still came at a timed interrupt was making progress."""
        scheduled = any(f.data.get("reason") or f.data.get("cancelled") for f in self.st.findings
                        if f.failure == "launcher_teardown")
        received = [f for f in signalled if "pid" not in f.data
                    and str(f.data.get("signal")).removeprefix("Signals.") in _OUTSIDE_STOPS]
        ranked = [rs for key, rs in self.st.ranks.items() if key is not None and rs.samples]
        # (a stack dump every rank logged later steps after was no stop: a watchdog's timed dump
        # of a slow step, faulthandler.dump_traceback_later without exit)
        interrupts = [t for t in self.st.teardowns if t.data.get("interrupted")
                      and not (ranked and all(_stepped_past(rs, t.source) for rs in ranked))]
        if (not received and not interrupts) or self.st.trained_to_end or self._counted_to_end():
            return []
        if clocked and any(self._progressing_at(t.time) for t in interrupts if t.time is not None):
            return []
        if any(f.time is not None and self._progressing_at(f.time) for f in received):
            # the launcher's own stop is timed and timed metric lines of some rank still came right
            # before it (DeepSpeed's step lines 4 s before "Main process received SIGINT"): running
            return []
        if any(_computing(t) for t in interrupts):
            # interrupted while it computed or wrote: it was running, not stuck (one interrupted in
            # a socket read waited on the other end: a display or logging server's answer that
            # never came, corpus h28a-008's visdom post, wandb/wandb#3223's stalled loop)
            return []
        evidence: list[Source] = []
        if ranks:
            evidence.append(max((rs.samples[-1] for rs in ranks.values()), key=lambda r: r.order).source)
        first = min([(f.order, f.evidence[0], f.time) for f in received if f.evidence]
                    + [(int(t.data.get("order", 0) or 0), t.source, t.time) for t in interrupts], key=lambda x: x[0])
        evidence.append(first[1])
        # (ranks that logged only progress notes, "rank 1 step 0: backward done", count too)
        behind = self._behind({k: rs for k, rs in self.st.ranks.items()
                               if rs.samples or getattr(rs, "last_progress", None) is not None})
        apart = self._stopped_apart() if behind is None else None
        if apart is not None:
            behind = apart[0]
            evidence.insert(0, apart[2])
        if scheduled and behind is None:
            # the scheduler said why it stopped the job (scancel, its time limit) and no rank was
            # behind the others: no hang is guessed from the stop
            return []
        extra: dict[str, Any] = {"last_note": apart[1], "last_note_line": apart[2].text} if apart is not None else {}
        return [self.finding("rank_hang", behind, self.last_step(behind) if behind is not None else None, first[2],
                             evidence, severity="warning", rank_from="progress" if behind is not None else None,
                             # a guess from the stop alone: any failure the lines show outranks it
                             priority=1, stopped_from_outside=True, unclocked=True, **extra)]

    def _stopped_apart(self) -> tuple[int, str, Source] | None:
        """A job stopped from outside with no rank behind in steps: the one rank whose last own
        note stands apart from its peers' (``lagging``: every rank of the world has one) is the one
        the others waited for (``event=batch_ready`` while they logged ``event=grad_sync_begin``)."""
        known = set(self.st.seen_global) | {r for lr in self.st.seen_local if (r := self.resolve(None, lr)) is not None}
        return self.lagging(known, self.world_size() or self.spawn_world())

    def _timeout_stacks(self, fatal: list[Finding]) -> tuple[int, str] | None:
        """Every rank timed out: the tracebacks of their timeouts are stack samples (a blocking
        gloo or NCCL wait raises in the collective the rank was in). The one rank in another
        collective than the one the others wait in is the one they waited for."""
        samples: dict[int, tuple[Any, ...]] = {}
        for f in sorted(fatal, key=lambda f: f.order):
            raw = f.data.get("frames")
            if (f.failure in ("collective_timeout", "peer_connection_lost") and f.rank is not None
                    and (frames := decode_frames(raw))):
                samples.setdefault(f.rank, frames)
        if len(samples) < 2:
            return None
        verdict = compare([RankStack(r, fr) for r, fr in sorted(samples.items())])
        return (verdict.outlier, verdict.reason) if verdict.outlier is not None else None

    def _progressing_at(self, stop: float | None) -> bool:
        """Whether the ranks' metric lines were still coming at ``stop`` (a log time): the last one
        within max(10 s, 5 x the usual time between two of them). Unknown (no times): False."""
        launcher = [t.time for t in self.st.teardowns if t.time is not None and t.data.get("reporter") != "self"]
        if launcher:
            stop = min(launcher) if stop is None else min(stop, *launcher)
        if stop is None:
            return False
        last: float | None = None
        gaps: list[float] = []
        for rs in self.st.ranks.values():
            times = [s.time for s in rs.samples if s.time is not None]
            gaps += [b - a for a, b in itertools.pairwise(times) if b > a]
            if times:
                last = times[-1] if last is None else max(last, times[-1])
        if last is None or last > stop:
            return False
        gaps.sort()
        usual = gaps[len(gaps) // 2] if gaps else 0.0
        return stop - last < max(10.0, 5 * usual)

    def _woken_by_teardown(self, fatal: list[Finding], reporters: set[int]) -> int | None:
        """The one rank whose only report is a lost peer that came after it said it received the
        launcher's SIGTERM, while the others timed out: it sat silent in its hang until the
        teardown woke it (Lightning catches SIGTERM, so the hung rank then meets closed sockets)."""
        got = {r: (int(t.data["order"]), t.source.path) for t in self.st.teardowns
               if t.data.get("reporter") == "self" and (r := self.resolve(t.rank, t.local_rank)) is not None}
        if not got:
            return None
        woken = []
        for r in sorted(reporters & got.keys()):
            order, path = got[r]
            own = [f for f in fatal if f.rank == r and f.failure in ("collective_timeout", "peer_connection_lost")]
            # (its own file tells the order; a launcher's summary restates the error elsewhere)
            here = [f for f in own if f.evidence[0].path == path]
            if here and all(f.failure == "peer_connection_lost" for f in own) and all(f.order > order for f in here):
                woken.append(r)
        timed_out = {f.rank for f in fatal if f.failure == "collective_timeout" and f.rank not in woken}
        return woken[0] if len(woken) == 1 and timed_out else None

    def _woken_apart(self, fatal: list[Finding], reporters: set[int], known: set[int], ws: int | None) -> int | None:
        """The one rank whose only report is a lost peer, printed after its peers' collective
        timeouts (two or more, every other reporter's report a timeout), whose last own note
        before it stands apart from every peer's (``step 12: refreshing shard cache (acquiring
        ...lock)`` while they print ``step 11 loss 0.36``): it was elsewhere while they waited,
        and met closed sockets once they gave up and exited. Its lost peer is their exit, not a
        report of waiting."""
        timeouts = [f for f in fatal if f.failure == "collective_timeout" and f.rank in reporters]
        timed = {f.rank for f in timeouts}
        lost = {f.rank for f in fatal if f.failure == "peer_connection_lost" and f.rank in reporters} - timed
        if len(lost) != 1 or len(timed) < 2 or reporters != timed | lost:
            return None
        (r,) = lost
        first = min(f.order for f in timeouts)
        if any(f.order < first for f in fatal if f.rank == r and f.failure == "peer_connection_lost"):
            return None  # (it lost its peer before anyone timed out: a death it saw, not their exit)
        lag = self.lagging(known | reporters, ws)
        return r if lag is not None and lag[0] == r and lag[1] == "apart" else None

    def absent_from_sync(self, fatal: list[Finding]) -> list[Finding]:
        """Ranks report reaching a sync point (a store barrier's waiters, Horovod's ready
        ranks): the one rank of [0, world) absent from every report is the one they wait for.

        The world is what the reports state, else the job's world size, else (inferred) the
        smallest one the named ranks fit in. A wait still within its timeout is only an
        ``info`` finding: healthy start-ups wait too. It is critical once it timed out (a
        collective timeout in the logs), outlasted the timeout it states, or the speaker
        itself called it a stall. A sync point passed (released, or training progress after
        it) names no one.
        """
        points = [sp for sp in self.st.sync_points.values()
                  if not any(rs.last_step_order > sp.last_order for rs in self.st.ranks.values())]
        if any(sp.foreign for sp in points):
            return []
        if not points:
            return []
        missing: set[frozenset[int]] = set()
        # the smallest world every named rank fits in
        # (and every rank the job's own lines showed: a rank that logged steps and then fell silent)
        guess = max(max(max(sp.ranks | getattr(sp, "absent", set())) for sp in points),
                    max(self.st.seen_global, default=-1)) + 1
        inferred = False
        world = guess
        for sp in points:
            listed: set[int] = getattr(sp, "absent", set())
            if listed and not sp.ranks:
                missing.add(frozenset(listed))  # the report names who is missing: no world needed
                continue
            world = sp.world or self.world_size() or 0
            if not world:
                world, inferred = guess, True
            if max(sp.ranks | listed) >= world:
                return []  # ranks of another group than the world stated: cannot tell
            missing.add((frozenset(range(world)) - sp.ranks) | frozenset(listed))
        if len(missing) > 1:
            # the reports disagree: one rank may still stand apart from all the others at every
            # sync point (the only one missing, or the only one there: it submitted something
            # else), as when one rank runs a different collective
            world = max(world, guess)
            everyone = frozenset(range(world))
            odd = [r for r in range(min(world, 1 << 16)) if all(m == {r} or m == everyone - {r} for m in missing)]
            first = _first_stall_report(self.st.missing_lists)
            # else the ranks wait in different places (Horovod listing each rank with tensors the
            # others submitted): still a stall, with no one rank to name
            missing = ({frozenset(odd)} if len(odd) == 1 and world >= 3 else {first} if first
                       else {frozenset().union(*missing)})
        if not (absent := next(iter(missing))):
            return []  # no rank is absent
        rank = next(iter(absent)) if len(absent) == 1 else None  # several absent: none of them is named
        head = min(points, key=lambda sp: sp.order)
        outlasted = any(sp.timeout is not None and sp.first_time is not None and sp.last_time is not None
                        and sp.last_time - sp.first_time >= sp.timeout for sp in points)
        timed_out = any(f.failure == "collective_timeout" for f in fatal)
        # the wait ended in an error: a traceback, a failure or a launcher exit after the last report
        last = max(sp.last_order for sp in points)
        ended = self.st.last_traceback_order > last or any(f.order > last and f.role is Role.CAUSE for f in fatal)
        stalled = any(sp.stalled for sp in points) or outlasted or timed_out or ended
        return [self.finding("rank_hang", rank, None, head.first_time, [head.source], severity=None if stalled else "info",
                             rank_from="absence", inferred=inferred, present=sorted(head.ranks)[:64],
                             absent=sorted(absent)[:64], stalled=stalled)]

    # ----------------------------------------------------------------- assembly
    def claim_spawn_blocks(self, base: list[Finding]) -> None:
        """torch.multiprocessing.spawn prints the failed process's traceback below its notice
        ("-- Process 1 terminated with the following error:"): a rankless timeout or lost peer
        that ends that traceback is the process's own report (the tagged block it belongs to)."""
        for ev in self.spawn_waiting:
            rank = self.resolve(ev.rank, ev.data.get("local_rank"))
            below = [f for f in base if f.evidence and f.evidence[0].path == ev.source.path and f.rank is None
                     and 0 < f.evidence[0].line - ev.source.line <= _SPAWN_TRACEBACK_LINES]
            if rank is None or not below:
                continue
            first = min(below, key=lambda f: f.evidence[0].line)
            if first.failure in ("collective_timeout", "peer_connection_lost") and not first.data.get("observed"):
                first.rank = rank
                first.data["rank_from"] = "block"

    def spawn_world(self) -> int | None:
        """The process count torch.multiprocessing.spawn shows when it stops a job: the processes
        it reports failed plus those it then terminated (each once)."""
        failed = {e.data.get("local_rank") for e in self.st.exits if e.data.get("reporter") == "torch.multiprocessing.spawn"}
        stopped = {t.data.get("pid") for t in self.st.teardowns if t.data.get("reporter") == "torch.multiprocessing.spawn"}
        return len(failed) + len(stopped) if failed and stopped else None

    def setup_failures(self, base: list[Finding]) -> None:
        """A lost peer raised through process-group set-up (``init_process_group``, the rendezvous,
        the store: the traceback's frames say so) while nothing else failed: no peer had failed
        yet, so the connection itself failed (a firewall, a wrong address or interface, a store
        that went away): the communication set-up is the failure, not a consequence."""
        if any(f.role is Role.CAUSE and not f.data.get("setup") for f in base):
            return
        if any(f.role is Role.CAUSE and f.failure in _COMM_FAILURES and not f.data.get("observed") for f in base):
            return  # set-up failed with an error of its own (a CUDA or system error in NCCL): the peers lost it
        for f in base:
            if f.failure == "peer_connection_lost" and f.data.get("setup"):
                f.failure, f.role, f.priority = "nccl_error", Role.CAUSE, self.cat["nccl_error"].priority

    def scaling(self) -> bool:
        """Whether a dynamic loss scaler is at work in the job (said in its config, or seen moving)."""
        return bool(self.ctx.get("loss_scaling") or self.st.scale_moves
                    or any(rs.dynamic_scale for rs in self.st.ranks.values()))

    def run(self) -> list[Incident]:
        st = self.st
        own: dict[int | None, list[Finding]] = {}
        base = [_copy(f) for f in st.findings]
        if self.scaling():
            # a writer's non-finite value under a dynamic loss scaler: the scaler's overflow steps
            base = [f for f in base if not f.data.get("scaled")]
        self.setup_failures(base)
        if (self.st.exits and all(e.data.get("exitcode") == 0 for e in self.st.exits)) or (
                not self.st.exits and self._every_rank_counted_to_end()
                and not any(f.failure == "collective_timeout" for f in base)):
            # every worker a launcher reported on returned 0, or every rank's last metric line had
            # counted its steps to the total: a lost peer was the job's own shutdown (the store's
            # host leaving first: the heartbeat's "recvValue failed ... Connection reset")
            for f in base:
                if f.failure == "peer_connection_lost" and f.role is Role.COLLATERAL:
                    f.role = Role.BENIGN
                    f.data["clean_exit"] = True
        if self.ctx.get("srun_node_tasks"):
            _untask(base)
        for f in base:
            if f.data.get("rank_from") == "nccl_tree":
                f.data["inferred"] = True  # a communicator's rank (see JobParseState.tree_procs)
            if f.rank is None and "local_rank" in f.data:
                f.rank = self.resolve(None, f.data["local_rank"])
            if f.rank is None and f.data.get("proc_pid") is not None and self.cat[f.failure].hardware:
                f.rank = self.pid_rank(int(f.data["proc_pid"]))
                if f.rank is not None:
                    f.data["rank_from"] = "pid"
            if f.step is None and f.rank is not None:
                # read before that rank's step lines (another file): it happened after its last step
                f.step = self.last_step(f.rank, f.data.get("local_rank"))
            own.setdefault(f.rank, []).append(f)
            if f.data.get("speaker") is not None and f.role is Role.CAUSE:
                own.setdefault(f.data["speaker"], []).append(f)  # the line explains its speaker's exit too
        self.infer_from_gpu_index(base)
        for f in base:
            if _own_reset(f):
                # a reset raised through the program's own frames only (an upload, a REST call):
                # its own network error, an exception like any other, not a collective's lost peer
                f.failure, f.role = "rank_exception", Role.CAUSE
                f.data["exc_type"] = "ConnectionResetError"
        _cut_copies(base)
        _level_desync(base, self.cat)
        self.survived_warns(base)
        self.exit_finalizers(base)
        self.handled_exceptions(base)
        self.stalls_that_passed(base)
        _after_oom(base)
        self.reduced_reports(base)
        _crash_after_own_comm_error(base)
        _abort_after_raised_error(base)
        numeric = self.nonfinite()
        _assert_after_nan(base, numeric)
        scale = self.loss_scale()
        spikes = self.spikes()
        # (a loss of a trillion seen first, with nothing before it to measure a rise from, does not
        # lead the non-finite value right after it: the excerpt shows one explosion ending in NaN)
        unmeasured = all(f.failure == "loss_spike" and f.data.get("baseline") is None and isinstance(f.data.get("value"), float)
                         and abs(f.data["value"]) >= ABSURD_LOSS for f in spikes)
        if (numeric and spikes and not unmeasured and _precedes(spikes, numeric)
                and not self._recovered(spikes, numeric)):
            # a finite explosion came first: the NaN is its consequence, not the cause
            spikes, numeric = _spike_leads(spikes, numeric), []
        if spikes and scale and self._spike_before_descent(spikes, scale):
            # the loss exploded while the scale still held, and the overflows came after: the
            # divergence overflowed fp16 (an exploding learning rate), not the other way round
            spikes, scale = _spike_leads(spikes, scale), []
        # a collapse the overflow lines showed happening (a scale logged below 1 beside a NaN in
        # the same metrics table says nothing about which came first)
        collapse = [f for f in scale if f.failure == "loss_scale_collapse" and f.role is Role.CAUSE
                    and (f.data.get("overflows", 0) > 0 or f.data.get("explicit"))]
        descent = len(_dedupe_moves(self.st.scale_moves)) >= 3
        # NaN reports of the job as a whole (a NaN loss metric, "NaN or Inf found in input tensor")
        nan_lines = [f for f in base if f.failure in _NUMERIC and f.rank is None and f.role is Role.CAUSE]
        demoted: list[Finding] = []
        if (numeric or nan_lines) and collapse and (
                (numeric and _precedes(collapse, numeric))
                or ((descent or any(f.data.get("explicit") for f in collapse))
                    and all(f.rank is None for f in numeric + nan_lines))):
            # the scaler hit its floor first (fp16 ran out of range and the NaN followed), or the
            # NaN is the job-wide loss of the steps the scaler was seen skipping on its way down
            # (or that it said it could no longer skip: Marian's "already at minimum")
            for f in numeric + nan_lines:
                f.role = Role.COLLATERAL
            scale += numeric + nan_lines
            demoted = nan_lines
            numeric = []
        exits = self.exits(own)
        self.claim_spawn_blocks(base)
        fatal = [f for f in base if f.failure not in ("loss_scale_collapse", "loss_spike") and f not in demoted and (
            self.cat[f.failure].category in _FATAL_CATEGORIES or f.failure in _NUMERIC or f.failure == "bf16_unsupported_gpu")]
        fatal += exits
        if any(f.data.get("native_crash") and f.role is Role.CAUSE for f in base):
            for f in exits:
                if f.failure == "rank_segfault" and f.role is Role.CAUSE:
                    # the launcher's report of a process killed by SIGSEGV whose crash the backtrace
                    # put inside the communication library (see _crash_after_own_comm_error)
                    f.role = Role.COLLATERAL
                    f.data["in_library"] = True
        absent = self.absent_from_sync(fatal)
        fatal += [f for f in absent if f.data["stalled"]]
        fatal += self.thread_deaths(fatal)
        fatal += self.interrupted_stacks(fatal)
        fatal += self.stalled_before_stop(fatal)
        fatal += self.world_mismatch(fatal)
        fatal += self.hang(fatal)
        fatal += self.unnamed_wait(fatal)
        fatal += self.spared_by_teardown(fatal)
        if fatal and all(f.failure == "launcher_teardown" and f.role is Role.COLLATERAL for f in fatal) and any(
                "pid" not in f.data and str(f.data.get("signal")).removeprefix("Signals.") in _OUTSIDE_STOPS
                and f.time is not None and self._progressing_at(f.time) for f in fatal):
            # stopped from outside (Ctrl-C, a scheduler) while its timed metric lines still came, and
            # nothing failed: the stop is a note, not an incident to page on
            for f in fatal:
                f.severity = "info"
                f.data["stopped_while_running"] = True
        elif fatal and all(f.failure == "launcher_teardown" and f.role is Role.COLLATERAL for f in fatal) and any(
                "pid" not in f.data and str(f.data.get("signal")).removeprefix("Signals.") in _OUTSIDE_STOPS
                for f in fatal) and (self.st.trained_to_end or self._counted_to_end()):
            # stopped from outside (Ctrl-C) after the run had trained to its end (its framework's
            # end-of-training line, or its step counter at its total: "step 200/200"), and nothing
            # failed: a job stopped in its post-training work, not a failure
            for f in fatal:
                f.severity = "info"
                f.data["stopped_after_training"] = True
        elif fatal and all(f.failure == "launcher_teardown" and f.role is Role.COLLATERAL for f in fatal) and any(
                "pid" not in f.data and str(f.data.get("signal")).removeprefix("Signals.") in _OUTSIDE_STOPS
                for f in fatal) and (stops := [t for t in self.st.teardowns if t.data.get("interrupted")
                                               and not is_launcher(decode_frames(t.data.get("frames")) or ())]) \
                and all(_computing(t, in_library=True) for t in stops):
            # stopped from outside (Ctrl-C, the launcher's SIGINT) while every process that showed
            # where the stop found it was computing or writing (its KeyboardInterrupt inside
            # loss.backward()), and nothing failed: it was running, not stuck: a note
            for f in fatal:
                f.severity = "info"
                f.data["stopped_while_running"] = True
        if fatal and all(f.failure == "launcher_teardown" and f.role is not Role.CAUSE for f in fatal):
            cancels = [f for f in self.st.findings if f.failure == "launcher_teardown"
                       and (f.data.get("reason") or f.data.get("cancelled"))]
            if cancels:
                # nothing failed, and the scheduler said why the launchers were stopped: its time
                # limit or a preemption (the run did not finish: a warning), or a plain cancel
                # (scancel, someone's choice: a note)
                sev = "warning" if any(f.data.get("reason") for f in cancels) else "info"
                for f in fatal:
                    f.severity = sev
                    f.data["cancelled_by_scheduler"] = True
                if any(str(f.data.get("reason")) == "TIME LIMIT" for f in cancels) and (
                        roll := self.stopped_short_of_peers()) is not None:
                    # its time ran out right after a roll call one rank missed: the others waited
                    # for it until the scheduler's limit (the cancel is the hang's consequence)
                    roll.severity, roll.data["time_limit"] = "warning", True
                    fatal.append(roll)
        scale += [f for f in base if f.failure == "loss_scale_collapse" and not scale]
        spikes += [f for f in base if f.failure == "loss_spike"]
        guard = [f for f in spikes if f.role is Role.CAUSE and f.data.get("frames")]
        if guard:
            # the loop's own divergence guard raised ("RuntimeError: Training diverged: ...",
            # Tacotron's "Exception: Loss exploded"): the run stopped on the divergence, which
            # leads the spike reports, and the exits that followed are its consequences
            for f in guard:
                f.severity, f.data["stopped_run"] = "critical", True
            spikes = guard + [f for f in spikes if f not in guard and f.failure == "loss_spike"]
            # an exception the same log raised after the guard's (its caller's handler failing on the
            # way out: "raise ('Error occured ...')" → TypeError) is part of that stop
            first = min(f.order for f in guard)
            paths = {f.evidence[0].path for f in guard if f.evidence}
            for f in fatal:
                if (f.failure == "rank_exception" and f.role is Role.CAUSE and f.order > first
                        and f.evidence and f.evidence[0].path in paths):
                    f.role = Role.COLLATERAL
        fatal += self.bf16_context(fatal)
        if not fatal and not any(f.severity in ("critical", "warning") for f in numeric + scale + spikes):
            fatal += self.unfinished_tracebacks()

        own_bad = [f for f in numeric if f.role is Role.CAUSE and f.rank is not None and f.data.get("local")
                   and f.step is not None]
        if own_bad:
            # a rank's own metric went non-finite at a step before another rank's report of a
            # non-finite value (a guard on the all-reduced norm raising steps later): that report
            # saw the reduced value, the rank's own series shows where it came from
            # (its own guard's report at a later step too: the metric line already showed it)
            late = [f for f in fatal if f.failure == "nonfinite_loss" and f.role is Role.CAUSE
                    and f.step is not None and own_bad[0].step is not None
                    and (f.rank != own_bad[0].rank or f.step > own_bad[0].step)
                    # (or at that step, when it reports others' values: "non-finite grad norm on 1 rank(s)";
                    # or a guard of another rank whose own loss it logged finite at that step: it
                    # stopped on the reduced loss, "local_loss 0.8190 | loss nan" then "Loss is nan")
                    and (f.step > own_bad[0].step or (f.step == own_bad[0].step and (
                        f.data.get("observed") or (f.rank != own_bad[0].rank and self._own_loss_finite(f.rank, f.step))
                        # (or an evaluation's metric reported after it: the evaluation ran on the weights
                        # that NaN had spoiled, "Monitored metric val_loss = nan is not finite")
                        or (_printed_below(f, own_bad[0]) and _EVAL_METRIC.match(str(f.data.get("metric") or "")) is not None))))]
            for f in late:
                f.role = Role.COLLATERAL
            fatal = [f for f in fatal if f not in late]
            numeric += late
        out: list[Incident] = []
        fatal_inc = self.assemble(fatal, kind="fatal")
        if fatal_inc and fatal_inc.failure in _NUMERIC and numeric:
            fatal_inc.collateral += [self.collateral_entry(f) for f in numeric if f.rank != fatal_inc.rank or f.role is Role.COLLATERAL]
            numeric = []
        consequences: list[dict[str, Any]] = []
        if (fatal_inc and fatal and all(f.role is Role.COLLATERAL or f.data.get("weak") for f in fatal)
                and any(f.role is Role.CAUSE and f.severity == "critical" for f in numeric + scale + guard)):
            # only consequences (a launcher's exits, teardown, an exit code with no error of its own)
            # beside a numeric cause (the loss scale collapsed, the loss went NaN and the job stopped
            # itself): they are its collateral
            consequences, fatal_inc = fatal_inc.collateral, None
        if fatal_inc:
            out.append(fatal_inc)
        waiting = [f for f in absent if not f.data["stalled"]] if not fatal_inc else []
        for group, kind in ((numeric, "numeric"), (scale, "scale"), (spikes, "spike"), (waiting, "wait")):
            inc = self.assemble(group, kind=kind)
            if inc:
                if consequences and inc.severity == "critical":
                    inc.collateral += consequences
                    consequences = []
                out.append(inc)
        out += symptom_incidents(st, self.ctx, out)  # the seed's symptoms (detectors/symptoms.py), their own incidents
        if self.ended and not fatal and not any(i.severity in ("critical", "warning") for i in out):
            startup = self.stopped_short_of_peers() or self.stopped_in_setup() or self.stopped_before_first_step()
            if startup is not None and (inc := self.assemble([startup], kind="wait")) is not None:
                out.append(inc)
        out.sort(key=lambda i: (-_SEVERITY_RANK[i.severity], -i.data.get("priority", 0), i.step if i.step is not None else math.inf))
        return out

    def reduced_reports(self, base: list[Finding]) -> None:
        """A rank's line that reports a non-finite value ("skip_step ... reason: non-finite grad
        norm") while the same line logs that rank's own loss and own grad norm finite: what it
        saw was the all-reduced value, which every rank prints at that step. It names no rank's
        own NaN (the rank whose own value went non-finite is found from the samples).

        The same for a grad-norm report on a line of its own ("[r0] step 43: non-finite grad norm
        (inf), skipping update") that two or more ranks print at one step: each rank's own metric
        line of that step, where it logged one, says whether its own norm was finite; a rank that
        logged none saw what the others saw, the reduced norm."""
        reports: dict[int, set[int]] = {}
        own_step: dict[int, int] = {}
        for i, f in enumerate(base):
            if (f.failure == "nonfinite_loss" and f.role is Role.CAUSE and f.rank is not None and f.evidence
                    and "grad" in f.evidence[0].text.lower() and (at := _STEP_IN.search(f.evidence[0].text))):
                own_step[i] = int(at.group(1))
                reports.setdefault(own_step[i], set()).add(f.rank)
        for i, f in enumerate(base):
            if f.failure != "nonfinite_loss" or f.role is not Role.CAUSE or f.rank is None or not f.evidence:
                continue
            src = f.evidence[0]
            rs = self.st.ranks.get(("g", f.rank))
            if rs is None:
                continue
            rec = next((r for r in reversed(rs.samples) if r.source.line == src.line and r.source.path == src.path), None)
            if rec is None and i in own_step and len(reports[own_step[i]]) >= 2:
                step = own_step[i]
                rec = next((r for r in reversed(rs.samples) if r.step == step and r.source.path == src.path
                            and r.data.get("grad_norm") is not None), None)
                if rec is None:
                    f.role = Role.COLLATERAL  # no line of its own at that step: the reduced norm it saw
                    f.data["reduced_view"] = True
                    continue
            if rec is None:
                continue
            loss, grad = rec.data.get("loss"), rec.data.get("grad_norm")
            if (isinstance(loss, float) and math.isfinite(loss) and isinstance(grad, float) and math.isfinite(grad)
                    and rec.data.get("scope") == "local"):
                f.role = Role.COLLATERAL
                f.data["reduced_view"] = True

    def stopped_in_setup(self) -> Finding | None:
        """Complete logs of a multi-rank job that stop during distributed set-up: two or more
        ranks (or a world of two or more) came up, no rank logged a single metric line, and
        nothing failed, exited or was torn down. A job that ends that way was stopped while it
        still set up, or is still stuck there (a rendezvous, NCCL's connection set-up, a first
        collective some rank never reached): an ``info`` note naming no rank, never paged."""
        st = self.st
        if st.first_sample_order is not None or st.exits or st.teardowns or st.finished:
            return None
        if self.ctx.get("framework") == "nccl_tests" and self.ctx.get("nccl_tests_ran"):
            return None  # a communication benchmark's result rows: it logs no metric lines when it runs fine
        if any(rs.last_step is not None for rs in st.ranks.values()):
            return None
        world = max(self.world_size() or 0, len(st.seen_global), st.max_nranks)
        if getattr(st, "pslite", None) == "joining" and world < 2:
            # ps-lite's rendezvous (BytePS, MXNet's dist kvstore): nodes sent the scheduler their
            # ADD_NODE and no line says every node is connected: a parameter-server job (a scheduler,
            # servers, workers) stopped while its nodes still registered
            src = Source("<end of logs>", 0, "the logs stop during ps-lite's rendezvous: nodes registered with the "
                         "scheduler (ADD_NODE), no 'is connected' line, no metric line, no error, no exit")
            return self.finding("rank_hang", None, None, None, [src], severity="info", startup=True, pslite=True)
        waits = getattr(st, "endpoint_wait", None)
        if waits and world < 2:
            # Paddle's launch waits for every trainer's endpoint before training and says which ones
            # still do not answer; nothing came after: stopped while it still waited
            waited = ", ".join(sorted(waits)[:8])
            src = Source("<end of logs>", 0, f"the logs stop while the trainers wait for their peers' endpoints ({waited}); "
                         "no metric line, no error, no exit")
            return self.finding("rank_hang", None, None, None, [src], severity="info", startup=True, endpoint_wait=waited)
        if world < 2:
            return None
        seen = sorted(st.seen_global)[:64]
        src = Source("<end of logs>", 0, f"the logs stop during distributed start-up: {world} ranks"
                     + (f" ({_fmt_ranks(seen)} seen)" if seen else "") + ", no metric line, no error, no exit")
        return self.finding("rank_hang", None, None, None, [src], severity="info", startup=True, world=world)

    def stopped_before_first_step(self) -> Finding | None:
        """Complete logs whose last progress bar stands at 0/N (``Epoch 0:   0%|   | 0/410``) with
        no metric line, no error, no exit and no end after it: the loop began and never finished
        its first step. Stuck there (a first collective some rank never reached, a data loader
        that never yields) or stopped there by someone: an ``info`` note naming no rank."""
        st = self.st
        bar = st.bar_at
        if bar is None or bar[1] != 0 or st.first_sample_order is not None or st.exits or st.teardowns or st.finished:
            return None
        if any(rs.last_step is not None for rs in st.ranks.values()):
            return None
        src = Source(bar[3].path, bar[3].line, f"the logs end with the progress bar at 0/{bar[2]}: no step finished, "
                     "no metric line, no error, no exit")
        return self.finding("rank_hang", None, None, None, [src, bar[3]], severity="info", startup=True, first_step=True)

    def stopped_short_of_peers(self) -> Finding | None:
        """Complete logs that stop right after a roll call one rank missed: every rank of the
        world but one printed the same line last (numbers aside: ``rank 4, fetch sample 1469``,
        ``[Rank 2] training_step -> batch_idx: 0``, ``RANK 17: running step 1/10``), and the one
        left printed nothing, or last printed another line before that round began. Nothing
        failed, exited or finished after it: the others went on into a step that waits for every
        rank and the missing one never arrived (a data loader that never yields, a first
        collective it never reached). An ``info`` note naming that rank, never paged: a paste
        cut in the middle of a round looks the same, so it is a lead, not an alarm.

        The world is the job's stated size, or, with none stated, the ranks seen when they fill a
        power-of-two world of four or more but one (the corpus convention for silent ranks)."""
        st = self.st
        if st.exits or st.teardowns or st.finished or getattr(st, "trained_at", None) is not None:
            return None
        last: dict[int, tuple[int, str, Source]] = {}
        took: set[int] = set()  # ranks that printed the round's line earlier (rows "p", parse.py ``_round_takers``)
        for notes in getattr(st, "last_notes", {}).values():
            if ("c", 0) in notes:
                return None  # the paste was cut in the middle of the round (parse.py ``_last_notes``)
            took |= {n for kind, n in notes if kind == "p"}
            for (kind, n), (index, body, src) in notes.items():
                if kind not in ("g", "l"):
                    continue
                rank = n if kind == "g" else self.resolve(None, n)
                if rank is not None and (rank not in last or index > last[rank][0]):
                    last[rank] = (index, body, src)
        known = set(st.seen_global) | set(last)
        if len(last) < 3:
            return None
        ws = self.world_size()
        if ws is None:
            size = max(known) + 1
            if size < 4 or size & (size - 1) or len(known) < size - 1 or size > 1024:
                return None
            ws = size
        if not known <= set(range(ws)):
            return None
        rounds: dict[str, list[int]] = {}
        for rank, (_, body, _) in last.items():
            rounds.setdefault(note_template(body), []).append(rank)
        members = max(rounds.values(), key=len)
        absent = set(range(ws)) - set(members)
        if len(absent) > 1 and len(absent & took) == 1 and len(members) >= 3:
            # of the ranks missing from the last round, one took part in the earlier rounds of the same
            # roll call (its line of the trial before); the others never print it (rank 0 printing
            # other lines of its own): that one stopped short
            absent &= took
        if len(absent) != 1:
            return None
        (missing,) = absent
        sources = [last[r][2] for r in members]
        if any(is_warning(s.text) or _LIBRARY_DEBUG.search(s.text) for s in sources):
            # a warning every rank prints (NCCL's barrier device guess), or a library's debug lines
            # (NCCL_DEBUG=INFO's "NCCL INFO rank 3 nranks 4"): no step of the program's own
            return None
        if missing in last:
            # its own last line must come before the round, in the same file (per-rank files
            # give no order: another last line there may as well be ahead of its peers)
            own = last[missing][2]
            if not all(s.path == own.path and s.line > own.line for s in sources):
                return None
        first = min(sources, key=lambda s: (s.path, s.line))
        src = Source(first.path, first.line, f"the logs end after ranks {_fmt_ranks(sorted(members))} each printed "
                     f"'{first.text[:120]}' last; rank {missing} never did")
        return self.finding("rank_hang", missing, self.last_step(missing), None, [src, first], severity="info",
                            rank_from="absence", roll_call=sorted(members)[:64])

    def unfinished_tracebacks(self) -> list[Finding]:
        """A file whose last traceback never reached its exception line (nothing said anything
        after its header: a paste cut there, a process killed while printing it), and nothing
        else went wrong: that traceback is the failure, with the rank its block carries."""
        out: list[Finding] = []
        for _, src, rank, rank_from, _wall in sorted(self.st.open_blocks.values(), key=lambda b: b[0]):
            data: dict[str, Any] = {"unfinished": True}
            if rank is not None and rank_from is not None:
                data["rank_from"] = rank_from
            out.append(self.finding("rank_exception", rank, self.last_step(rank) if rank is not None else None, None,
                                    [src], **data))
        return out

    def bf16_context(self, fatal: list[Finding]) -> list[Finding]:
        if any(f.failure == "bf16_unsupported_gpu" for f in fatal):
            return []
        cc = compute_capability(self.ctx.get("gpu"))
        if self.ctx.get("compute_capability"):
            with contextlib.suppress(ValueError):
                cc = float(self.ctx["compute_capability"])
        if self.ctx.get("precision") == "bf16" and cc is not None and cc < 8.0:
            src = Source("<context>", 0, f"precision=bf16 on {self.ctx.get('gpu')} (compute capability {cc})")
            return [self.finding("bf16_unsupported_gpu", None, None, None, [src], severity="warning",
                                 gpu=self.ctx.get("gpu"), compute_capability=cc)]
        return []

    def collateral_entry(self, f: Finding) -> dict[str, Any]:
        d: dict[str, Any] = {"rank": f.rank, "failure": f.failure, "step": f.step}
        if f.data.get("exitcode") is not None:
            d["exitcode"] = f.data["exitcode"]
        d["evidence"] = {"path": f.evidence[0].path, "line": f.evidence[0].line}
        return d

    def assemble(self, group: list[Finding], kind: str) -> Incident | None:
        if not group:
            return None
        causes = sorted((f for f in group if f.role is Role.CAUSE), key=_sort_key)
        benign = [f for f in group if f.role is Role.BENIGN]
        # with no cause, the most telling report: an exception whose own message went on to name
        # its failure ("explained_by") tells less than the line that named it
        head = causes[0] if causes else min(group, key=lambda f: ("explained_by" in f.data, _sort_key(f)))
        failure = head.failure
        rank = head.rank if head.role is Role.CAUSE else None
        if rank is not None and self.cat[failure].several_ranks == "none" and len(
                {f.rank for f in causes if f.failure == failure and f.rank is not None and not f.data.get("observed")
                 and (head.step is None or f.step is None or f.step == head.step)
                 # (lines with no step: at the same epoch and iteration, when both say theirs)
                 and (math.inf in (_position(f)[0], _position(head)[0]) or _position(f) == _position(head))}) > 1:
            # (a rank reporting what it saw of another, "remote process exited", is no member hitting it)
            rank = None  # every member hit it (at the same step): no rank started it
        if head.data.get("pair") and head.role is Role.CAUSE:
            # reports that two ranks at the same point run different collectives: the rank every
            # report names is the odd one (one report alone names both sides: no rank)
            pairs = [set(f.data["pair"].split(",")) for f in causes if f.failure == failure and f.data.get("pair")]
            common = set.intersection(*pairs) if len(pairs) > 1 else set()
            rank = int(common.pop()) if len(common) == 1 and len({frozenset(p) for p in pairs}) > 1 else None
        entry_cat = self.cat[failure].category
        odd_pair = str(head.data.get("odd_pair") or "")
        odd_data: dict[str, Any] = {}
        if rank is not None and head.role is Role.CAUSE and odd_pair and (self.world_size() or 2) == 2:
            # a two-rank job whose two ranks logged other sizes just before a size-mismatch abort:
            # the rank that aborted received the other's size, so the other one's call differs
            a, b = (int(x) for x in odd_pair.split(","))
            if rank in (a, b):
                rank = b if rank == a else a
                odd_data = {"rank_from": "odd_one_out", "inferred": True}
        if rank is None and failure == "amp_bf16_vs_fp16" and head.role is Role.CAUSE:
            # every rank stopped on the same fp16 overflow: the one rank whose own gradients
            # overflowed (its notes before the all-reduce) is where it came from
            rank = self._local_overflow_rank(None)[0]
        if rank is not None and (head.data.get("message") or head.data.get("exc_type")) and len(
                {f.rank for f in causes if f.failure == failure and f.rank is not None
                 and f.data.get("exc_type") == head.data.get("exc_type")
                 and _sans_own(f.data.get("message"), f.rank) == _sans_own(head.data.get("message"), head.rank)
                 and (head.step is None or f.step is None or f.step == head.step)}) > 1:
            # the same exception, word for word but for each rank's own number ("... cpu and cuda:6!"
            # on rank 6, "cuda:3!" on rank 3), on several ranks at once: the job's own error
            rank = None
        if rank is not None and head.data.get("metric") and head.data.get("pattern") and len(
                {f.rank for f in causes if f.failure == failure and f.rank is not None
                 and f.data.get("pattern") == head.data.get("pattern") and f.data.get("metric") == head.data.get("metric")
                 and (head.step is None or f.step is None or f.step == head.step)}) > 1:
            rank = None  # the same report of the same metric on several ranks at one step (a synced metric)
        # (a step known on one rank's line and not on another's is no different step)
        same_alloc = [f for f in causes if f.failure == failure and f.rank is not None
                      and (f.step == head.step or f.step is None or head.step is None)
                      and f.data.get("size") == head.data.get("size")]
        if rank is not None and failure == "cuda_oom" and self._oom_on_several(causes, head):
            # several processes ran out of memory at one step, each in its own report: the step
            # does not fit, no rank started it; the launcher's first failed worker among them is
            # named, if it says one
            ran_out = {f.rank for f in causes if f.failure == failure and f.rank is not None}
            firsts = [r for e in sorted(self.st.exits, key=lambda e: (not e.data.get("root_cause"), int(e.data.get("order", 0) or 0)))
                      if (r := self.resolve(e.rank, e.data.get("local_rank"))) in ran_out and e.data.get("exitcode", 0) > 0
                      and e.data.get("trusted", True)]
            rank = firsts[0] if firsts else None
            if rank is None:
                odd_data = {"oom_ranks": sorted(r for r in ran_out if r is not None)}
        elif (rank is not None and head.data.get("size") and len({f.rank for f in same_alloc}) > 1
                and len({f.data.get("gpu") for f in same_alloc}) > 1):
            # the same allocation failing at one step on several ranks' GPUs: a symmetric step's, no
            # rank started it; the launcher's first failed worker among them is named, if it says one
            # (torchrun's "failed ... local_rank: 1", prterun's first non-zero exit)
            alike = {f.rank for f in same_alloc}
            said = [e for e in sorted(self.st.exits, key=lambda e: (not e.data.get("root_cause"), int(e.data.get("order", 0) or 0)))
                    if e.rank in alike and e.data.get("exitcode", 0) > 0]
            # (torchrun's summary lists the other failures before its root cause: the root cause first)
            rank = said[0].rank if said else None
        if rank is not None and failure in _COMM_FAILURES and _first_warn_shared(causes, failure):
            rank = None  # the first failing call, made by several processes alike: their node's, not a rank's
        if (rank is None and head.role is Role.CAUSE and entry_cat == "distributed"
                and (head.data.get("job_scope") or head.data.get("setup"))):
            absent = self._store_absent()
            if absent is not None:
                # a set-up failure no line ties to a rank (a store the client never reached), while
                # the ranks that did join timed out waiting for one rank's key: that rank is the one
                # that never arrived
                rank = absent
                odd_data = {"rank_from": "store_key", "inferred": True}
        single = self.world_size() == 1
        if single:
            rank = None  # a single-process job: there is no rank to tell apart
        precision = self.ctx.get("precision")
        if failure == "nonfinite_loss" and (precision == "fp16" or (self.st.scale_moves and precision != "bf16")):
            failure = "amp_bf16_vs_fp16"
        entry = self.cat[failure]
        severity = head.severity if head.role is not Role.BENIGN else "info"
        if head.data.get("weak") and head.failure == "rank_exception":
            severity = "critical"
        # the initiator's evidence: its own lines for the same failure, first ones first
        ev: list[Source] = []
        for f in sorted(group, key=lambda f: f.order):
            if f.rank == head.rank and f.failure == head.failure and f.role is head.role:
                ev.extend(f.evidence)
        ev = _uniq(head.evidence + ev)[:8]
        collateral: list[dict[str, Any]] = []
        seen: set[tuple[int | None, str]] = set()
        # one entry per rank (its most telling report); rank-less reports once per failure
        for f in sorted(group, key=lambda f: (f.rank if f.rank is not None else 1 << 30, -f.priority, f.order)):
            # (a head whose rank was set aside as the job's is one of the reporters)
            if (f is head and head.role is Role.CAUSE and (rank is not None or head.rank is None or single)) or (
                    f.rank == rank and rank is not None) or f in benign:
                continue
            k = (f.rank, "" if f.rank is not None else f.failure)
            if k in seen:
                continue
            seen.add(k)
            collateral.append(self.collateral_entry(f))
        if kind == "fatal" and rank is not None:
            have = {c["rank"] for c in collateral}
            collateral += [c for c in self.teardown_collateral(rank) if c["rank"] not in have]
        # (a copy: reading the verdict never changes the state)
        narrative = self.narrate(dataclasses.replace(head, data={**head.data, **odd_data}) if odd_data else head,
                                 failure, rank, collateral)
        # one incident per (kind, failure, rank) per job: the id must not depend on which
        # file was read first, so live and offline (and restarts) agree on it
        key = f"{self.st.job}|{kind}|{failure}|{'job' if rank is None else rank}"
        iid = f"{failure}-{hashlib.sha1(key.encode()).hexdigest()[:10]}"
        data = {k: v for k, v in {**head.data, **odd_data}.items() if k not in _INTERNAL_DATA}
        data["priority"] = head.priority if head.role is Role.CAUSE else 0
        return Incident(iid, failure, severity, entry.title, entry.hardware, rank, head.step, head.time, ev,
                        collateral, narrative, data)

    def _oom_on_several(self, causes: list[Finding], head: Finding) -> bool:
        """Out-of-memory reports of the head's step (or with no step) and allocation size (or
        none named) from several processes: ranks their own lines name (a tag, a pasted file's
        section), not one a launcher's exit line lent them, and messages that differ."""
        own = [f for f in causes if f.failure == head.failure and f.rank is not None and f.evidence
               and f.data.get("rank_from") != "launcher"
               and (f.step == head.step or f.step is None or head.step is None)
               and f.data.get("size") == head.data.get("size")]
        # (one message word for word under two ranks is one report read twice, a line pasted above
        # another rank's traceback; processes' own reports differ in their device or free memory)
        # (the message from its "out of memory" on: a traceback's quoted ``raise ...("...")`` line
        # holds the same words as the exception line below it)
        bodies = {_OOM_WORDS.split(f.evidence[0].text, maxsplit=1)[-1].strip().rstrip("\"')") for f in own}
        return len({f.rank for f in own}) > 1 and len(bodies) > 1

    def _store_absent(self) -> int | None:
        """The one rank whose key the store waits of set-up timed out on (Gloo's full-mesh
        rendezvous: every rank posts its address under ``…//cpu//<device>/<rank>``; "wait timeout
        after 20000ms, keys: /default_pg/0//cpu//0/2" is a rank that waited for rank 2's), when
        every such wait names the same rank and that rank reported no such wait itself."""
        named: set[int] = set()
        waiters: set[int | None] = set()
        for f in self.st.findings:
            if not f.data.get("setup"):
                continue
            m = _STORE_KEY_RANK.search(str(f.data.get("message", "")))
            if m is None:
                continue
            named.add(int(m.group(1)))
            if f.data.get("rank_from") != "launcher":
                waiters.add(f.rank)  # (a launcher's failed worker is its guess at the untagged lines' rank)
            if len(named) > 1:
                return None
        if len(named) != 1:
            return None
        absent = named.pop()
        ws = self.world_size()
        return None if absent in waiters or (ws is not None and absent >= ws) else absent

    def narrate(self, head: Finding, failure: str, rank: int | None, collateral: list[dict[str, Any]]) -> list[str]:
        d = head.data
        who = f"Rank {rank}" if rank is not None else "The job"
        at = f" at step {head.step}" if head.step is not None else ""
        lines: list[str] = []
        text = head.evidence[0].text.strip() if head.evidence else ""
        if failure == "rank_hang" and d.get("rank_from") == "absence":
            absent = d.get("absent", [])
            lines.append(f"Ranks {_fmt_ranks(d.get('present', []))} reported reaching a sync point (barrier, collective) "
                         f"that rank{'s' if len(absent) > 1 else ''} {_fmt_ranks(absent)} never reported reaching"
                         + (" (the world size is inferred from the ranks named)." if d.get("inferred") else "."))
            if len(absent) > 1:
                lines.append("Several ranks are missing, so no single one is named: check that they started at all "
                             "(their node, their launcher) before suspecting a hang.")
            if not d.get("stalled"):
                lines.append("The wait has not yet timed out in these logs: a slow start-up looks the same. "
                             "If it lasts past its timeout, py-spy the missing rank(s).")
        elif d.get("world_mismatch"):
            lines.append(f"{who} was started with world_size={d.get('world_size_claimed')} while every other rank "
                         f"said {d.get('world_size_others')}: the process group could not form, and the timeouts and "
                         "lost peers that followed are its consequences.")
            lines.append("Start every process with the same WORLD_SIZE (one launcher's --nproc_per_node/--nnodes, the "
                         "same environment on every node) and let init_process_group read it from the environment.")
        elif failure == "rank_hang" and d.get("pslite"):
            lines.append("These logs stop during ps-lite's rendezvous (the parameter-server transport of BytePS and "
                         "MXNet's dist kvstore): nodes sent the scheduler their ADD_NODE, and no line says the scheduler "
                         "was connected to every worker and server. If the job is still running, it waits for a node "
                         "that never registered (a DMLC_NUM_WORKER / DMLC_NUM_SERVER count the launched nodes do not "
                         "reach, a node that cannot reach DMLC_PS_ROOT_URI:DMLC_PS_ROOT_PORT, or the scheduler's reply "
                         "that cannot reach a node's advertised address); if it was stopped, it was stopped there.")
            lines.append("Compare the ADD_NODE lines with the numbers of workers and servers set, and check that every "
                         "node's interface (DMLC_INTERFACE) is reachable from the scheduler.")
        elif failure == "rank_hang" and d.get("endpoint_wait"):
            lines.append(f"These logs stop while the trainers wait for their peers' endpoints (not ready: {d['endpoint_wait']}): "
                         "Paddle's launcher waits, retrying every 3 s, until every trainer's endpoint answers, and no "
                         "metric line, error or exit came after. If the job is still running, the trainer at that "
                         "address never started or cannot be reached; if it was stopped, it was stopped there.")
            lines.append("Start the launch on every node with the same --ips list (in the same order), and check that "
                         "each node can reach the others' endpoints (firewall, a proxy in the environment, the "
                         "interface the endpoint is bound to).")
        elif failure == "rank_hang" and d.get("startup"):
            lines.append(f"These logs of a {d.get('world')}-rank job stop during distributed start-up: no rank logged "
                         "a metric line, and nothing failed, exited or was torn down. If the job is still running, "
                         "it is stuck in set-up (the rendezvous, NCCL's connections, a first collective or barrier "
                         "some rank never reached); if it was stopped, it was stopped there.")
            lines.append("Find the rank that did not get as far as the others (its last line, or py-spy dump on each "
                         "rank); NCCL_DEBUG=INFO shows which connection set-up did not complete.")
        elif failure == "rank_hang" and d.get("stopped_from_outside") and d.get("unclocked"):
            lines.append("The job was stopped from outside (SIGTERM or SIGINT to its launcher, or Ctrl-C) before its end, "
                         "with no error from any rank and no end-of-training summary. No clock in these lines measures "
                         "how long they had been silent: if it was stopped because it no longer made "
                         "progress, it had hung with no error and no timeout (a collective's timeout longer than the "
                         "wait); if a scheduler's limit or a person stopped a job that was still training, this is no "
                         "failure.")
            if rank is not None:
                lines.append(f"Rank {rank}'s last line was behind the others': it is the one they waited for.")
        elif failure == "rank_hang" and d.get("stopped_from_outside"):
            lines.append(f"No rank logged a metric line for {d.get('stalled_seconds')} s before the job was stopped from "
                         f"outside (they had come every {d.get('usual_seconds')} s): the job had hung, with no error "
                         "and no timeout (a collective's timeout longer than the wait).")
            if rank is not None:
                lines.append(f"Rank {rank}'s last line was behind the others': it is the one they waited for.")
        elif failure == "rank_hang" and d.get("stacks_from") == "timeout":
            lines.append(f"Every rank timed out, and the tracebacks of their timeouts show where each one waited: "
                         f"{d['stacks']}. Rank {rank} was in a collective the others never entered: they waited for it.")
        elif failure == "rank_hang" and d.get("stacks"):
            if d.get("single"):
                lines.append(f"The job was stopped from outside (Ctrl-C) while it waited: {d['stacks']} "
                             f"({d.get('where')}). A job stopped there had stopped making progress, most often a "
                             "data loader whose workers died or deadlocked.")
            else:
                lines.append(f"The job was stopped from outside (Ctrl-C or the launcher's SIGINT), and each rank's "
                             f"KeyboardInterrupt traceback shows where it was at that moment: {d['stacks']}. "
                             f"Rank {rank} held the others up.")
        elif failure == "rank_hang" and d.get("skipped_batch"):
            lines.append(f"Every rank timed out, and before that rank {rank} alone caught an error and skipped a batch "
                         f"(\"{str(d['skipped_batch'])[:160]}\"): it left out that step's collectives while its peers "
                         "ran them, so the ranks then waited in different collectives until they timed out.")
            lines.append("Skip a batch on every rank or on none: all-reduce a 'this rank failed' flag and skip together "
                         "(or raise, and let the launcher restart the job); never continue past a caught error on one rank alone.")
        elif failure == "rank_hang" and rank is not None and rank in d.get("reporters", []):
            lines.append(f"Every rank timed out, and rank {rank} is the one behind: it never enqueued the collective "
                         f"ranks {_fmt_ranks([r for r in d.get('reporters', []) if r != rank])} were waiting in.")
        elif failure == "rank_hang" and not d.get("reporters"):
            # the hang's own report (a py-spy or gdb dump of a waiting process, a hang watchdog's
            # dump): no peer timed out waiting for it in these lines
            lines.append(f"{who if rank is not None else 'A process of the job'} stopped making progress: \"{text[:160]}\". "
                         "No error of its own and no peer's timeout came with it in these logs.")
        elif failure == "rank_hang":
            step = f" after step {d['last_step']}" if d.get("last_step") is not None else ""
            lines.append(f"Rank {rank} stopped making progress{step} and never reported a timeout, "
                         f"while ranks {_fmt_ranks(d.get('reporters', []))} timed out or lost their peer waiting for it.")
            if d.get("woken_by_teardown"):
                lines.append(f"Rank {rank} said nothing until it received the launcher's SIGTERM; the lost peer it "
                             "reported after that was the teardown, not its own failure.")
            if d.get("world_guess"):
                lines.append(f"No world size is logged: rank {rank} is the one silent rank if the job has "
                             f"{d['world_guess']} ranks (inferred; check its log and node first).")
            claimed = [e for e in self.st.exits if e.data.get("root_cause")]
            if claimed:
                lines.append(f"The launcher's 'Root Cause (first observed failure)' names rank {claimed[0].rank}, "
                             "which was only the first victim to exit.")
        elif failure in ("loss_scale_collapse", "fp16_overflow_skips", "loss_scale_warmup"):
            if d.get("every_step"):
                lines.append(f"The gradient norm was inf/NaN on every one of the {d.get('overflows')} logged steps from the "
                             "start of training while the loss stayed finite and kept moving: no update with those "
                             "gradients was applied (it would have made the next loss non-finite). The fp16 gradients, "
                             "or their fp16 norm, overflow on every step and the scaler skips it (or clipping by an inf "
                             "norm zeroes it): the run is not learning. Train in bf16 if the GPU supports it, or keep "
                             "the trainable parameters in fp32 under autocast.")
            elif not d.get("overflows") and d.get("skipped") is not None and d.get("steps"):
                lines.append(f"The run's own tally: the dynamic loss scaler skipped {d['skipped']} of {d['steps']} optimizer "
                             f"steps on fp16 overflow ({float(d.get('rate') or 0) * 100:.0f} %).")
            elif isinstance(d.get("static_scale"), float) and d.get("lowest_scale") == d.get("static_scale"):
                lines.append(f"The loss scale stayed at {d['static_scale']} through every overflow report "
                             f"(\"reducing\" it to the same value): each overflow threw a step away and the scale never "
                             "came down to where the gradients fit. A static loss scale (--loss-scale, static_loss_scale) "
                             "or a scaler whose floor (min_loss_scale) is set that high: use dynamic loss scaling with a "
                             "low floor, or bf16.")
            else:
                lines.append(f"{d.get('overflows', 0)} fp16 overflow(s) made the dynamic loss scaler skip steps; "
                             f"lowest scale seen: {d.get('lowest_scale')}.")
            if failure == "loss_scale_warmup":
                lines.append("The scale is still calibrating from its high initial value: this is expected at the start of fp16 training.")
            if rank is None:
                lines.append("The overflow flag is all-reduced across ranks, so no single rank can be named from the logs.")
            elif d.get("rank_from") == "out_of_range_loss":
                lines.append(f"The overflow flag is all-reduced, so every rank skipped the same steps; rank {rank} alone logged "
                             "a loss beyond fp16's range (above 65504 or not finite) while its peers' losses stayed ordinary "
                             "at that step: its batch is what overflowed. Check that rank's data shard for outliers "
                             "(unnormalized inputs, a corrupt sample).")
            elif d.get("rank_from") == "local_overflow":
                lines.append(f"The overflow flag is all-reduced, so every rank skipped the same steps; rank {rank} alone "
                             "noted inf/NaN in its own gradients: its batch is what overflowed.")
            elif d.get("rank_from") == "onset_loss":
                lines.append(_onset_note(rank, d))
        elif failure in _NUMERIC:
            scope = ("its own evaluation loss (the other ranks' were finite)" if d.get("metric") == "eval_loss"
                     else "its own gradient norm (the ranks' norms differ: not all-reduced), before any peer's went "
                          "non-finite" if d.get("local") and d.get("metric") == "grad_norm" and d.get("peers_later")
                     else "its own gradient norm, while its peers' stayed finite at that step"
                     if d.get("local") and d.get("metric") == "grad_norm"
                     else "its local loss" if d.get("local") else f"the logged {d.get('metric', 'value')}")
            if d.get("rank_from") == "onset_loss":
                lines.append(f"The logged {d.get('metric', 'value')} went non-finite ({d.get('value', 'nan')}){at}.")
            else:
                lines.append(f"{who} first produced a non-finite value ({scope}: {d.get('value', 'nan')}){at}.")
            if rank is None:
                lines.append("The value is reduced over ranks (or every rank went non-finite in the same step), so the logs cannot tell which rank started it.")
            elif d.get("rank_from") == "onset_loss":
                lines.append(_onset_note(rank, d))
            if failure == "amp_bf16_vs_fp16":
                gpu = self.ctx.get("gpu")
                cc = compute_capability(gpu)
                lines.append(f"The job computes in fp16 (loss scaling: {self.ctx.get('loss_scaling', 'unknown')}); "
                             f"GPU: {gpu or 'unknown'}" + (f" (compute capability {cc})" if cc else "") + ".")
        elif d.get("weak"):
            lines.append(f"{who} exited with code {d.get('exitcode')} (a Python exception) according to the launcher; "
                         "its own traceback is not in these logs.")
        elif d.get("at_exit"):
            lines.append(f"{who} printed a Python traceback{at} from a clean-up that runs while the interpreter exits "
                         f"(multiprocessing's finalizers, atexit): {text[:300]}")
            lines.append("Python prints such an error and goes on exiting: it ended nothing. A semaphore or shared-memory "
                         "segment already removed by another process is the usual cause; nothing to fix for the run.")
        elif d.get("unfinished"):
            lines.append(f"{who} printed a Python traceback{at} that ends before its exception line (the log stops "
                         "inside it), and nothing else in these logs went wrong: that exception ended the run. "
                         "Its last frame is where it was raised; the full message is in the rank's stderr or error.json.")
        elif failure == "rank_killed" and d.get("torn_down"):
            lines.append(f"{who} stopped without a word: no traceback, no exit code in these logs, and the launcher "
                         "sent SIGTERM to every other rank but not to it: it had already ended, and the launcher "
                         "tears the job down when one worker exits. A SIGKILL (the host OOM killer, the scheduler) "
                         "is the usual way (check `dmesg` / `journalctl -k` on its node).")
        elif failure == "rank_killed" and d.get("silent_death"):
            lines.append(f"{who} stopped without a word: no traceback, no exit code in these logs, and its peers "
                         "did not time out, their connections to it were closed. Its process died; a SIGKILL "
                         "(the host OOM killer, the scheduler) is the usual way (check `dmesg` / `journalctl -k` on "
                         "its node).")
        elif failure == "rank_killed" and d.get("discoverer_dev") is not None:
            dev = f"device {d.get('gpu')} on {d.get('host_ip')}"
            lines.append(f"{who if rank is not None else 'The process of ' + dev} stopped sending HCCL's cluster heartbeat "
                         f"({dev}, discovered by device {d.get('discoverer_dev')} on {d.get('discoverer_ip')}): the "
                         "process exited or lost its network, and the collective its peers wait in then timed out.")
            lines.append("Its own log (the rank's plog, its traceback or exit code) and the node's kernel log say why "
                         "it ended; the other ranks' timeouts are consequences.")
        elif failure == "rank_killed":
            lines.append(f"{who} was killed with SIGKILL (exit -9) without a Python traceback: usually the host OOM killer "
                         "or the scheduler (check `dmesg` / `journalctl -k` on that node).")
        elif d.get("rank_from") == "odd_one_out" and rank is not None:
            how = {"differs": "printed the same line as its peers with other numbers",
                   "pair": "printed the same line as the rank that aborted with other sizes"}.get(
                       str(d.get("odd_why")), "alone printed a warning")
            lines.append(f"A collective's sizes disagreed across ranks{at}: {text[:300]}")
            lines.append(f"The rank that reports this received the other size; rank {rank} is the one whose call "
                         f"differs (inferred: just before, it {how}: {str(d.get('odd_line'))[:200]}). Check what it "
                         "does differently (its data shard, vocabulary or model config, a code path only it takes).")
        elif d.get("rank_from") == "store_key" and rank is not None:
            lines.append(f"The job's set-up failed: {text[:300]}")
            lines.append(f"No line ties that to a rank, but the ranks that joined timed out waiting for rank {rank}'s "
                         f"key in the store (inferred: rank {rank} never arrived). Check the address and port rank "
                         f"{rank} was given (MASTER_ADDR, MASTER_PORT, its node's network) against its peers'.")
        elif d.get("oom_ranks"):
            lines.append(f"Ranks {_fmt_ranks(d['oom_ranks'])} each ran out of memory{at}, each in its own report "
                         f"(the first: {text[:200]}).")
            lines.append("The step does not fit in any of their GPUs' memory: no rank started it, and the other "
                         "ranks' reports are not consequences of the first. Fix the step's memory use for every rank.")
        elif d.get("rank_from") == "pid" and rank is not None:
            lines.append(f"The kernel's log reported {self.cat[failure].title.lower()} for rank {rank}'s process{at} "
                         f"(its pid, {d.get('proc_pid')}, is rank {rank}'s in the launcher's report): {text[:300]}")
        else:
            lines.append(f"{who} reported {self.cat[failure].title.lower()}{at}: {text[:300]}")
        if d.get("setup") and failure == "nccl_error":
            lines.append("It was raised while the process group was being set up (init_process_group, the rendezvous, "
                         "the store), before any peer could have failed: the connection itself failed. Check that every "
                         "node reaches MASTER_ADDR:MASTER_PORT and that NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME name an "
                         "interface the nodes share (a firewall, a wrong address, a container network).")
        if collateral and rank is not None:
            by = sorted({c["rank"] for c in collateral if c["rank"] is not None and c["rank"] != rank})
            if by:
                lines.append(f"Ranks {_fmt_ranks(by)} reported only consequences (timeouts, lost peers, teardown): collateral.")
        elif head.role is Role.COLLATERAL:
            lines.append("Every report in these logs is a consequence (timeouts, lost peers, teardown); the rank that started it "
                         "is not visible here. Check the other nodes' logs and `dmesg`, or py-spy the stuck ranks.")
        return lines


_SPAWN_TRACEBACK_LINES = 200  # how far below torch.multiprocessing.spawn's notice its traceback may end


def _onset_note(rank: int, d: dict[str, Any]) -> str:
    """Why the rank is named when every rank showed the failure (``rank_from`` "onset_loss")."""
    base = d.get("onset_baseline")
    was = f" (its loss had been about {base:.4g})" if isinstance(base, float) else ""
    return (f"Every rank showed it, since gradients are all-reduced; at the step where it began rank {rank} alone logged "
            f"an anomalous loss of its own, {d.get('onset_loss')}{was}, while its peers' losses stayed ordinary: its batch "
            "(or its data shard) is where it came from.")


def _epoch_iter(rec: SampleRec) -> tuple[float, float]:
    """(epoch, iteration within it) of a line that has no step, ``inf`` where either is missing."""
    ep, it = rec.data.get("epoch"), rec.data.get("epoch_iter")
    if isinstance(ep, float) and isinstance(it, float) and math.isfinite(ep) and math.isfinite(it):
        return (ep, it)
    return (math.inf, math.inf)


def _finite_loss_at(rs: RankState, bad: SampleRec) -> bool:
    """A finite local loss of the same rank at the step of ``bad`` (another line of that step)."""
    if bad.step is None:
        return False
    for s in rs.samples:
        v = s.data.get("loss")
        if s is not bad and s.step == bad.step and s.data.get("scope") == "local" and v is not None and math.isfinite(v):
            return True
    return False


def _desynced(fatal: list[Finding]) -> bool:
    """The watchdog reports of one process group name different collectives (rank 0 in an
    ALLGATHER, ranks 2 and 3 in a BROADCAST): the ranks went down different code paths, so the
    one absent from the reports is not known to be the one they all wait for."""
    # (an NCCL OpType, ALLREDUCE or _ALLGATHER_BASE: gloo's "recv"/"send" is a direction, not a collective)
    timeouts = [f for f in fatal if f.failure == "collective_timeout" and str(f.data.get("op") or "").isupper()]
    groups = {m.group(1) if (m := _PG.search(f.evidence[0].text)) else None for f in timeouts}
    return len(groups) == 1 and len({str(f.data["op"]) for f in timeouts}) > 1


def _first_stall_report(lists: dict[int, set[int]]) -> frozenset[int]:
    """The one rank a stall inspector's FIRST list named alone, still listed in every later
    list that named others too: it was missing before anyone else, and the others' absences
    came after (they moved on to collectives it never reached, a two-way wait it started).
    Empty when the first list names several ranks, or a later one drops it."""
    if len(lists) < 2:
        return frozenset()
    reports = [lists[k] for k in sorted(lists)]
    head = reports[0]
    if len(head) != 1 or not all(head <= later for later in reports[1:]):
        return frozenset()
    return frozenset(head)


def _absent_below(reporters: set[int]) -> list[int]:
    """No world size logged: the ranks below the highest reporter exist. When exactly one of them
    is silent and the reporters then fill a world of a power-of-two size of at least 4 (4, 8, 16 …
    GPUs: how jobs are sized), that rank is the one they wait for (inferred). Ranks 1–6 reporting, rank 0
    silent, leaves the world open (7, or 8 with another silent rank): no one is named."""
    if not reporters:
        return []
    n = max(reporters) + 1
    silent = [r for r in range(n) if r not in reporters]
    if len(silent) != 1 or n < 4 or n & (n - 1):
        return []  # one reporter of two is a pasted excerpt as often as a silent rank: too little
    return silent


def _behind_in_sequence(fatal: list[Finding], reporters: set[int]) -> int | None:
    """Every rank timed out: the one whose collective sequence is lowest, when exactly one
    is, fell behind the others. Like is compared with like (every rank's last completed work,
    then every rank's last enqueued work, else every rank's timed-out SeqNum), and only a few
    collectives apart: sequence numbers
    thousands apart belong to different process groups."""
    timeouts = [f for f in fatal if f.failure == "collective_timeout" and f.rank in reporters]
    if len({m.group(1) for f in timeouts if (m := _PG.search(f.evidence[0].text))}) > 1:
        return None  # several process groups: their sequences do not compare
    for key in ("last_completed", "last_enqueued", "seq"):
        progress: dict[int, int] = {}
        for f in timeouts:
            v = f.data.get(key)
            if f.rank is not None and v is not None and str(v).isdigit():
                progress[f.rank] = max(progress.get(f.rank, 0), int(v))
        if len(progress) < 2 or set(progress) != reporters:
            continue
        low, high = min(progress.values()), max(progress.values())
        lows = [r for r, v in progress.items() if v == low]
        if key == "last_completed":
            # the GPU side: the rank whose collectives stopped completing first, when exactly one
            # did, is the one the others wait on (its stream is stuck); level ranks say nothing
            if len(lows) == 1 and 0 < high - low <= _MAX_SEQ_BEHIND:
                return lows[0]
            continue
        if key == "last_enqueued":
            stuck = [int(v) for f in timeouts if (v := f.data.get("seq")) is not None and str(v).isdigit()]
            if stuck and low >= max(stuck):
                # every rank had enqueued the collective they all time out on: the others ran
                # ahead on the CPU, nobody is missing from it (a culprit is elsewhere)
                return None
        if len(lows) == 1 and 0 < high - low <= _MAX_SEQ_BEHIND:
            return lows[0]
        return None
    return None


def _completed_far_behind(fatal: list[Finding], reporters: set[int]) -> int | None:
    """The one reporter whose last completed collective is far below every other reporter's, all
    of them in one process group that each report names (``[PG 0 Rank 1] Timeout at NCCL work: 7,
    last enqueued NCCL work: 8, last completed NCCL work: 6`` beside ``[PG 0 Rank 5] Timeout at
    NCCL work: 1211, ... last completed NCCL work: 1210`` from every other reporter): the group is
    the same, so the distance is no other group's count (``_behind_in_sequence`` cannot know that
    from untagged reports and stops at a few collectives); its stream stopped completing work
    first, and the others went on until they waited on it. The other reporters must agree with
    each other, and there must be two of them at least."""
    reports = [f for f in fatal if f.failure == "collective_timeout" and f.rank in reporters
               and str(f.data.get("last_completed") or "").isdigit()]
    groups = {m.group(1) if (m := _PG.search(f.evidence[0].text)) else None for f in reports}
    if len(groups) != 1 or None in groups:
        return None
    done: dict[int, int] = {}
    for f in reports:
        if f.rank is not None:
            done[f.rank] = max(done.get(f.rank, 0), int(str(f.data["last_completed"])))
    if set(done) != reporters or len(done) < 3:
        return None
    low = min(done.values())
    lows = [r for r, v in done.items() if v == low]
    rest = {v for r, v in done.items() if r not in lows}
    if len(lows) != 1 or len(rest) != 1 or next(iter(rest)) - low <= _MAX_SEQ_BEHIND:
        return None  # (a few apart: ``_behind_in_sequence``'s to judge, where it applies)
    return lows[0]


def _value_text(rec: SampleRec, metric: str) -> str:
    key = metric if metric in ("grad_norm", "eval_loss") else "loss"
    v = rec.data.get(key)
    if rec.data.get("loss_missing"):
        return "loss field missing (NaN average)"
    return str(v)


def _untask(base: list[Finding]) -> None:
    """srun's labels turned out to be node tasks (a later line of task 2 was tagged ``[rank18]``):
    a rank read from a label alone, before that was known, was the node's task id."""
    for f in base:
        if f.rank is None or f.data.get("rank_from") != "prefix" or not f.evidence:
            continue
        pre = split_prefixes(f.evidence[0].text)
        if pre.task == f.rank == pre.rank and not pre.tagged:
            f.rank = None
            f.data.pop("rank_from", None)


_WARN_TEXT = re.compile(r"NCCL WARN (.*)")
_WARN_VOLATILE = re.compile(r"0x[0-9a-fA-F]+|\S*/\S*|\d+")  # pointers, paths (/dev/shm/nccl-XyZ), numbers


def _warn_text(f: Finding) -> str | None:
    """The words of a process's NCCL WARN line, without its numbers, pointers and paths."""
    if not f.evidence or f.data.get("nccl_proc") is None:
        return None
    m = _WARN_TEXT.search(f.evidence[0].text)
    return _WARN_VOLATILE.sub("N", m.group(1).strip()) if m else None


# a communication library's own log line (not an exception): NCCL's WARN, UCX's ERROR/WARN
_LIBRARY_WARN = re.compile(r"NCCL WARN|\bUCX +(?:ERROR|WARN)\b")
_DIGITS = re.compile(r"\d+(?:\.\d+)?")
# TensorFlow's CUDA driver wrapper logging a device allocation it could not make: its allocator
# probes (a first reservation, then smaller ones) and goes on when a smaller one fits
_TF_PROBE = re.compile(r"failed to allocate [^\n]{0,80} from device: CUDA_ERROR_OUT_OF_MEMORY")


def _first_warn_shared(causes: list[Finding], failure: str) -> bool:
    """The job's first failing NCCL call (its first WARN line) was made by two or more processes
    of one node in the same words (``Call to ibv_create_cq failed with error Cannot allocate
    memory`` from devices 7 and 0): the failure belongs to what they share (the node, its HCAs,
    its shared memory), whichever rank a later line of the cascade names."""
    warns = [(f.order, text, f.data["nccl_proc"]) for f in causes
             if f.failure == failure and (text := _warn_text(f)) is not None]
    if not warns:
        return False
    _, first, proc0 = min(warns)
    host = proc0.rpartition(":")[0]
    return len({proc for _, text, proc in warns if text == first and proc.rpartition(":")[0] == host}) >= 2


# a frame of a communication library or launcher (where a collective's lost peer is raised)
# (torch.multiprocessing's queues and shared-memory reductions talk to other processes; spawn's
# own _wrap, the outermost frame of every spawned child, is only where the child began)
_COMM_FRAME = re.compile(r"torch/distributed|c10d|gloo|nccl|deepspeed/comm|horovod|/ray/|mpi4py"
                         r"|torch/multiprocessing/(?!spawn\.py)", re.IGNORECASE)


def _skipped_step(rs: RankState | None, bad: SampleRec) -> bool:
    """``bad`` logs a loss scale below the one the rank's previous line logged, and a later line of
    the rank logs a finite loss: the non-finite loss was the overflowed step the scaler skipped."""
    if rs is None:
        return False
    scale = bad.data.get("loss_scale")
    if not isinstance(scale, float):
        return False
    before = [p for p in rs.samples if p.order < bad.order and isinstance(p.data.get("loss_scale"), float)]
    after = [p for p in rs.samples if p.order > bad.order and isinstance(v := p.data.get("loss"), float) and math.isfinite(v)]
    return bool(before) and before[-1].data["loss_scale"] > scale and bool(after)


def _copy(f: Finding) -> Finding:
    return Finding(f.failure, f.role, f.priority, f.rank, f.step, f.time, f.order, list(f.evidence), f.severity,
                   f.local, dict(f.data))


def _uniq(sources: list[Source]) -> list[Source]:
    seen: set[tuple[str, int]] = set()
    out = []
    for s in sources:
        k = (s.path, s.line)
        if k not in seen:
            seen.add(k)
            out.append(s)
    return out


def _spike_names_the_rank(found: list[Finding]) -> None:
    """A grad norm that exploded on several ranks at once is the all-reduced norm, the same on
    every rank; when one rank's own loss spiked at that step or before it, alone, its batch is
    where the explosion came from: that spike leads the group (it outranks the explosions)."""
    explosions = [f for f in found if f.failure == "grad_norm_explosion"]
    spikes = [f for f in found if f.failure == "loss_spike" and f.rank is not None and f.step is not None]
    if len({f.rank for f in explosions}) < 2 or not spikes:
        return
    first = min(f.step for f in spikes if f.step is not None)
    lead = [f for f in spikes if f.step == first]
    if len(lead) == 1 and all(e.step is None or first <= e.step for e in explosions):
        lead[0].priority = max(e.priority for e in explosions) + 1


def _descent_start(moves: list[ScaleMove]) -> ScaleMove | None:
    """The first move of the unbroken run of halvings that ends the logs (each move starting at
    the scale the one before left; every rank's copy of a move counted once), with steps."""
    chain = [m for m in _dedupe_moves(moves) if m.step is not None]
    if not chain:
        return None
    start = len(chain) - 1
    while start > 0 and chain[start].from_scale is not None and chain[start].from_scale == chain[start - 1].to_scale:
        start -= 1
    return chain[start]


def _spike_leads(spikes: list[Finding], after: list[Finding]) -> list[Finding]:
    """The spike group once it is known to have started what came ``after`` (a NaN, a loss-scale
    collapse): the spikes are critical, the rest their collateral, in one group."""
    for f in spikes:
        f.severity = "critical"
    for f in after:
        f.role = Role.COLLATERAL
    return spikes + after


# a job stopped from outside after its metric lines stopped for at least this long, and this many
# times the usual time between two of them, had hung (correlate.stalled_before_stop)
STALL_MIN_SECONDS = 60.0
STALL_FACTOR = 20.0
STALL_MIN_LINES = 6  # metric lines that make a cadence to judge the silence by
def _computing(t: Event, in_library: bool = False) -> bool:
    """A process's KeyboardInterrupt (or stop) traceback shows it computing or writing when it
    was stopped (its innermost frames in the program's or a library's compute, not in a read, a
    wait or the launcher's own loop). ``in_library``: its innermost frame a library's (torch's
    backward), not the program's own line, which may be a C call no frame shows (``time.sleep``)."""
    frames = decode_frames(t.data["frames"]) if t.data.get("frames") else None
    if not frames or is_launcher(frames):
        return False
    if in_library and not is_library(frames[0]):
        return False
    place = classify(frames)
    return place.kind in (Where.CODE, Where.IO) and not reads(place)


# signals a launcher receives when someone (or something) outside stops a job: SIGTERM, SIGINT
_OUTSIDE_STOPS = frozenset({"15", "2", "SIGTERM", "SIGINT"})
# what a program may catch and go on from: an exception, an out-of-memory error (a batch-size
# search halving its batch and retrying, Lightning's scale_batch_size, accelerate's
# find_executable_batch_size, a loop skipping the batch that did not fit)
_HANDLED = frozenset({"rank_exception", "cuda_oom"})
# a metric of an evaluation pass ("val_loss", "eval/loss", "valid_ppl", "test_acc")
_EVAL_METRIC = re.compile(r"(?i)(?:val|valid|validation|eval|evaluation|test)(?:[_/.\s-]|$)")
# a step counter with its total: "step 200/200", "iter: 5000/5000", "Iteration 10 / 10"
_STEP_OF_TOTAL = re.compile(r"(?i)\b(?:global[ _]step|steps?|iter(?:ation)?s?|it)\b\s*[:=]?\s*\[?\s*(\d{1,9})\s*/\s*(\d{1,9})\b")

def _codes(raw: object) -> list[int]:
    """A fingerprint's ``ends_rank_with`` as its event carries it ("-6", "-6,-9"); [] if not that."""
    if not isinstance(raw, str):
        return []
    return [int(c) for c in raw.split(",") if c.strip().lstrip("-").isdigit()]


# finding data the correlator reads that is no part of an incident (a traceback's frames: the
# stack comparison's input, said in the narrative where it names a rank)
_INTERNAL_DATA = frozenset({"frames", "ends_rank_with"})


def _copy_bursts(moves: list[ScaleMove]) -> set[int]:
    """The ids of the moves that are other processes' copies of the one above them. apex prints
    its back-off on every rank, untagged ("reducing loss scale to 256.0" eight times in an 8-GPU
    job): every back-off of the file then comes as a burst of the same line, word for word, on
    consecutive lines, and every burst is as long as the others. Only then (two bursts at least,
    all of one length k >= 2) is each burst one move: a single process's back-offs to one scale,
    one after another with nothing logged between, are moves of their own."""
    runs: list[list[ScaleMove]] = []
    for m in sorted(moves, key=lambda m: m.order):
        last = runs[-1][-1] if runs else None
        if (last is not None and last.source.path == m.source.path and m.source.line - last.source.line == 1
                and last.source.text == m.source.text and m.step is None and last.step is None):
            runs[-1].append(m)
        else:
            runs.append([m])
    sizes = {len(r) for r in runs}
    if len(runs) < 2 or len(sizes) != 1 or sizes.pop() < 2:
        return set()
    return {id(m) for r in runs for m in r[1:]}


def _dedupe_moves(moves: list[ScaleMove]) -> list[ScaleMove]:
    """Drop the copies every rank prints of the same scale move (same scales and time)."""
    out: list[ScaleMove] = []
    by_step: set[tuple[int, float | None, float | None]] = set()
    copies = _copy_bursts(moves)
    # two reports glued on one line: several processes write this stream, so the same back-off
    # again with nothing of its own between (no step, no clock) is another process's copy
    writers = any(getattr(m, "glued", False) for m in moves)
    last_seen: ScaleMove | None = None
    for m in sorted(moves, key=lambda m: m.order):
        before, last_seen = last_seen, m
        if id(m) in copies:
            continue
        if (before is not None and out and not getattr(m, "regrown", False) and m.step is None and m.time is None
                and m.source.path == before.source.path and m.source.line - before.source.line == 1
                and m.source.text == before.source.text and m.to_scale is not None and m.to_scale > 1
                and _REDUCED.search(m.source.text)):
            # the same back-off, word for word, on the very next line with no step or clock of its
            # own: a dynamic scaler cannot back off to one scale twice in a row without growing back
            # over a window of clean steps, so this is another process printing the same move (192
            # ranks' apex lines one after another, corpus holdout28 h28b-004); a scale kept where it is
            # ("overflow, still update, loss scale adjust to 1024.0") may be a scaler at its floor
            continue
        if m.step is not None:
            # every rank logs the same (synchronised) scale: one move per step
            k = (m.step, m.from_scale, m.to_scale)
            if k in by_step:
                continue
            by_step.add(k)
        if out and not getattr(m, "regrown", False):  # (a move after a growth line is no copy)
            p = out[-1]
            if (p.from_scale, p.to_scale, p.time, p.step) == (m.from_scale, m.to_scale, m.time, m.step) and p.source.path == m.source.path and (m.time is not None or m.step is not None):
                continue
            if p.source.line == m.source.line and p.source.path == m.source.path:
                continue
            if ((p.from_scale, p.to_scale) == (m.from_scale, m.to_scale) and m.to_scale is not None
                    and m.from_scale is not None and p.source.path == m.source.path
                    and 0 < m.source.line - p.source.line <= 2):
                # the overflow line, then the metric line right below logging the new scale: one
                # move told twice (the same halving cannot happen again without the scale growing back)
                if p.step is None and m.step is not None:
                    out[-1] = dataclasses.replace(p, step=m.step)  # a copy: the state is only read
                continue
            if m.to_scale is None and m.from_scale is None and p.time == m.time and m.time is not None:
                continue  # "Grad overflow on iteration N" next to its "Reducing ..." line
            if (p.from_scale is None and m.to_scale is not None and m.to_scale == p.to_scale and getattr(m, "logged", False)
                    and p.source.path == m.source.path and 0 < m.source.line - p.source.line <= 2):
                # apex's "reducing loss scale to 262144.0" (the new scale only), then the metric row
                # right below logging 262144 where the row before had 524288: one move told twice
                out[-1] = dataclasses.replace(p, from_scale=m.from_scale, step=p.step if p.step is not None else m.step)
                continue
            if (p.to_scale is None and p.from_scale is None and m.to_scale is not None and p.source.path == m.source.path
                    and 0 < m.source.line - p.source.line <= RANK_COPY_LINES and m.step in (None, p.step)
                    and p.time in (None, m.time)):
                # the overflow report with no scale of its own ("Grad overflow on iteration 0", the
                # message on the line below DeepSpeed's logger header), then the scaler's "Reducing
                # dynamic loss scale from 65536 to 32768" a line or a few ranks' copies below: one move
                out[-1] = dataclasses.replace(m, step=p.step if m.step is None else m.step)
                continue
            if (m.to_scale is not None and m.to_scale == p.to_scale and m.from_scale in (None, p.from_scale)
                    and m.step in (None, p.step) and m.time in (None, p.time) and p.source.path == m.source.path
                    and ((0 < m.source.line - p.source.line <= RANK_COPY_LINES and m.source.text != p.source.text)
                         or (writers and m.step is None and m.time is None))):
                # "reducing loss scale to X" again a line or two below, with no step or clock of its
                # own, in a line that differs (its rank tag): another rank's copy of the same move
                # (one process printing the same line again overflowed again after growing back)
                continue
        out.append(m)
    return out


def _overflowing_every_step(rs: RankState, precision: object) -> int:
    """How many logged steps in a row, from the series' first grad norm (at the start of training)
    to its last line, logged a non-finite grad norm beside a finite loss that keeps moving
    (EVERY_STEP_RUN+ of them; else 0). An update with inf/NaN gradients makes the next forward non-finite; a loss still
    finite and moving step after step means no such update was applied: the fp16 gradients (or
    the fp16 norm of them) overflow and the scaler skips the step, or clipping by an inf norm
    zeroes it (a LoRA run under HF Trainer logged ``'grad_norm': inf`` on all of its 683 steps,
    its loss flat at 2.44: corpus holdout23 h23g-017). Not after finite norms (a coefficient that
    blew up mid-run makes fp32's norm inf and clipping zeroes the update: a NaN-class failure of
    its own), nor in an excerpt from mid-run. Not in bf16 (no scaler, fp32's range), nor a
    loss that is 0.0 or repeats (HF Trainer's NaN filter writes those for a NaN model)."""
    if rs.first_bad_loss is not None or rs.first_bad_global is not None or rs.first_bad_grad is None or precision == "bf16":
        return 0
    first = rs.first_bad_grad
    run = [r for r in rs.samples if r.order >= first.order and r.data.get("grad_norm") is not None]
    if len(run) < EVERY_STEP_RUN or any(math.isfinite(r.data["grad_norm"]) for r in run):
        return 0
    if any(r.order < first.order and r.data.get("grad_norm") is not None for r in rs.samples):
        return 0  # finite norms before: something changed mid-run (a coefficient blown up, bad data)
    # the first line must be the run's first or second logging point (its clock at most twice the
    # logging interval): an excerpt from mid-run does not show whether the norm was ever finite
    clock = [r.step if r.step is not None else r.data.get("epoch") for r in run]
    if any(not isinstance(c, (int, float)) for c in clock):
        return 0
    gaps = [b - a for a, b in itertools.pairwise(clock) if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b > a]
    if not gaps or not isinstance(c0 := clock[0], (int, float)) or c0 > 2 * min(gaps):
        return 0
    losses = [r.data.get("loss") for r in run]
    if any(not isinstance(v, float) or not math.isfinite(v) or v == 0.0 for v in losses):
        return 0
    moving = sum(1 for a, b in itertools.pairwise(losses) if a != b)
    return len(run) if moving >= EVERY_STEP_MOVING * (len(run) - 1) else 0


def _level_desync(base: list[Finding], cat: Any) -> None:
    """PyTorch's desync check (TORCH_DISTRIBUTED_DEBUG=DETAIL) as two ranks tell it, each naming the
    other at sequence number 0 ("Rank 0 is running ...(SequenceNumber=402OpType=BARRIER), but Rank 2
    is running ...(SequenceNumber=0OpType=ALLGATHER_COALESCED)", and rank 2 says the same of rank 0):
    a 0 both ways is no progress (the check does not count the other's op), so neither is behind;
    they are at one point running different collectives, the level reading of the same line
    (``when_level``), and the rank every report names is the odd one."""
    zero = [f for f in base if f.failure == "rank_hang" and f.data.get("zero_pair")]
    sides = {tuple(str(f.data["zero_pair"]).split(",")) for f in zero}
    if not any((b, a) in sides for a, b in sides):
        return
    level = next((fp.when_level for e in cat if e.id == "rank_hang" for fp in e.fingerprints
                  if fp.when_level is not None), None)
    if level is None:
        return
    for f in zero:
        f.failure = level
        f.data["pair"] = f.data.pop("zero_pair")
        # (the rank the line named as behind is no culprit now: the pairs name the odd one)
        f.rank = None
        f.data.pop("rank", None)
        f.data.pop("rank_from", None)


def _calibrating(rs: RankState, precision: object) -> bool:
    """Non-finite grad norms in a run's first logged steps while its loss stays finite and keeps
    moving (``[1][50/29572] grad_norm: nan loss: 52.26``, then ``inf`` and ``50.99``): the AMP
    scaler skipping steps on its way down from its initial scale, seen before any recovery.
    A loss frozen at one value (HF Trainer's NaN filter repeats the last one) or 0.0 is not;
    nor is bf16 (no scaler), a static scale of 1 or less, or a NaN after finite grad norms
    (calibration overflows come first: the scaler starts too high)."""
    if rs.first_bad_loss is not None or precision == "bf16" or (rs.scale_min is not None and rs.scale_min <= 1):
        return False
    samples = list(rs.samples)
    bad = [r for r in samples if (g := r.data.get("grad_norm")) is not None and not math.isfinite(g)]
    if not bad or len(bad) > 3 or any(r.data.get("scope") == "global" for r in bad):
        # (HF Trainer's dicts: its NaN filter keeps the loss finite while the model is NaN)
        return False
    if any((g := r.data.get("grad_norm")) is not None and math.isfinite(g) for r in samples[: samples.index(bad[0])]):
        return False
    losses = [r.data.get("loss") for r in bad]
    if any(v is None or not math.isfinite(v) or v == 0.0 for v in losses) or len(set(losses)) != len(losses):
        return False
    if any((e := r.data.get("epoch")) is not None and e >= 2 for r in bad):
        return False  # a later epoch ("Epoch [12][700/3953] ... grad_norm: nan"): no start-up
    if all(r.step is not None for r in bad):
        return all(r.step is not None and r.step <= 200 for r in bad)
    return samples.index(bad[0]) < 3 and all(r.step is None for r in bad)


def _after_oom(base: list[Finding]) -> None:
    """An illegal memory access a process reports after its own allocation failed (same file,
    same rank or no rank, later line) touched the buffer that was never allocated or mapped
    (NVSHMEM's barrier on a heap whose cuMemCreate failed, a kernel handed a null workspace):
    the OOM is the failure, the access its consequence."""
    ooms = [f for f in base if f.failure == "cuda_oom" and f.role is Role.CAUSE and f.evidence]
    if not ooms:
        return
    for f in base:
        if f.failure != "cuda_illegal_memory_access" or f.role is not Role.CAUSE or not f.evidence:
            continue
        src = f.evidence[0]
        if any(o.evidence[0].path == src.path and o.evidence[0].line < src.line
               and (o.rank is None or f.rank is None or o.rank == f.rank) for o in ooms):
            f.role = Role.COLLATERAL
            f.data["explained_by"] = "cuda_oom"


def _precedes(first: list[Finding], then: list[Finding]) -> bool:
    """Did the earliest of ``first`` happen before the earliest of ``then`` (step clock, else order)?"""
    a = min(first, key=lambda f: (f.step if f.step is not None else math.inf, f.order))
    b = min(then, key=lambda f: (f.step if f.step is not None else math.inf, f.order))
    if a.step is not None and b.step is not None:
        return a.step < b.step
    ea, eb = a.evidence[0], b.evidence[0]
    return ea.path == eb.path and ea.line < eb.line


def _spike_passed(rs: RankState, at: SampleRec) -> bool:
    """A loss spike that came and went: within ``SPIKE_BACK_WITHIN`` logged values the loss was
    back near the level it jumped from (a quarter of the way up at most), and of the
    ``SPIKE_PASSED_AFTER``+ values logged since, the typical one and the last ones sit within
    twice that level. One bad batch, a noisy heavy-tailed loss, an epoch's first batches: the
    run goes on as before, so it is noted (info), never paged. A spike the loss does not come
    back from, or one that ends in NaN, stays a warning."""
    v, base = at.data.get("loss"), at.data.get("baseline_median")
    if not isinstance(v, float) or not isinstance(base, float) or not (math.isfinite(v) and math.isfinite(base)):
        return False
    if base <= 0 or v <= base:
        return False
    if _epoch_start_again(rs, at, v):
        return True
    after: list[float] = []
    for p in rs.samples:
        x = p.data.get("loss")
        if p.order > at.order and isinstance(x, float):
            if not math.isfinite(x):
                return False
            after.append(x)
    if len(after) < SPIKE_PASSED_AFTER:
        return False
    if _relearned(v, after):
        return True
    near = base + 0.25 * (v - base)
    if min(after[:SPIKE_BACK_WITHIN]) > near:
        return False
    typical = sorted(after)[len(after) // 2]
    tail = sorted(after[-3:])[1]
    return typical <= 2 * base and tail <= 2 * base


def _relearned(v: float, after: list[float]) -> bool:
    """The loss jumped and then came down again at (nearly) every logged step, to a tenth of the
    jump or less: the model learning anew (a curriculum stage that adds classes, a new dataset
    mixed in), not a divergence, which stays up or swings. ``RELEARN_VALUES``+ values after the
    jump, ``RELEARN_DOWN`` of the moves downward."""
    if len(after) < RELEARN_VALUES or v <= 0:
        return False
    moves = [b - a for a, b in itertools.pairwise([v, *after])]
    return sum(m < 0 for m in moves) >= RELEARN_DOWN * len(moves) and after[-1] <= 0.1 * v and max(after) < v


def _assert_after_nan(base: list[Finding], numeric: list[Finding]) -> None:
    """A device-side assert (an index kernel's ``Assertion `dstIndex < dstAddDimSize` failed``)
    below lines of the same file where the loss had already gone non-finite: NaN features turned
    into an out-of-range index. The NaN is the cause; the assert and its traceback are its
    consequence (a device-side assert with no NaN before it stays the cause)."""
    bad = [(f.evidence[0].path, f.evidence[0].line) for f in numeric if f.role is Role.CAUSE and f.evidence]
    if not bad:
        return
    for f in base:
        if f.data.get("device_assert") and f.role is Role.CAUSE and f.evidence and any(
                path == f.evidence[0].path and line < f.evidence[0].line for path, line in bad):
            f.role = Role.COLLATERAL
            f.data["after_nonfinite"] = True


def _placeholder_nan(rs: RankState, rec: SampleRec) -> bool:
    """The series' very first loss is NaN and every loss logged after it (PLACEHOLDER_AFTER or more)
    is finite: a metric printed before it was computed (Lightning's progress line shows
    ``train_loss_epoch=nan`` for epoch 0 before the first epoch ended), not a NaN in training."""
    v = rec.data.get("loss")
    if not isinstance(v, float) or math.isfinite(v) or rec.data.get("loss_missing"):
        return False
    if rs.n_samples != len(rs.samples) or not any(p.order == rec.order for p in rs.samples):
        return False  # the window dropped older samples: whether it was the first is unknown
    after = 0
    for p in rs.samples:
        x = p.data.get("loss")
        if not isinstance(x, float):
            continue
        if p.order < rec.order:
            return False  # a loss was logged before it: not the first
        if p.order > rec.order:
            if not math.isfinite(x):
                return False
            after += 1
    return after >= PLACEHOLDER_AFTER


def _cut_copies(base: list[Finding]) -> None:
    """An exception line cut short (a paste or a log ends mid-line: ``RuntimeError: NCCL error in:
    /opt/conda/.../torch/l``) whose text is the start of a line another finding already named
    (``... ProcessGroupNCCL.cpp:388, invalid argument``): the same error printed by another
    process, so the same failure, not a plain exception outranking it."""
    named = [f for f in base if f.failure != "rank_exception" and f.role is Role.CAUSE and f.evidence]
    if not named:
        return
    for f in base:
        msg = f.data.get("message")
        if f.failure != "rank_exception" or f.role is not Role.CAUSE or not isinstance(msg, str) or len(msg) < CUT_MIN_CHARS:
            continue
        exc = str(f.data.get("exc_type", "")).rsplit(".", 1)[-1]
        head = f"{exc}: {msg}"
        for g in named:
            text = g.evidence[0].text
            if g.order < f.order and head in text and not text.rstrip().endswith(head):
                f.failure = g.failure
                f.priority = g.priority
                f.data = {**{k: v for k, v in g.data.items() if k not in ("rank", "rank_from")},
                          **{k: v for k, v in f.data.items() if k in ("rank_from",)}, "cut_copy": True}
                break


def _stepped_past(rs: RankState, at: Source) -> bool:
    """The rank logged, below the line ``at`` of the same file, a step beyond every step it had
    logged above it."""
    before = [p.step for p in rs.samples if p.step is not None and p.source.path == at.path and p.source.line < at.line]
    after = [p.step for p in rs.samples if p.step is not None and p.source.path == at.path and p.source.line > at.line]
    return bool(before) and bool(after) and max(after) > max(before)


def _own_reset(f: Finding) -> bool:
    """A connection reset raised through the program's own frames only (an upload, a REST call,
    a data fetch), no communication library's: the program's own network error, an exception
    like any other, not a collective's lost peer."""
    frames = f.data.get("frames")
    return (f.failure == "peer_connection_lost" and f.role is not Role.BENIGN
            and not (isinstance(frames, str) and _COMM_FRAME.search(frames))
            and bool(f.evidence) and "ConnectionResetError" in f.evidence[0].text)


def _printed_below(f: Finding, g: Finding) -> bool:
    """``f``'s line is below ``g``'s in the same file (a sample's and a matched line's arrival
    orders are counted apart; their lines are not)."""
    return bool(f.evidence and g.evidence and f.evidence[0].path == g.evidence[0].path
                and f.evidence[0].line > g.evidence[0].line)


def _exception_key(f: Finding) -> tuple[int | None, str, str, str]:
    """An exception finding as the same exception raised again: its rank, type, message with its
    numbers left out, and its innermost frame."""
    frames = f.data.get("frames")
    inner = frames.split("\n", 1)[0] if isinstance(frames, str) else ""
    return (f.rank, str(f.data.get("exc_type") or ""), _DIGITS.sub("N", str(f.data.get("message") or "")), inner)


def _explosion_passed(rs: RankState, at: SampleRec) -> bool:
    """A gradient-norm outlier that came and went: the next norm logged for a later step is back
    within three times the level it jumped from, the typical one of the ``SPIKE_PASSED_AFTER``+ norms logged
    since sits within twice it, and every loss from the outlier on is finite and, past the next
    ``SPIKE_BACK_WITHIN`` (the outlier batch's own loss), no higher than twice the typical loss
    before it (one bad batch the clipping absorbed: noted, never paged)."""
    g, base = at.data.get("grad_norm"), at.data.get("baseline_median")
    if not isinstance(g, float) or not isinstance(base, float) or not (math.isfinite(g) and math.isfinite(base)) or base <= 0:
        return False
    norms: list[float] = []
    losses_after: list[float] = []
    losses_before: list[float] = []
    for p in rs.samples:
        x, lo = p.data.get("grad_norm"), p.data.get("loss")
        if p.order > at.order and isinstance(x, float):
            if not math.isfinite(x):
                return False
            if at.step is None or p.step != at.step:
                # (the outlier's own step logged again: a guard's warning, then the step's metric line)
                norms.append(x)
        if isinstance(lo, float):
            if not math.isfinite(lo) and p.order >= at.order:
                return False
            (losses_after if p.order >= at.order else losses_before).append(lo)
    if len(norms) < SPIKE_PASSED_AFTER or norms[0] > 3 * base or sorted(norms)[len(norms) // 2] > 2 * base:
        return False
    if losses_before and losses_after:
        typical = sorted(losses_before)[len(losses_before) // 2]
        # (the outlier batch's own loss, logged within the next SPIKE_BACK_WITHIN values, may be as far
        # out as its norm: the losses after it must be back)
        if typical > 0 and (max(losses_after[SPIKE_BACK_WITHIN:], default=math.inf) > 2 * typical
                            or len(losses_after) <= SPIKE_BACK_WITHIN):
            return False
    return True


def _epoch_start_again(rs: RankState, at: SampleRec, v: float) -> bool:
    """The step counter went back (a per-epoch counter starting a new epoch) and the loss at
    that same step of an earlier epoch was at least half as high: the high first batches of
    each epoch (a sawtooth over epochs), not a spike."""
    if at.step is None:
        return False
    prev: SampleRec | None = None  # the last sample with a step (an epoch's eval line has none)
    same: list[float] = []
    for p in rs.samples:
        if p.order >= at.order:
            break
        x = p.data.get("loss")
        if p.step == at.step and isinstance(x, float) and math.isfinite(x):
            same.append(x)
        if p.step is not None:
            prev = p
    return (prev is not None and prev.step is not None and prev.step > at.step
            and bool(same) and max(same) >= 0.5 * v)


_REDUCED = re.compile(r"(?i)\b(?:reduc|halv|decreas|lower|back(?:ed|ing)? off)")  # a back-off that says it cut the scale
_EXIT_FINALIZERS = frozenset({"_run_finalizers", "_exit_function"})  # multiprocessing/util.py's clean-up at exit
OWN_ERROR_LINES = 5  # a crash at most this many lines below its own process's communication error


def _abort_after_raised_error(base: list[Finding]) -> None:
    """A native crash (glibc's "double free or corruption", a segfault) printed at most
    OWN_ERROR_LINES below an error a process had just raised (its traceback's frames, or an
    exception type) in the same file, for the same rank or an untagged line: the process was
    already exiting on that error and crashed tearing down (DeepSpeed's "Current loss scale
    already at minimum" exceptions, then "double free or corruption (!prev)": corpus holdout28
    h28a-007). The raised error is the cause, the crash its consequence."""
    raised = [c for c in base if c.role is Role.CAUSE and c.evidence and c.failure not in ("rank_segfault", "native_abort")
              and (c.data.get("frames") or c.data.get("exc_type"))]
    if not raised:
        return
    for f in base:
        if f.failure not in ("rank_segfault", "native_abort") or f.role is not Role.CAUSE or not f.evidence:
            continue
        src = f.evidence[0]
        if any(c.order < f.order and c.evidence[0].path == src.path and 0 < src.line - c.evidence[0].line <= OWN_ERROR_LINES
               and (f.rank is None or c.rank in (None, f.rank)) for c in raised):
            f.role = Role.COLLATERAL
            f.data["after_own_error"] = True


_LIBRARY_DEBUG = re.compile(r"\b(?:NCCL|RCCL|HCCL|UCX|NVSHMEM) (?:INFO|WARN|TRACE)\b")
_BUS_ERROR = re.compile(r"Bus error|SIGBUS|[Ss]ignal 7\b")
NATIVE_BT_LINES = 80  # a crash line's backtrace starts at most this far below it (several processes' reports first)


def _crash_after_own_comm_error(base: list[Finding]) -> None:
    """A rank's native crash (a segfault, an abort) printed right below that same rank's own
    communication-library error, in the same file (UCX's "cuda_ipc_md.c UCX ERROR ... is failed"
    then "Caught signal 11" inside MPI_Bcast): the transport failed and the process died in it.
    The error is the cause, the crash its consequence. So is a CUDA fault NCCL reports in its own
    WARN line after the same process's (host:pid) NCCL error."""
    first_by_proc: dict[str, int] = {}
    for c in base:
        proc = c.data.get("nccl_proc")
        if c.failure in _COMM_FAILURES and c.role is Role.CAUSE and isinstance(proc, str):
            first_by_proc[proc] = min(c.order, first_by_proc.get(proc, c.order))
    for f in base:
        proc = f.data.get("nccl_proc")
        if (f.failure == "cuda_illegal_memory_access" and f.role is Role.CAUSE and isinstance(proc, str)
                and first_by_proc.get(proc, f.order) < f.order and f.evidence and _LIBRARY_WARN.search(f.evidence[0].text)):
            # NCCL's own CUDA call failing ("NCCL WARN Cuda failure 'an illegal memory access'") in a
            # process whose communicator had already failed on the network (its proxy's completion
            # error, the comm destroyed): NCCL tearing down, not a kernel of the program's
            f.role = Role.COLLATERAL
            f.data["after_own_error"] = True
    native = [c for c in base if c.failure in _COMM_FAILURES and c.role is Role.CAUSE and c.data.get("native_crash") and c.evidence]
    if native and any(f.failure == "rank_segfault" and f.evidence and _BUS_ERROR.search(f.evidence[0].text) for f in base):
        # a bus error inside the library is its shared memory running out (a container's small
        # /dev/shm under NCCL's or MPI's shm transport): the host's limit, not the library failing
        for c in native:
            c.role = Role.COLLATERAL
        native = []
    for f in base:
        # a crash report whose own backtrace, printed right below it, runs in the communication
        # library (Open MPI's group code, NCCL's proxy): the library crashed in that process
        # (and the launcher's summary of those processes' exit by SIGSEGV, -11: the same deaths)
        if (f.failure == "rank_segfault" and f.role is Role.CAUSE and f.evidence and native and (
                f.data.get("rank_from") == "launcher" or any(
                    c.evidence[0].path == f.evidence[0].path and 0 < c.evidence[0].line - f.evidence[0].line <= NATIVE_BT_LINES
                    for c in native))):
            f.role = Role.COLLATERAL
            f.data["in_library"] = True
    comm = [f for f in base if f.failure in _COMM_FAILURES and f.role is Role.CAUSE and f.rank is not None and f.evidence]
    if not comm:
        return
    for f in base:
        if f.failure not in ("rank_segfault", "native_abort") or f.role is not Role.CAUSE or f.rank is None or not f.evidence:
            continue
        src = f.evidence[0]
        if any(c.rank == f.rank and c.order < f.order and c.evidence[0].path == src.path
               and 0 < src.line - c.evidence[0].line <= OWN_ERROR_LINES for c in comm):
            f.role = Role.COLLATERAL
            f.data["after_own_error"] = True


def _learning_through(rs: RankState, at: SampleRec) -> bool:
    """The rank's loss fell well below its earlier level at the grad norm's rise and stayed there:
    a model leaving a plateau (the gradient grows as the loss drops), not an explosion. Needs 3+
    finite losses before and every loss from the rise on finite and at most LEARNING_DROP of
    their median."""
    before: list[float] = []
    after: list[float] = []
    for p in rs.samples:
        x = p.data.get("loss")
        if not isinstance(x, float):
            continue
        (before if p.order < at.order else after).append(x)
    if len(before) < 3 or not after or not all(math.isfinite(x) for x in after):
        return False
    base = sorted(x for x in before if math.isfinite(x))
    if len(base) < 3:
        return False
    med = base[len(base) // 2]
    return med > 0 and max(after) <= LEARNING_DROP * med


def _spacing_trend(moves: list[ScaleMove]) -> str | None:
    """How the gaps between successive overflows evolve: "thinning" (growing gaps: the
    scaler is settling), "speeding" (shrinking gaps: heading for collapse), "steady", or
    None when there are too few moves or no clock. Steps are the clock when every move
    has its own step, else the lines' timestamps."""
    if len(moves) < 4:
        return None
    steps = [m.step for m in moves]
    times = [m.time for m in moves]
    clock: list[float]
    if all(s is not None for s in steps) and len(set(steps)) == len(steps):
        clock = [float(s) for s in steps if s is not None]
    elif all(t is not None for t in times):
        clock = [float(t) for t in times if t is not None]
    else:
        return None
    gaps = [max(b - a, 0.0) for a, b in itertools.pairwise(clock)]
    inc = sum(b > a for a, b in itertools.pairwise(gaps))
    dec = sum(b < a for a, b in itertools.pairwise(gaps))
    head = gaps[:2]
    if inc >= dec and gaps[-1] >= 3 * max(min(head), 1e-9):
        return "thinning"
    if dec >= inc and 3 * gaps[-1] <= max(head):
        return "speeding"
    return "steady"


def _every_step_run(moves: list[ScaleMove]) -> int:
    """Length of the final run of overflows on consecutive steps (every step overflowing);
    0 when the moves carry no steps of their own (a count alone is not a trend)."""
    run = 0
    prev: int | None = None
    for m in moves:
        if m.step is None:
            return 0
        run = run + 1 if prev is not None and m.step - prev == 1 else 1
        prev = m.step
    return run


def _runs(moves: list[ScaleMove]) -> list[tuple[int, int]]:
    """The runs of back-to-back scale reductions, as (index of the first move, length)."""
    runs: list[tuple[int, int]] = []
    prev: ScaleMove | None = None
    for i, m in enumerate(moves):
        if not runs or (prev is not None and prev.to_scale is not None and (
                (m.from_scale is not None and m.from_scale > prev.to_scale)
                or (m.from_scale is None and m.to_scale is not None and m.to_scale >= prev.to_scale))) or (
                prev is not None and prev.step is not None and m.step is not None and m.step - prev.step > 5):
            runs.append((i, 0))  # the scale grew in between (or steps apart): a new episode
        runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        prev = m
    return runs


def _final_run(moves: list[ScaleMove]) -> int:
    """Length of the last run of back-to-back scale reductions."""
    runs = _runs(moves)
    return runs[-1][1] if runs else 0


def _longest_run_start(moves: list[ScaleMove]) -> ScaleMove | None:
    """The first move of the longest run of back-to-back reductions (the earliest of equals)."""
    runs = _runs(moves)
    return moves[max(runs, key=lambda r: (r[1], -r[0]))[0]] if runs else None


def incidents(state: JobState, ended: bool = False) -> list[Incident]:
    """The job's incidents, most important first. ``ended``: the logs are complete (a finished
    job's logs diagnosed offline), so where they stop is evidence too; the live daemon, which
    cannot know that, leaves it False."""
    return _Correlator(state, ended).run()

