"""The sliding sorted window (detectors/window.py) gives exactly what sorting the window gives:
the same median object (an int stays an int), MAD and count, through appends, evictions, NaNs,
missing values, ties and a window replaced by a merged one."""

from __future__ import annotations

import math
import random
from collections import deque
from typing import Any

from detectors import window
from detectors.model import SampleRec, Source

SRC = Source("rank0.log", 1, "")


def _by_sorting(samples: deque[SampleRec], metric: str) -> tuple[Any, float, int] | None:
    vals = [v for s in samples if (v := s.data.get(metric)) is not None and math.isfinite(v)]
    if not vals:
        return None
    vals.sort()
    mid = len(vals) // 2
    med = vals[mid]
    devs = sorted(abs(x - med) for x in vals)
    return med, devs[mid] * 1.4826, len(vals)


def _same(a: tuple[Any, float, int] | None, b: tuple[Any, float, int] | None) -> bool:
    return a == b and (a is None or b is None or a[0] is b[0])


def test_same_as_sorting_through_a_sliding_window() -> None:
    rng = random.Random(7)
    order = checks = 0
    for _ in range(300):
        maxlen = rng.choice([1, 2, 3, 5, 16, 256])
        dq: deque[SampleRec] = deque(maxlen=maxlen)
        ties = [rng.choice([0, 1, 2, 2.0, 3.5, -1.0, 1e300]) for _ in range(5)]  # shared objects: ties
        for step in range(rng.randint(1, 700)):
            order += 1
            r = rng.random()
            v: Any = (None if r < 0.1 else math.nan if r < 0.15 else math.inf if r < 0.2 else rng.choice(ties) if r < 0.5
                      else rng.choice([rng.random(), rng.randint(0, 5), round(rng.gauss(5, 2), 2)]))
            data = {} if v is None and rng.random() < 0.5 else {"loss": v, "grad_norm": rng.random()}
            if rng.random() < 0.3:
                for metric in ("loss", "grad_norm"):
                    assert _same(window.median_mad(dq, metric), _by_sorting(dq, metric)), list(dq)
                    checks += 1
            dq.append(SampleRec(step, order, None, SRC, data))
            if rng.random() < 0.01:  # a local rank became a global one: a merged window, a new object
                dq = deque(sorted(dq, key=lambda s: s.order), maxlen=maxlen)
        assert _same(window.median_mad(dq, "loss"), _by_sorting(dq, "loss"))
    assert checks > 10_000


def test_a_cleared_or_non_deque_window() -> None:
    dq = deque(SampleRec(i, i, None, SRC, {"loss": float(i)}) for i in range(10))
    assert window.median_mad(dq, "loss") == _by_sorting(dq, "loss")
    dq.clear()
    assert window.median_mad(dq, "loss") is None
    samples = [SampleRec(i, i, None, SRC, {"loss": float(i % 3)}) for i in range(7)]
    assert window.median_mad(samples, "loss") == _by_sorting(deque(samples), "loss")
