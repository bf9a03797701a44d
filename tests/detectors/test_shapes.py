"""Per-file metric line shapes (detectors/shapes.py) give exactly the events of the general
parse path: on every candidate line of the test corpus, the fixtures, the golden cases, the
real logs and the generated bench corpora, with the shortcut trusted after the usual number of
checked lines and after a single one (so that nearly every metric line takes it).

Events are compared field by field, values with their types (``shapes.same_events``).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.generate import generate
from detectors import shapes
from detectors.model import Event, EventKind
from detectors.parse import LogParser
from detectors.parsers.base import FileState, JobParseState

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "tests" / "corpus", ROOT / "tests" / "detectors" / "fixtures", ROOT / "tests" / "e2e" / "golden",
           ROOT.parent / "shared" / "real-logs"]
CHUNK = 64 << 10

FAST = LogParser(shapes=True)
GENERAL = LogParser(shapes=False)


def _files() -> Iterator[Path]:
    for src in SOURCES:
        if not src.is_dir():
            continue
        for path in sorted(src.rglob("*")):
            if path.is_file() and path.suffix not in (".json", ".py", ".md", ".png", ".gz", ".pyc"):
                yield path


def _chunks(data: bytes) -> Iterator[tuple[bytes, int]]:
    """Chunks of complete lines with the number of their first line (as monitor/reader.py cuts them)."""
    pos, lineno = 0, 1
    while pos < len(data):
        end = data.rfind(b"\n", pos, pos + CHUNK)
        end = len(data) if end < 0 or pos + CHUNK >= len(data) else end + 1
        yield data[pos:end], lineno
        lineno += data.count(b"\n", pos, end)
        pos = end


def _parse(parser: LogParser, path: Path, data: bytes) -> tuple[list[Event], FileState]:
    state = FileState(str(path), year=2024, job=JobParseState())
    events: list[Event] = []
    for chunk, lineno in _chunks(data):
        events.extend(parser.parse_chunk(chunk, lineno, state))
    return events, state


_GENERAL: dict[tuple[str, bytes], tuple[list[Event], FileState]] = {}


def _general(path: Path, data: bytes) -> tuple[list[Event], FileState]:
    """The general path's parse does not depend on ``VERIFY_LINES``: parsed once per file and
    shared by both settings' runs (files from the corpora only, keyed by their bytes too)."""
    if ROOT not in path.parents and ROOT.parent / "shared" not in path.parents:
        return _parse(GENERAL, path, data)
    key = (str(path), hashlib.sha1(data).digest())
    if key not in _GENERAL:
        _GENERAL[key] = _parse(GENERAL, path, data)
    return _GENERAL[key]


def _compare(path: Path, data: bytes) -> tuple[int, int]:
    """(sample events, shortcut shapes in use) of one file; fails on the first difference."""
    fast, state = _parse(FAST, path, data)
    general, gstate = _general(path, data)
    if not shapes.same_events(fast, general):
        for i, (a, b) in enumerate(zip(fast, general, strict=False)):
            assert shapes.same_events([a], [b]), f"{path}: event {i} differs:\n  shape:   {a}\n  general: {b}"
        assert len(fast) == len(general), f"{path}: {len(fast)} events by shape, {len(general)} by the general path"
    assert state.job.implausible == gstate.job.implausible
    book = state.shapes
    active = sum(1 for s in book.shapes.values() if s is not None and s.active) if book is not None else 0
    return sum(ev.kind is EventKind.SAMPLE for ev in general), active


