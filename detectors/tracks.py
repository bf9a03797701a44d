"""Bounded per-job series the detect stage records for the symptom detectors.

``JobState._sample`` feeds a ``SymptomTrack`` (loss and loss-scale series per rank, the
early-loss window, throughput, evaluations, memory, NCCL versions); ``detectors.symptoms``
reads it. This module sits below ``detect`` and imports no other stage.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from detectors.model import RankKey, SampleRec, Source

__all__ = ["EARLY_STEPS", "MAX_POINTS", "PerfPoint", "SeriesPoint", "SymptomOptions", "SymptomTrack"]

EARLY_STEPS = 500  # the "first tens-to-hundreds of steps" window
MAX_POINTS = 4096  # per job-level list (throughput, eval losses, memory); thinned by halves beyond that
SERIES_POINTS = 512  # per-rank loss/loss-scale points kept for the timeline (thinned)
SERIES_RANKS = 128  # ranks whose series are kept (the first seen); the early window uses the first EARLY_RANKS
EARLY_MAX_POINTS = 512  # early loss points per rank
EARLY_RANKS = 32


@dataclass(slots=True)
class SymptomOptions:
    """What the user said about the comparison (``rankwatch diagnose --baseline/--expect-speedup``)."""

    baseline: Any = None  # a JobState of the baseline run (typed loosely: detect imports this module)
    expect_speedup: float | None = None


@dataclass(slots=True)
class SeriesPoint:
    """One training-metrics sample of one rank, for the report timeline and the loss windows."""

    step: int | None
    order: int
    time: float | None
    loss: float | None
    loss_scale: float | None
    grad_norm: float | None
    lr: float | None
    source: Source


@dataclass(slots=True)
class PerfPoint:
    key: RankKey
    step: int | None
    order: int
    time: float | None
    source: Source
    data: dict[str, Any]


class _Thinned:
    """An append-only list bounded to ``cap`` items: beyond it, every other item is dropped
    and later items are kept with a doubled stride (first items and the newest are kept)."""

    __slots__ = ("cap", "items", "seen", "stride")

    def __init__(self, cap: int = MAX_POINTS) -> None:
        self.cap = cap
        self.items: list[Any] = []
        self.stride = 1
        self.seen = 0

    def keeps_next(self) -> bool:
        """Whether the next ``append`` keeps its item (beyond ``cap`` most are dropped)."""
        return self.seen % self.stride == 0

    def append(self, item: Any) -> None:
        self.seen += 1
        if (self.seen - 1) % self.stride:
            return
        self.items.append(item)
        if len(self.items) > self.cap:
            self.items = self.items[::2]
            self.stride *= 2


class SymptomTrack:
    """Bounded per-job series for the symptom detectors; ``JobState._sample`` feeds it."""

    def __init__(self) -> None:
        self.options = SymptomOptions()
        self.series: dict[RankKey, _Thinned] = {}  # non-perf samples: loss / loss scale per rank
        self.early: dict[RankKey, list[SeriesPoint]] = {}
        self.throughput = _Thinned()
        self.evals = _Thinned()
        self.memory = _Thinned()
        self.nccl: list[PerfPoint] = []
        self._label: dict[str, str] = {}  # DeepSpeed see_memory_usage: last message per file

    def configure(self, baseline: Any = None, expect_speedup: float | None = None) -> None:
        self.options = SymptomOptions(baseline, expect_speedup)

    def add(self, key: RankKey, rec: SampleRec) -> None:
        d = rec.data
        get = d.get
        if get("scope") == "perf":
            self._perf(key, rec)
            return
        # _num, without a call for the usual float (or absent) value
        loss, scale, grad = get("loss"), get("loss_scale"), get("grad_norm")
        if loss is not None and type(loss) is not float:
            loss = _num(loss)
        if scale is not None and type(scale) is not float:
            scale = _num(scale)
        if grad is not None and type(grad) is not float:
            grad = _num(grad)
        if loss is None and scale is None and grad is None:
            return
        series = self.series.get(key)
        if series is None and len(self.series) < SERIES_RANKS:
            series = self.series[key] = _Thinned(SERIES_POINTS)
        early: list[SeriesPoint] | None = None
        if loss is not None and (rec.step is None or rec.step <= EARLY_STEPS):
            early = self.early.get(key)
            if early is None and len(self.early) < EARLY_RANKS:
                early = self.early[key] = []
            if early is not None and len(early) >= EARLY_MAX_POINTS:
                early = None
        keep = series is not None and series.keeps_next()
        if not keep and early is None:
            if series is not None:
                series.append(None)  # counted, not kept: no point is made for a thinned-out sample
            return
        pt = SeriesPoint(rec.step, rec.order, rec.time, loss, scale, grad, _num(d.get("lr")), rec.source)
        if series is not None:
            series.append(pt)
        if early is not None:
            early.append(pt)

    def _perf(self, key: RankKey, rec: SampleRec) -> None:
        d = rec.data
        p = PerfPoint(key, rec.step, rec.order, rec.time, rec.source, d)
        if "throughput" in d or "iter_ms" in d:
            self.throughput.append(p)
        if "eval_loss" in d:
            self.evals.append(p)
        if "mem_label" in d:
            self._label[rec.source.path] = d["mem_label"]
        elif any(k.startswith("mem_") for k in d):
            label = self._label.pop(rec.source.path, None)
            if label is not None:
                p.data = {**d, "mem_label": label}
            self.memory.append(p)
        if "nccl_version" in d and len(self.nccl) < MAX_POINTS:
            self.nccl.append(p)


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return float(v)
