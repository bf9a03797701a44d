"""Median and MAD of one metric over a rank's sliding sample window, kept sorted as it slides.

``detect`` refreshes each rank's robust baseline (the median and MAD of the finite values of
``loss`` and ``grad_norm`` in its last ``WINDOW`` samples) every few samples; sorting the
whole window each time was a third of the detect stage's cost. ``median_mad`` returns exactly
what sorting gives (the same value objects: an int stays an int) from a sorted copy of the
window's finite values that follows the window: new samples are inserted (after their equals,
as a stable sort places them), the oldest removed (the first of their equals), and the MAD is
the middle one of the two sorted runs of deviations on either side of the median, found by
bisection instead of sorting them.

The sorted copies are a cache beside the state, never part of it: they are keyed by the
window object (a ``deque``; anything else is sorted the plain way), checked against it on
every call (its length, first and last arrival order) and rebuilt when they do not match
(a window merged when a local rank became a global one is a new object). Nothing is written
into the state, so checkpoints and worker results do not change.
"""

from __future__ import annotations

import math
import weakref
from bisect import bisect_left, insort
from collections import deque
from collections.abc import Iterable
from typing import Any

from detectors.model import SampleRec

__all__ = ["MAD_SCALE", "finite_min", "finite_top", "median_mad", "median_mad_sorted"]

MAD_SCALE = 1.4826


class _Sorted:
    __slots__ = ("last", "orders", "ref", "sorted", "values")

    def __init__(self, window: deque[SampleRec], metric: str) -> None:
        key = (id(window), metric)
        # the entry goes when the window does (and an id reused later never finds a stale one)
        self.ref = weakref.ref(window, lambda r: _CACHE.pop(key) if key in _CACHE and _CACHE[key].ref is r else None)
        self.orders: deque[int] = deque()
        self.values: deque[Any] = deque()  # the metric's value of each sample, None when not finite
        self.sorted: list[Any] = []
        self.last = -1
        self.extend(window, 0, metric)

    def extend(self, window: deque[SampleRec], start: int, metric: str) -> None:
        for i in range(start, len(window)):
            rec = window[i]
            v = rec.data.get(metric)
            if v is not None and math.isfinite(v):
                insort(self.sorted, v)  # after its equals: where a stable sort puts the later one
            else:
                v = None
            self.orders.append(rec.order)
            self.values.append(v)
            self.last = rec.order

    def evict(self, n: int) -> None:
        for _ in range(n):
            self.orders.popleft()
            v = self.values.popleft()
            if v is not None:
                del self.sorted[bisect_left(self.sorted, v)]  # the first of its equals: the oldest


_CACHE: dict[tuple[int, str], _Sorted] = {}


def _synced(window: deque[SampleRec], metric: str) -> list[Any] | None:
    n = len(window)
    if not n:
        return []
    key = (id(window), metric)
    w = _CACHE.get(key)
    if w is not None and w.ref() is not window:
        w = None
    if w is not None:
        new = 0
        for i in range(n - 1, -1, -1):  # the samples appended since the last call
            if window[i].order <= w.last:
                break
            new += 1
        old = n - new
        w.evict(len(w.orders) - old if len(w.orders) >= old else 0)
        if len(w.orders) == old and (not old or (w.orders[0] == window[0].order and w.orders[-1] == window[old - 1].order)):
            w.extend(window, old, metric)
        else:
            w = None
    if w is None:
        w = _CACHE[key] = _Sorted(window, metric)
    return w.sorted


def median_mad(samples: Iterable[SampleRec], metric: str) -> tuple[Any, float, int] | None:
    """(median, MAD x 1.4826, count) of the finite values of ``metric`` in ``samples`` (upper
    median), exactly as sorting them gives it."""
    vals = _synced(samples, metric) if isinstance(samples, deque) else None
    if vals is None:
        vals = sorted(v for s in samples if (v := s.data.get(metric)) is not None and math.isfinite(v))
    return median_mad_sorted(vals)


def finite_min(window: deque[SampleRec], metric: str) -> Any | None:
    """The smallest finite value of ``metric`` in ``window`` (None: none), from the sorted copy."""
    vals = _synced(window, metric)
    return vals[0] if vals else None


def finite_top(window: deque[SampleRec], metric: str, k: int) -> Any | None:
    """The ``k``-th largest finite value of ``metric`` in ``window`` (None: fewer than ``k``), from
    the sorted copy."""
    vals = _synced(window, metric)
    return vals[-k] if vals is not None and len(vals) >= k else None


def median_mad_sorted(vals: list[Any]) -> tuple[Any, float, int] | None:
    """``median_mad`` of values already sorted (stable)."""
    n = len(vals)
    if not n:
        return None
    mid = n // 2
    med = vals[mid]
    # deviations: left of the median med - vals[mid-1-i] (growing with i), right vals[mid+j] - med
    # (growing with j); abs(x - med) is exactly one of these. The MAD is the mid-th smallest of
    # both runs (0-based): take a from the left and mid+1-a from the right, bisecting on a.
    n_left, n_right = mid, n - mid
    k = mid + 1
    lo, hi = max(0, k - n_right), min(k, n_left)
    while lo < hi:
        a = (lo + hi) // 2
        # the left run's (a+1)-th deviation below the right run's (k-a)-th: take more from the left
        if med - vals[mid - 1 - a] < vals[mid + k - a - 1] - med:
            lo = a + 1
        else:
            hi = a
    a = lo
    b = k - a
    # the answer: the larger of the last deviation taken from each run (a + b = mid + 1 >= 1)
    if a == 0:
        dev = vals[mid + b - 1] - med
    elif b == 0:
        dev = med - vals[mid - a]
    else:
        dev = max(med - vals[mid - a], vals[mid + b - 1] - med)
    return med, abs(dev) * MAD_SCALE, n