@pytest.fixture(params=[shapes.VERIFY_LINES, 1], ids=["verify-default", "verify-1"])
def verify_lines(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(shapes, "VERIFY_LINES", request.param)
    return int(request.param)


def test_same_events_on_every_file_of_the_corpora(verify_lines: int) -> None:
    files = samples = active = 0
    for path in _files():
        s, a = _compare(path, path.read_bytes())
        files += 1
        samples += s
        active += a
    assert files > 500 and samples > 2000  # the corpora were found and hold metric lines
    assert active > (20 if verify_lines == 1 else 5)  # and the shortcut was taken


@pytest.mark.parametrize("mix", ["noisy", "noisy-nonccl", "nccl"])
def test_same_events_on_the_bench_corpora(mix: str, tmp_path: Path, verify_lines: int) -> None:
    generate(tmp_path, 2, seed=5, quiet=True, mix=mix)
    active = 0
    for path in sorted(tmp_path.glob("rank*.log")):
        active += _compare(path, path.read_bytes())[1]
    # every rank's own metric line, at least (the nccl mix: rank 0's HF dicts, rank 7's Megatron lines)
    assert active >= (2 if mix == "nccl" else 8)


def test_evidence_is_cut_where_the_general_path_cuts_it() -> None:
    from detectors.parse import MAX_EVIDENCE_CHARS

    assert shapes.EVIDENCE_CHARS == MAX_EVIDENCE_CHARS
    pad = "x" * 3000
    fast, general, _ = _run([f"{line} | note {pad}" for line in _lines(30)])
    assert shapes.same_events(fast, general) and len(fast[-1].source.text) == MAX_EVIDENCE_CHARS


def _lines(n: int, loss: str = "{:.4f}", start: int = 1) -> list[str]:
    return [f"2024-12-18 06:23:{i % 60:02d},{i % 1000:03d} - INFO - train - step {i}/1000 | "
            f"loss {loss.format(10 - i / 10)} | grad_norm {1 + i / 7:.4f} | lr 1.500e-07"
            for i in range(start, start + n)]


def _run(lines: list[str]) -> tuple[list[Event], list[Event], FileState]:
    data = ("\n".join(lines) + "\n").encode()
    fast, state = _parse(FAST, Path("rank3.log"), data)
    general, _ = _parse(GENERAL, Path("rank3.log"), data)
    return fast, general, state


def test_a_non_finite_value_never_takes_the_shortcut() -> None:
    lines = _lines(40)
    lines[30] = re.sub(r"loss [0-9.]+", "loss nan", lines[30])
    lines[31] = re.sub(r"grad_norm [0-9.]+", "grad_norm inf", lines[31])
    fast, general, state = _run(lines)
    assert shapes.same_events(fast, general)
    assert math.isnan(fast[30].data["loss"]) and math.isinf(fast[31].data["grad_norm"])
    book = state.shapes
    assert book is not None and sum(s is not None and s.active for s in book.shapes.values()) == 1


def test_a_shape_that_disagrees_with_the_general_path_is_retired() -> None:
    # Megatron omits "lm loss" when its average is NaN: with skipped iterations on the line that is
    # not a NaN, without it is. The same shape, two meanings: the check must catch it and retire it.
    line = (" iteration {i:8d}/ 1000 | learning rate: 1.0E-04 | loss scale: 1024.0 | "
            "number of skipped iterations: {s:3d} | number of nan iterations:   0 |")
    lines = [line.format(i=i, s=1) for i in range(101, 104)] + [line.format(i=i, s=0) for i in range(104, 130)]
    fast, general, state = _run(lines)
    assert shapes.same_events(fast, general)
    samples = [ev for ev in fast if ev.kind is EventKind.SAMPLE]
    assert [ev.data.get("loss_missing") for ev in samples[2:4]] == [None, True]
    book = state.shapes
    assert book is not None and all(s is None for s in book.shapes.values())


def test_ties_between_tokens_are_decided_by_the_lines() -> None:
    # "skipped 0 | nan 0": two tokens hold the value; the shape still says which is which
    line = (" iteration {i:8d}/ 1000 | lm loss: {l:.6E} | loss scale: 1024.0 | "
            "number of skipped iterations: {s:3d} | number of nan iterations: {n:3d} |")
    lines = [line.format(i=i, l=5 - i / 100, s=0, n=0) for i in range(1, 40)]
    lines.append(line.format(i=40, l=4.5, s=0, n=2))
    lines.append(line.format(i=41, l=4.5, s=3, n=0))
    fast, general, state = _run(lines)
    assert shapes.same_events(fast, general)
    samples = [ev for ev in fast if ev.kind is EventKind.SAMPLE]
    assert (samples[-2].data["skipped_iters"], samples[-2].data["nan_iters"]) == (0.0, 2.0)
    assert (samples[-1].data["skipped_iters"], samples[-1].data["nan_iters"]) == (3.0, 0.0)
    book = state.shapes
    assert book is not None and any(s is not None and s.active for s in book.shapes.values())


def test_the_rank_is_resolved_per_line() -> None:
    # the file's state changes (a traceback ties local rank 2 to global rank 10): the shortcut must see it
    lines = [f"[default2]:step {i} | loss {5 - i / 100:.3f} | grad_norm 1.5{i:02d}" for i in range(1, 30)]
    lines.insert(20, "[default2]:[rank10]: Traceback (most recent call last):")
    fast, general, _ = _run(lines)
    assert shapes.same_events(fast, general)
    samples = [e for e in fast if e.kind is EventKind.SAMPLE]  # (a chunk ends with its last_notes context)
    assert samples[0].local_rank == 2 and samples[-1].rank == 10


def test_a_full_book_forgets_refused_skeletons_first() -> None:
    # one-off metric lines (each its own skeleton, refused: a computed value) fill the book; the
    # file's real metric line, met later, still gets its shape
    junk = [f"{'x' * (i % 50)}{'y' * (i // 50)} lg_loss_scale {i % 7 + 1}.5 step {i}" for i in range(shapes.MAX_SHAPES + 40)]
    fast, general, state = _run(junk + _lines(30))
    assert shapes.same_events(fast, general)
    book = state.shapes
    assert book is not None and len(book.shapes) <= shapes.MAX_SHAPES
    assert sum(s is not None and s.active for s in book.shapes.values()) == 1


def test_a_value_that_only_looked_like_a_token_retires_the_shape() -> None:
    # lg_loss_scale 2 means a loss scale of 4: on the first line two other tokens say 4.0 as well,
    # on the next ones no token holds the value (it is computed): retired, never a wrong value
    lines = [f"step {i} | lg_loss_scale {2 + i // 2}.0 | loss 1.5 | a 4.0 | b 4.0" for i in range(20)]
    fast, general, state = _run(lines)
    assert shapes.same_events(fast, general)
    assert [ev.data["loss_scale"] for ev in fast[:4]] == [4.0, 4.0, 8.0, 8.0]
    book = state.shapes
    assert book is not None and all(s is None for s in book.shapes.values())


def test_a_sum_that_one_token_held_by_chance_never_takes_the_shortcut() -> None:
    # BMSG-GAN's log (corpus h21a-019): the loss is d_loss + g_loss, and d_loss sat at 0.000000 for
    # the first lines, so the sum was one token's value; with VERIFY_LINES = 1 the shortcut used to
    # read g_loss alone as the loss once d_loss moved
    lines = [f"Elapsed [8:57:{i:02d}.757418] batch: {38800 + i}  d_loss: {0 if i < 10 else 0.261001:.6f}  "
             f"g_loss: {15.882168 - i / 100:.6f}" for i in range(30)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(shapes, "VERIFY_LINES", 1)
        fast, general, state = _run(lines)
    assert shapes.same_events(fast, general)
    assert fast[-1].data["loss"] == pytest.approx(0.261001 + 15.882168 - 0.29)
    book = state.shapes
    assert book is not None and all(s is None for s in book.shapes.values())
