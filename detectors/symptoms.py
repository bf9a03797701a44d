"""The seed's symptoms as detectors: what users of mixed precision actually complain about.

Four questions, answered from the logs of a run (and, where a comparison is needed, of a
baseline run of the same job in another precision):

- ``amp_no_speedup`` — mixed precision does not speed training up: steady-state
  throughput of the run against the baseline (``--baseline``), below the expected
  speed-up (``--expect-speedup``, default ``MIN_SPEEDUP``); fp16 on a GPU without tensor
  cores (compute capability < 7.0) from the context alone; autocast/GradScaler
  "Disabling" warnings (catalog fingerprints).
- ``bf16_accuracy_gap`` — the 16-bit run's evaluation loss stays above the baseline's at
  matching steps (or, without evaluation losses, its final training loss does).
- ``bf16_memory_overhead`` — the 16-bit run's peak memory is not (much) below the
  baseline's: fp32 master weights and optimizer states do not shrink.
- ``fp16_early_instability`` — the loss is non-monotonic in the first ``EARLY_STEPS``
  steps of an fp16 job: explained (loss-scale calibration, LR warm-up, mini-batch noise;
  info) or unstable (no progress, or a jump well above the recent level; warning).

Plus one cross-rank check: ``nccl_version_mismatch`` when ranks or hosts report different
``NCCL version`` lines (NCCL's own "Mismatched NCCL version" warning is a catalog
fingerprint and goes through the correlator like any other failure).

State: ``SymptomTrack`` lives on ``JobState.symptoms`` and is fed every ``SampleRec`` by
``JobState._sample``; it keeps bounded series (throughput, eval losses, memory, NCCL
versions, the early loss window, and a thinned per-rank loss/loss-scale series for the
report timeline). ``symptom_incidents(state, ctx)`` is pure and deterministic: it is
called by the correlator each time incidents are computed and returns its own incidents
(never merged into the fatal one), most of them ``warning`` or ``info``.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from detectors.gpus import compute_capability
from detectors.model import Incident, RankKey, Role, Source
from detectors.tracks import EARLY_STEPS, PerfPoint, SeriesPoint, SymptomOptions, SymptomTrack

if TYPE_CHECKING:
    from detectors.detect import JobState

__all__ = [
    "ACCURACY_REL_GAP",
    "EARLY_STEPS",
    "MEMORY_EXPECTED_RATIO",
    "MEMORY_MORE_RATIO",
    "MIN_SPEEDUP",
    "SYMPTOM_IDS",
    "SeriesPoint",
    "SymptomOptions",
    "SymptomTrack",
    "symptom_incidents",
]

SYMPTOM_IDS = ("amp_no_speedup", "bf16_accuracy_gap", "bf16_memory_overhead", "fp16_early_instability")
SIXTEEN_BIT = ("fp16", "bf16")

# --- thresholds (docs/symptoms-and-check.md explains each) --------------------------------
MIN_SPEEDUP = 1.15  # a 16-bit run below this speed-up over fp32 "did not speed up"
WARMUP_FRACTION = 0.1  # leading share of throughput samples ignored (compilation, warm-up)
ACCURACY_REL_GAP = 0.02  # eval loss this much above the baseline (relative) is a gap
TRAIN_REL_GAP = 0.03  # same, for the fallback on final training losses
PERSISTENT_SHARE = 0.75  # share of the last evaluations that must show the gap
LAST_EVALS = 5
PLATEAU_REL = 0.01  # the last 3 evals within 1 % of each other: a plateau
MEMORY_EXPECTED_RATIO = 0.75  # 16-bit peak >= 75 % of fp32's: "did not shrink" (info)
MEMORY_MORE_RATIO = 1.05  # 16-bit peak >= 105 % of fp32's: "uses more" (warning)
EARLY_MIN_POINTS = 10
EARLY_UP_SHARE = 0.3  # share of steps on which the loss rose: non-monotonic
EARLY_PROGRESS = 0.02  # last-quarter median at most 98 % of the first quarter's: progress
EARLY_JUMP = 1.0  # a loss more than 2x the median of the 5 points before it: a jump
EARLY_FLAT = 0.1  # every early loss within 10 % of their median: flat (its ups are noise)
EARLY_HELD = 10  # skipped steps, times this, at least the window's span: the scaler held the weights still
FAST_FP16_CC = 7.0  # tensor cores (fast fp16) from Volta on

# --- bounds -------------------------------------------------------------------------------
BASELINE_TAG = "baseline:"  # evidence from the baseline run is shown as baseline:<path>


# ================================================================== the detectors
@dataclass
class _Symptom:
    failure: str
    severity: str
    narrative: list[str]
    evidence: list[Source]
    step: int | None = None
    time: float | None = None
    rank: int | None = None
    data: dict[str, Any] = field(default_factory=dict)


def symptom_incidents(state: JobState, ctx: dict[str, Any] | None = None,
                      others: list[Incident] | None = None) -> list[Incident]:
    """The symptom incidents of ``state`` (compared with ``state.symptoms.options.baseline``).

    ``others``: the incidents the correlator already found; next to a critical one, info-level
    observations (an expected early non-monotonic loss, memory that did not halve) are left out.
    """

    track: SymptomTrack | None = getattr(state, "symptoms", None)
    if track is None:
        return []
    ctx = ctx if ctx is not None else state.context()
    found: list[_Symptom] = []
    found += _speed(state, track, ctx)
    found += _accuracy(state, track, ctx)
    found += _memory(state, track, ctx)
    found += _early(state, track, ctx, others or [])
    found += _nccl_versions(state, track)
    if any(i.severity == "critical" for i in others or []):
        found = [s for s in found if s.severity != "info"]
    out: list[Incident] = []
    for s in found:
        entry = state.catalog[s.failure]
        ev = _uniq(s.evidence)[:8]
        # same scheme as the correlator's ids: independent of which file was read first
        key = f"{state.job}|symptom|{s.failure}|{'job' if s.rank is None else s.rank}"
        iid = f"{s.failure}-{hashlib.sha1(key.encode()).hexdigest()[:10]}"
        data = dict(s.data)
        data["priority"] = entry.priority
        data["symptom"] = True
        out.append(Incident(iid, s.failure, s.severity, entry.title, entry.hardware, s.rank, s.step, s.time, ev,
                            [], s.narrative, data))
    return out


# --- a. mixed precision does not speed up ---------------------------------------------------
_UNIT_ORDER = ("samples/s", "tokens/s", "TFLOP/s/GPU", "it/s", "ms/iteration")
_PER_RUN_UNITS = ("samples/s", "tokens/s")  # reported for the whole job (scale with the world size)


def _speeds(track: SymptomTrack) -> dict[str, list[PerfPoint]]:
    """Throughput samples by unit ("ms/iteration" kept as its own unit; lower is better)."""
    out: dict[str, list[PerfPoint]] = {}
    for p in track.throughput.items:
        if p.data.get("throughput") is not None and p.data.get("throughput_unit"):
            out.setdefault(p.data["throughput_unit"], []).append(p)
        if p.data.get("iter_ms"):
            out.setdefault("ms/iteration", []).append(p)
    return out


def _steady(values: list[float]) -> float | None:
    vals = [v for v in values if v is not None and math.isfinite(v) and v > 0]
    if not vals:
        return None
    if len(vals) >= 5:
        vals = vals[max(1, int(len(vals) * WARMUP_FRACTION)):]
    return statistics.median(vals)


def _unit_values(ps: list[PerfPoint], unit: str) -> list[float]:
    return [p.data["iter_ms"] if unit == "ms/iteration" else p.data["throughput"] for p in sorted(ps, key=lambda p: p.order)]


_GPU_FRAMEWORKS = frozenset({"deepspeed", "megatron"})  # their logs mean a GPU job


def _speed(state: JobState, track: SymptomTrack, ctx: dict[str, Any]) -> list[_Symptom]:
    out: list[_Symptom] = []
    prec = ctx.get("precision")
    gpu = ctx.get("gpu")
    cc = _cc(ctx)
    disabled = [f for f in state.findings if f.failure == "amp_no_speedup"]
    notes: list[str] = []
    if disabled:
        notes.append("Autocast/GradScaler disabled itself at start-up (the job computes in fp32 whatever the config says): "
                     f"{disabled[0].evidence[0].text.strip()[:200]}")
    if prec == "fp16" and cc is not None and cc < FAST_FP16_CC:
        notes.append(f"fp16 on {gpu or 'this GPU'} (compute capability {cc}): no tensor cores, so fp16 math is not faster than "
                     "fp32 (P40/P4/GTX 10xx even run fp16 at 1/64 of the fp32 rate). Train in fp32 there, or use a GPU with "
                     "compute capability >= 7.0.")
    base = track.options.baseline
    expect = track.options.expect_speedup
    measured: _Symptom | None = None
    if base is not None and getattr(base, "symptoms", None) is not None:
        measured = _compare_speed(state, track, base, ctx, expect)
    if measured is not None:
        measured.narrative += notes
        out.append(measured)
    elif notes:
        evidence = [f.evidence[0] for f in disabled[:2]]
        if prec == "fp16" and cc is not None and cc < FAST_FP16_CC:
            evidence.append(Source("<context>", 0, f"precision=fp16 on {gpu} (compute capability {cc})"))
        # autocast/GradScaler off because there is no GPU at all, in a job whose logs show no GPU,
        # no GPU framework and no configured precision, is a CPU run (a test, a laptop): a note,
        # not an alert. A bf16/fp16 config (DeepSpeed's, HF's) that found no CUDA is a GPU job
        # that lost its GPUs: an alert
        no_gpu = (bool(disabled) and all(f.role is Role.BENIGN for f in disabled) and prec is None
                  and gpu is None and ctx.get("framework") not in _GPU_FRAMEWORKS)
        out.append(_Symptom("amp_no_speedup", "info" if no_gpu else "warning", notes, evidence,
                            step=disabled[0].step if disabled else None, time=disabled[0].time if disabled else None,
                            data={"reason": "autocast_disabled" if disabled else "no_fast_fp16", "compute_capability": cc}))
    return out


def _compare_speed(state: JobState, track: SymptomTrack, base: JobState, ctx: dict[str, Any],
                   expect: float | None) -> _Symptom | None:
    bctx = base.context()
    prec, bprec = ctx.get("precision"), bctx.get("precision")
    if expect is None and (prec not in SIXTEEN_BIT or prec == bprec):
        return None  # not a mixed-precision-vs-fp32 comparison and no explicit expectation
    run_s, base_s = _speeds(track), _speeds(base.symptoms)
    unit = next((u for u in _UNIT_ORDER if run_s.get(u) and base_s.get(u)), None)
    if unit is None:
        return None
    rv, bv = _steady(_unit_values(run_s[unit], unit)), _steady(_unit_values(base_s[unit], unit))
    if rv is None or bv is None:
        return None
    ws, bws = _int(ctx.get("world_size")), _int(bctx.get("world_size"))
    scaled = ""
    if unit in _PER_RUN_UNITS and ws and bws and ws != bws:
        rv, bv = rv / ws, bv / bws
        scaled = f" per rank (world sizes {ws} and {bws})"
    speedup = bv / rv if unit == "ms/iteration" else rv / bv
    threshold = expect if expect is not None else MIN_SPEEDUP
    if speedup >= threshold:
        return None
    shown = "ms per iteration" if unit == "ms/iteration" else unit
    narrative = [
        f"The {prec or 'mixed-precision'} run runs at {rv:.4g} {shown}{scaled} (steady-state median), the "
        f"{bprec or 'baseline'} baseline at {bv:.4g}: speed-up {speedup:.2f}x, "
        + (f"expected at least {threshold:g}x (--expect-speedup)." if expect is not None else
           f"which is no real speed-up (below {threshold:g}x)."),
    ]
    cc = _cc(ctx)
    gpu = ctx.get("gpu")
    if gpu is None:
        narrative.append("The logs name no GPU. Without CUDA, autocast runs on the CPU, where bf16/fp16 are rarely faster than "
                         "fp32 (only CPUs with AMX/AVX512-BF16 have fast bf16).")
    elif cc is not None and prec == "bf16" and cc < 8.0:
        narrative.append(f"bf16 on {gpu} (compute capability {cc}) is emulated: no bf16 tensor cores before Ampere. Use fp16 "
                         "with a GradScaler there.")
    elif cc is not None and cc >= 8.0:
        narrative.append(f"{gpu} (compute capability {cc}) has 16-bit tensor cores, so the step is probably not bound by math: "
                         "check the input pipeline, communication and matrix shapes (multiples of 8); the fp32 baseline may "
                         "also use TF32 already.")
    evidence = [run_s[unit][-1].source, _tag(base_s[unit][-1].source)]
    last = run_s[unit][-1]
    return _Symptom("amp_no_speedup", "warning", narrative, evidence, step=last.step, time=last.time,
                    data={"speedup": round(speedup, 4), "unit": unit, "run": rv, "baseline": bv,
                          "expected": threshold})


# --- b. bf16 less accurate than fp32 --------------------------------------------------------
def _eval_series(state: JobState, track: SymptomTrack) -> list[tuple[tuple[str, float], float, PerfPoint]]:
    """Job-level evaluation losses: (alignment key, value, sample), averaged over ranks per key."""
    evs = [p for p in track.evals.items if _num(p.data.get("eval_loss")) is not None]
    if not evs:
        return []
    use_step = all(p.step is not None for p in evs)
    use_epoch = not use_step and all(p.data.get("epoch") is not None for p in evs)
    groups: dict[tuple[str, float], list[PerfPoint]] = {}
    counters: dict[RankKey, int] = {}
    for p in sorted(evs, key=lambda p: p.order):
        if use_step:
            k = ("step", float(p.step or 0))
        elif use_epoch:
            k = ("epoch", float(p.data["epoch"]))
        else:
            counters[p.key] = counters.get(p.key, 0) + 1
            k = ("evaluation", float(counters[p.key]))
        groups.setdefault(k, []).append(p)
    return [(k, statistics.fmean(_num(p.data["eval_loss"]) or 0.0 for p in ps), ps[-1]) for k, ps in sorted(groups.items())]


def _accuracy(state: JobState, track: SymptomTrack, ctx: dict[str, Any]) -> list[_Symptom]:
    base = track.options.baseline
    if base is None or getattr(base, "symptoms", None) is None:
        return []
    bctx = base.context()
    prec, bprec = ctx.get("precision"), bctx.get("precision")
    if prec == bprec and prec is not None:
        return []
    if prec not in ("bf16", None):
        return []  # the entry is about bf16 (fp16 accuracy problems are range problems: amp_bf16_vs_fp16)
    run, ref = _eval_series(state, track), _eval_series(base, base.symptoms)
    what = "evaluation loss"
    if run and ref:
        rmap = {k: (v, p) for k, v, p in ref}
        matched = [(k, v, rmap[k][0], p, rmap[k][1]) for k, v, p in run if k in rmap]
        if not matched and run[0][0][0] == ref[0][0][0] == "step":
            # evaluations at different steps: compare by position
            matched = [(k, v, bv, p, bp) for (k, v, p), (_, bv, bp) in zip(run, ref, strict=False)]
    else:
        matched = _train_tail(state, track, base)
        what = "final training loss (no evaluation loss in both runs' logs)"
    if not matched:
        return []
    threshold = ACCURACY_REL_GAP if what == "evaluation loss" else TRAIN_REL_GAP
    tail = matched[-LAST_EVALS:]
    gaps = [(v - bv) / abs(bv) if bv else math.inf for _, v, bv, _, _ in tail]
    trailing = 0
    for g in reversed(gaps):
        if g < threshold:
            break
        trailing += 1
    # persistent: the gap holds for (at least) the last two comparisons; a single comparison
    # (one final evaluation) must show twice the threshold
    persistent = trailing >= 2 if len(tail) >= 2 else gaps[-1] >= 2 * threshold
    if not persistent:
        return []
    k, v, bv, p, bp = tail[-1]
    run_vals = [x[1] for x in matched[-3:]]
    plateau = len(matched) >= 3 and (max(run_vals) - min(run_vals)) <= PLATEAU_REL * abs(statistics.fmean(run_vals))
    base_vals = [x[2] for x in matched[-3:]]
    base_improving = len(matched) >= 3 and base_vals[-1] < base_vals[0] * (1 - PLATEAU_REL)
    at = f"{k[0]} {k[1]:g}" if k[0] != "tail" else "the end of training"
    narrative = [
        f"The {prec or '16-bit'} run's {what} is {v:.6g} at {at}, the {bprec or 'baseline'} baseline's {bv:.6g}: "
        f"{gaps[-1] * 100:.1f} % higher; the gap (>= {threshold * 100:g} %) holds for the last {trailing} of "
        f"{len(matched)} comparison(s).",
    ]
    if plateau:
        narrative.append(
            f"The {prec or '16-bit'} curve has flattened (last 3 values within {PLATEAU_REL * 100:g} %)"
            + (" while the baseline still improves" if base_improving else "")
            + ": updates smaller than bf16's resolution (2^-8 of a weight) are rounding away — check that the weights "
              "and optimizer state are fp32 (master weights), not bf16.")
    else:
        narrative.append("A persistent gap (not noise, which changes sign between evaluations) points at precision loss: "
                         "bf16 weights or optimizer state, bf16 gradient accumulation/all-reduce, or a loss/logits in bf16.")
    return [_Symptom("bf16_accuracy_gap", "warning", narrative, [p.source, _tag(bp.source)], step=p.step, time=p.time,
                     data={"gap": round(gaps[-1], 5), "run": v, "baseline": bv, "plateau": plateau, "metric": what})]


def _train_tail(state: JobState, track: SymptomTrack, base: JobState) -> list[tuple[Any, float, float, Any, Any]]:
    """The median training loss over the last 10 % of the steps both runs logged."""
    run, ref = _job_series(state, track), _job_series(base, base.symptoms)
    if len(run) < 10 or len(ref) < 10:
        return []
    rsteps = [s for s, _, _ in run if s is not None]
    bsteps = [s for s, _, _ in ref if s is not None]
    if len(rsteps) == len(run) and len(bsteps) == len(ref):
        end = min(max(rsteps), max(bsteps))
        start = end - max(1, (end - min(rsteps)) // 10)
        rwin = [(v, pt) for s, v, pt in run if s is not None and start <= s <= end]
        bwin = [(v, pt) for s, v, pt in ref if s is not None and start <= s <= end]
    else:
        n = max(3, min(len(run), len(ref)) // 10)
        rwin = [(v, pt) for _, v, pt in run[-n:]]
        bwin = [(v, pt) for _, v, pt in ref[-n:]]
    if len(rwin) < 3 or len(bwin) < 3:
        return []
    rv = statistics.median(v for v, _ in rwin)
    bv = statistics.median(v for v, _ in bwin)
    return [(("tail", 0.0), rv, bv, rwin[-1][1], bwin[-1][1])]


def _job_series(state: JobState, track: SymptomTrack) -> list[tuple[int | None, float, SeriesPoint]]:
    """The training loss of the job: the mean over ranks per step (or the longest rank's series)."""
    per_rank = [[pt for pt in t.items if pt.loss is not None and math.isfinite(pt.loss)] for t in track.series.values()]
    per_rank = [r for r in per_rank if r]
    return _merge(per_rank)


def _merge(per_rank: list[list[SeriesPoint]]) -> list[tuple[int | None, float, SeriesPoint]]:
    if not per_rank:
        return []
    if all(pt.step is not None for r in per_rank for pt in r):
        by_step: dict[int, list[SeriesPoint]] = {}
        for r in per_rank:
            for pt in r:
                by_step.setdefault(pt.step or 0, []).append(pt)
        return [(s, statistics.fmean(pt.loss or 0.0 for pt in pts), pts[0]) for s, pts in sorted(by_step.items())]
    longest = max(per_rank, key=len)
    return [(pt.step, pt.loss or 0.0, pt) for pt in longest]


# --- c. bf16 uses more memory than expected -------------------------------------------------
_MEM_FIELDS = ("mem_max_gb", "mem_alloc_gb", "mem_max_reserved_gb", "mem_reserved_gb")


def _peaks(track: SymptomTrack) -> dict[str, tuple[float, PerfPoint]]:
    out: dict[str, tuple[float, PerfPoint]] = {}
    for p in track.memory.items:
        for f in _MEM_FIELDS:
            v = _num(p.data.get(f))
            if v is not None and (f not in out or v > out[f][0]):
                out[f] = (v, p)
    return out


def _memory(state: JobState, track: SymptomTrack, ctx: dict[str, Any]) -> list[_Symptom]:
    base = track.options.baseline
    if base is None or getattr(base, "symptoms", None) is None:
        return []
    bctx = base.context()
    prec, bprec = ctx.get("precision"), bctx.get("precision")
    if (prec == bprec and prec is not None) or prec == "fp32":
        return []
    run, ref = _peaks(track), _peaks(base.symptoms)
    fld = next((f for f in _MEM_FIELDS if f in run and f in ref), None)
    if fld is None:
        return []
    rv, rp = run[fld]
    bv, bp = ref[fld]
    if bv <= 0:
        return []
    ratio = rv / bv
    if ratio < MEMORY_EXPECTED_RATIO:
        return []
    severity = "warning" if ratio >= MEMORY_MORE_RATIO else "info"
    name = {"mem_max_gb": "peak allocated", "mem_alloc_gb": "allocated", "mem_max_reserved_gb": "peak reserved",
            "mem_reserved_gb": "reserved"}[fld]
    narrative = [
        f"The {prec or '16-bit'} run's {name} GPU memory is {rv:.3g} GiB, the {bprec or 'baseline'} baseline's {bv:.3g} GiB "
        f"({ratio * 100:.0f} %): " + ("MORE than fp32." if ratio >= MEMORY_MORE_RATIO else "not the half one might expect."),
        "Mixed precision keeps fp32 master weights, fp32 gradients and fp32 optimizer states (Adam: 16 bytes per parameter "
        "either way) and adds 16-bit weight copies; only activations shrink. Shard the model states (ZeRO/FSDP/distributed "
        "optimizer) or checkpoint activations to cut memory.",
    ]
    states = [p for p in track.memory.items if p.data.get("mem_states_gb")]
    if states:
        s = states[-1].data["mem_states_gb"]
        narrative.append(f"Megatron's theoretical weight-and-optimizer footprint is {s:.3g} GiB, "
                         f"{s / rv * 100:.0f} % of the measured peak: model states dominate.")
    labeled = {p.data["mem_label"]: p for p in track.memory.items if p.data.get("mem_label")}
    before = next((p for lab, p in labeled.items() if "before" in lab.lower() and "optimizer" in lab.lower()), None)
    after = next((p for lab, p in labeled.items() if "after" in lab.lower() and "optimizer" in lab.lower()), None)
    if before and after and _num(before.data.get("mem_alloc_gb")) and _num(after.data.get("mem_alloc_gb")):
        b, a = before.data["mem_alloc_gb"], after.data["mem_alloc_gb"]
        narrative.append(f"DeepSpeed: allocated memory goes from {b:.3g} GiB ({before.data['mem_label']!r}) to {a:.3g} GiB "
                         f"({after.data['mem_label']!r}): the fp32 master weights and optimizer states.")
    return [_Symptom("bf16_memory_overhead", severity, narrative, [rp.source, _tag(bp.source)], step=rp.step, time=rp.time,
                     data={"ratio": round(ratio, 4), "run_gb": rv, "baseline_gb": bv, "field": fld})]


# --- d. non-monotonic loss early in fp16 jobs -----------------------------------------------
@dataclass(slots=True)
class _EarlyStats:
    n: int
    ups: float
    progress: float
    jump: float
    jump_at: SeriesPoint | None
    first_step: int | None
    last_step: int | None


def _early_stats(points: list[tuple[int | None, float, SeriesPoint]]) -> _EarlyStats | None:
    if len(points) < EARLY_MIN_POINTS:
        return None
    xs = [v for _, v, _ in points]
    n = len(xs)
    ups = sum(1 for a, b in pairwise(xs) if b > a) / (n - 1)
    q = max(2, n // 4)
    head, tail = statistics.median(xs[:q]), statistics.median(xs[-q:])
    progress = (head - tail) / abs(head) if head else 0.0
    jump, jump_at = 0.0, None
    for i in range(5, n):
        ref = statistics.median(xs[i - 5:i])
        # (a jump is a new high of the window: noise between values already seen is no jump)
        if ref > 0 and xs[i] / ref - 1 > jump and xs[i] > max(xs[:i]):
            jump, jump_at = xs[i] / ref - 1, points[i][2]
    return _EarlyStats(n, ups, progress, jump, jump_at, points[0][0], points[-1][0])


def _early_points(track: SymptomTrack, until: int | None = None) -> list[tuple[int | None, float, SeriesPoint]]:
    per_rank = [[pt for pt in pts if pt.loss is not None and math.isfinite(pt.loss)] for pts in track.early.values()]
    merged = _merge([r for r in per_rank if r])
    if until is not None:
        merged = [m for m in merged if m[0] is None or m[0] <= until]
    return merged


def _early(state: JobState, track: SymptomTrack, ctx: dict[str, Any], others: list[Incident]) -> list[_Symptom]:
    if ctx.get("precision") != "fp16":
        return []
    pts = _early_points(track)
    st = _early_stats(pts)
    if st is None or (st.ups < EARLY_UP_SHARE and st.jump < EARLY_JUMP):
        return []
    end = st.last_step if st.last_step is not None else EARLY_STEPS
    skipped = _early_skips(state, track, end)
    xs = [v for _, v, _ in pts]
    mid = statistics.median(xs)
    # a flat loss (all values within EARLY_FLAT of their median) on steps the scaler let through
    # is no instability: its ups are noise, and a loss that has not started falling is not fp16's
    # (skips weighed against the steps the window spans when its lines carry steps: one line per
    # 10 steps over 120 steps with 3 skips is not a quarter of it skipped)
    span = st.last_step - st.first_step + 1 if st.first_step is not None and st.last_step is not None else st.n
    flat = mid > 0 and (max(xs) - min(xs)) / mid < EARLY_FLAT and skipped * 4 < max(span, st.n)
    stalled = st.progress < EARLY_PROGRESS and not flat
    # a loss that does not trend down is fp16's doing when the scaler held the weights still on a
    # good share of the window's steps, or when the baseline run was smoother over the same steps;
    # with neither (a handful of skips, no baseline) it is the run's own noise: a note
    base = track.options.baseline
    bst = None
    if base is not None and getattr(base, "symptoms", None) is not None:
        bst = _early_stats(_early_points(base.symptoms, st.last_step))
    similar = bst is not None and abs(bst.ups - st.ups) <= 0.15 and (bst.progress < EARLY_PROGRESS) == stalled and \
        (bst.jump >= EARLY_JUMP) == (st.jump >= EARLY_JUMP)
    smoother_base = bst is not None and not similar
    # (skips the correlator already read as the scaler's start-up search, one descent from its
    # initial scale, are calibration: they held the weights still as every fp16 run's first steps do)
    searched = any(i.failure == "loss_scale_warmup" for i in others)
    held = skipped * EARLY_HELD >= max(span, st.n) and not searched
    unstable = (stalled and (held or smoother_base)) or st.jump >= EARLY_JUMP
    window = f"steps {st.first_step}-{st.last_step}" if st.first_step is not None else f"the first {st.n} logged values"
    narrative = [
        f"In {window} of this fp16 job the loss rose on {st.ups * 100:.0f} % of the steps; "
        + (f"it did not trend down (last-quarter median {-st.progress * 100:+.1f} % vs the first quarter)"
           if stalled else f"overall it fell by {st.progress * 100:.0f} % (first vs last quarter)")
        + (f", and jumped to {st.jump + 1:.1f}x its recent level at step {st.jump_at.step}" if st.jump >= EARLY_JUMP and
           st.jump_at is not None else "") + ".",
    ]
    evidence = [pts[0][2].source]
    if st.jump_at is not None and st.jump >= EARLY_JUMP:
        evidence.append(st.jump_at.source)
    if skipped:
        narrative.append(f"{skipped} step(s) in this window were skipped by the dynamic loss scaler (inf/NaN gradients: "
                         "calibration from the initial scale, or overflows): the weights did not move on those steps, so "
                         "the logged loss only reflects the next batch.")
        moves = [m for m in state.scale_moves if m.step is None or m.step <= end]
        if moves:
            evidence.append(moves[0].source)
    lrs = [pt.lr for pt in _points(pts) if pt.lr is not None]
    if len(lrs) >= 3:
        if lrs[-1] > lrs[0] * 1.5:
            narrative.append(f"The learning rate is still warming up ({lrs[0]:.3g} → {lrs[-1]:.3g}).")
        elif max(lrs) == min(lrs):
            narrative.append(f"The learning rate is constant ({lrs[0]:.3g}) from the first step: no warm-up, so the first "
                             "updates can overshoot.")
    if bst is not None and base is not None:
        narrative.append(
            f"The baseline ({base.context().get('precision') or 'other precision'}) over the same steps: loss rose on "
            f"{bst.ups * 100:.0f} % of the steps, fell by {bst.progress * 100:.0f} %: "
            + ("just as non-monotonic — mini-batch noise or the learning rate, not fp16." if similar else
               "smoother — the instability is specific to the fp16 run."))
    if not unstable and stalled:
        narrative.append("Not trending down, but the loss scaler held the weights still on few of these steps and no "
                         "baseline run says fp16 is to blame: the run's own noise (data, learning rate) as far as these "
                         "lines tell; compare with an fp32 run (`--baseline`) to be sure.")
    elif not unstable:
        narrative.append("Non-monotonic but trending down: expected early in training (mini-batch noise, loss-scale "
                         "calibration, LR warm-up); no action needed.")
    first = pts[0][2]
    return [_Symptom("fp16_early_instability", "warning" if unstable else "info", narrative, evidence,
                     step=first.step, time=first.time,
                     data={"ups": round(st.ups, 3), "progress": round(st.progress, 4), "jump": round(st.jump, 3),
                           "skipped": skipped, "unstable": unstable, "points": st.n})]


def _points(pts: list[tuple[int | None, float, SeriesPoint]]) -> list[SeriesPoint]:
    return [p for _, _, p in pts]


def _early_skips(state: JobState, track: SymptomTrack, end: int) -> int:
    """Steps skipped by the scaler in the window: scale reductions, or non-finite grad norms."""
    moves = {m.step for m in state.scale_moves if m.step is not None and m.step <= end}
    bad_grad = {pt.step for pts in track.early.values() for pt in pts
                if pt.step is not None and pt.step <= end and pt.grad_norm is not None and not math.isfinite(pt.grad_norm)}
    return max(len(moves), len(bad_grad))


# --- NCCL versions across ranks -------------------------------------------------------------
def _nccl_versions(state: JobState, track: SymptomTrack) -> list[_Symptom]:
    if not track.nccl or any(f.failure == "nccl_version_mismatch" for f in state.findings):
        return []
    by_version: dict[str, list[PerfPoint]] = {}
    for p in track.nccl:
        by_version.setdefault(p.data["nccl_version"], []).append(p)
    if len(by_version) < 2:
        return []

    def who(ps: list[PerfPoint]) -> set[str]:
        out = set()
        for p in ps:
            r = _rank_of(state, p.key)
            out.add(f"rank {r}" if r is not None else (p.source.path))
        return out

    parts = [f"{v} ({', '.join(sorted(who(ps))[:8])})" for v, ps in sorted(by_version.items())]
    ranks_by_version = {v: {_rank_of(state, p.key) for p in ps} for v, ps in by_version.items()}
    rank: int | None = None
    minority = min(by_version, key=lambda v: len(ranks_by_version[v]))
    others = set().union(*(r for v, r in ranks_by_version.items() if v != minority))
    odd = ranks_by_version[minority]
    if len(odd) == 1 and None not in odd and len(others - {None}) >= 2:
        rank = next(iter(odd))
    failing = any(f.failure in ("nccl_error", "collective_timeout", "peer_connection_lost", "rank_hang") for f in state.findings)
    narrative = [f"The logs report {len(by_version)} different NCCL versions: {'; '.join(parts)}.",
                 "Every rank of a job must load the same NCCL: communicators that mix versions fail at creation "
                 "('Mismatched NCCL version detected') or hang in the bootstrap."]
    if failing:
        narrative.append("The job's NCCL errors / timeouts are the expected consequence.")
    first = [ps[0] for ps in by_version.values()]
    return [_Symptom("nccl_version_mismatch", "critical" if failing else "warning", narrative,
                     [p.source for p in first], rank=rank, time=first[0].time,
                     data={"versions": sorted(by_version)})]


# ================================================================== helpers
def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return float(v)


def _int(v: Any) -> int | None:
    try:
        return int(v) if v is not None else None
    except (TypeError, ValueError):
        return None


def _cc(ctx: dict[str, Any]) -> float | None:
    cc = compute_capability(ctx.get("gpu"))
    if ctx.get("compute_capability"):
        with contextlib.suppress(TypeError, ValueError):
            cc = float(ctx["compute_capability"])
    return cc


def _rank_of(state: JobState, key: RankKey) -> int | None:
    if key is None:
        return None
    if key[0] == "g":
        return key[1]
    g = state.local_to_global.get(key[1])
    if g is not None:
        return g
    return None if state.multi_node else key[1]


def _tag(src: Source) -> Source:
    return Source(f"{BASELINE_TAG}{src.path}", src.line, src.text)


def _uniq(sources: Iterable[Source]) -> list[Source]:
    seen: set[tuple[str, int]] = set()
    out = []
    for s in sources:
        if (s.path, s.line) not in seen:
            seen.add((s.path, s.line))
            out.append(s)
    return out


def rank_series(state: JobState) -> dict[int | None, list[SeriesPoint]]:
    """Per-rank training series (thinned), keys resolved to global ranks where known."""
    out: dict[int | None, list[SeriesPoint]] = {}
    track: SymptomTrack | None = getattr(state, "symptoms", None)
    if track is None:
        return out
    for key, t in track.series.items():
        out.setdefault(_rank_of(state, key), []).extend(t.items)
    for pts in out.values():
        pts.sort(key=lambda p: p.order)
    return out
