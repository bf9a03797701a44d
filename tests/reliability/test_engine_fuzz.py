"""The whole engine (scan, parse, detect, correlate, the report) never raises on pieces of real
logs put together in ways no test wrote: any excerpt of a corpus case, excerpts of two cases
interleaved or glued (two jobs' pastes in one file), and lines dropped at random (a grep, a
paste cut short). Its verdict is a report, whatever the input: a crash in the correlate stage
would take the daemon's verdict with it (round 26 found one: every back-off a hysteresis copy).

Hypothesis picks the cases and the cuts; the corpus is ``tests/corpus`` (real excerpts and
generated jobs, labelled)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from detectors.diagnosis import build_report
from detectors.engine import Engine

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@cache
def _cases() -> tuple[Path, ...]:
    return tuple(sorted(CORPUS.glob("*/*/combined.log")))


@cache
def _lines(path: Path) -> tuple[bytes, ...]:
    return tuple(path.read_bytes().split(b"\n"))


def _verdict(data: bytes) -> None:
    engine = Engine("fuzz")
    engine.feed(data, 1, engine.open_file("fuzz.log"))
    engine.verdict()
    report = build_report(engine.state, ended=True)
    assert isinstance(report["incidents"], list)


@st.composite
def _excerpt(draw: st.DrawFn) -> list[bytes]:
    lines = _lines(draw(st.sampled_from(_cases())))
    start = draw(st.integers(0, max(0, len(lines) - 1)))
    size = draw(st.integers(1, 400))
    return list(lines[start:start + size])


@FUZZ
@given(a=_excerpt(), b=_excerpt(), how=st.sampled_from(["glued", "interleaved"]), keep=st.randoms(use_true_random=False),
       drop=st.floats(0.0, 0.6))
def test_the_engine_never_raises_on_real_pieces(a: list[bytes], b: list[bytes], how: str, keep: object, drop: float) -> None:
    import random

    assert isinstance(keep, random.Random)
    if how == "glued":
        lines = a + b
    else:
        lines = []
        ia = ib = 0
        while ia < len(a) or ib < len(b):
            if ib >= len(b) or (ia < len(a) and keep.random() < 0.5):
                lines.append(a[ia])
                ia += 1
            else:
                lines.append(b[ib])
                ib += 1
    lines = [ln for ln in lines if keep.random() >= drop]
    _verdict(b"\n".join(lines) + b"\n")
