"""Engine-wide rules: the verdict is a pure read of the state, behaviour lives in the
catalog (no catalog id literals outside the generic detectors), and loss-scale moves are
judged on the spacing of overflows."""

from __future__ import annotations

import ast
import copy
import pickle
from pathlib import Path

import pytest

from detectors.catalog import load_catalog
from detectors.correlate import _spacing_trend, incidents
from detectors.detect import JobState
from detectors.model import ScaleMove, Source
from detectors.parse import default_parser
from detectors.parsers.base import FileState, JobParseState
from tests.conftest import REPO

# the generic detectors (numerics, loss scale, hangs, launcher exits, symptoms, preflight)
# and the scoring vocabulary may name catalog ids; parsers and the daemon may not
GENERIC = {
    "detectors/detect.py", "detectors/correlate.py", "detectors/symptoms.py", "detectors/preflight.py",
    "detectors/parsers/exceptions.py",  # the fallback for Python exceptions no fingerprint explains
    "detectors/stall.py",  # the live stall (hang) detector
    "monitor/evaluate.py",  # the label vocabulary of the corpus, not engine behaviour
}


def test_no_catalog_id_literals_outside_generic_detectors() -> None:
    ids = {e.id for e in load_catalog()}
    bad: list[str] = []
    for pkg in ("detectors", "monitor"):
        for path in sorted((REPO / pkg).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel in GENERIC:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in ids:
                    bad.append(f"{rel}:{node.lineno} {node.value!r}")
    assert not bad, "catalog ids belong in the catalog (a field), not in code:\n" + "\n".join(bad)


def _state(case: Path) -> JobState:
    st = JobState(job=case.name)
    jps = JobParseState()
    for path in sorted(p for p in case.rglob("*") if p.is_file() and p.suffix in (".log", "")):
        fs = FileState(str(path.relative_to(case)), year=2026, job=jps)
        for ev in default_parser().parse_chunk(path.read_bytes() + b"\n", 1, fs):
            st.add(ev)
    return st


CASES = sorted((REPO / "tests" / "corpus" / "dev").glob("*-*"))[::9]  # a spread of real excerpts


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_reading_the_verdict_never_mutates_state(case: Path) -> None:
    st = _state(case)
    st.catalog = None  # type: ignore[assignment]  # not part of the state's value
    before = pickle.dumps(copy.deepcopy(st.__dict__))
    st.catalog = load_catalog()
    first = incidents(st)
    second = incidents(st)
    st.catalog = None  # type: ignore[assignment]
    assert pickle.dumps(st.__dict__) == before
    assert [(i.id, i.failure, i.rank, i.step) for i in first] == [(i.id, i.failure, i.rank, i.step) for i in second]


def _moves(gaps: list[float], start: float = 65536.0) -> list[ScaleMove]:
    out, t, scale = [], 1000.0, start
    src = Source("x.log", 1, "")
    for i, g in enumerate([0.0, *gaps]):
        t += g
        out.append(ScaleMove(None, i, t, src, scale, scale / 2))
        scale /= 2
    return out


def test_spacing_trend() -> None:
    assert _spacing_trend(_moves([1, 1, 2, 8, 30, 200])) == "thinning"  # the scaler settling
    assert _spacing_trend(_moves([60, 61, 59, 60, 62])) == "steady"  # recurring overflows
    assert _spacing_trend(_moves([300, 100, 20, 3, 1])) == "speeding"  # heading for collapse
    assert _spacing_trend(_moves([1, 1])) is None  # too few to say


def test_an_abort_after_a_timeout_is_a_consequence() -> None:
    """A fresh torchrun hang run: rank 0 timed out in gloo, then aborted ("terminate called
    without an active exception" → faulthandler's "Fatal Python error: Aborted"). The abort
    is teardown, like a launcher's exit -6; the silent rank 1 is still the hang."""
    from detectors.model import EventKind, Role

    st = JobState(job="t")
    fs = FileState("console.log", year=2026, job=JobParseState())
    lines = [f"[default{r}]:step {s} | loss {2 - s / 10:.2f}" for s in range(1, 6) for r in range(4)]
    lines += [f"[default{r}]:step 6 | loss 1.40" for r in (0, 2, 3)]
    lines += [f"[default{r}]:[rank{r}]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/"
              f"unbound_buffer.cc:78] Timed out waiting 10000ms for recv operation to complete" for r in (3, 2, 0)]
    lines += ["[default0]:terminate called without an active exception", "[default0]:Fatal Python error: Aborted"]
    for i, line in enumerate(lines, 1):
        for ev in default_parser().parse_line(line, i, fs):
            if ev.kind is EventKind.MATCH and "Fatal Python error" in ev.source.text:
                assert ev.failure == "launcher_teardown"
            st.add(ev)
    assert [f.role for f in st.findings if "Fatal" in f.evidence[0].text] == [Role.COLLATERAL]
    top = incidents(st)[0]
    assert (top.failure, top.rank) == ("rank_hang", 1)
