"""The multi-pattern scan: every engine finds the same candidate lines, in linear time."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from detectors.parse import LogParser, default_parser
from detectors.scanner import Scanner, available_engines

ENGINES = available_engines()
PATTERNS = [r"Watchdog caught (?P<x>\w+)", r"CUDA out of memory", r"loss[=:] ?(?:nan|inf)", r"(?:Error|Exception):"]

CORPUS = (
    b"host:1:2 [0] NCCL INFO Channel 00\n"
    b"[rank1]: Watchdog caught collective operation timeout\n"
    b"noise\r 10%|#  | 1/10 [00:01<00:09,  1.0it/s]\r torch.OutOfMemoryError: CUDA out of memory.\n"
    b"step 3 loss=nan\n"
    b"\xff\xfe invalid utf8 ValueError: boom\n"
    b"last line without newline Exception: x"
)


def _lines(engine: str, buf: bytes) -> list[tuple[int, int, list[int]]]:
    return [(s, e, sorted(ids)) for s, e, ids in Scanner(PATTERNS, engine=engine).scan(buf)]


@pytest.mark.parametrize("engine", ENGINES)
def test_engines_agree_with_python_re(engine: str) -> None:
    assert _lines(engine, CORPUS) == _lines("re", CORPUS)
    assert [CORPUS[s:e].split(b"\r")[0][:10] for s, e, _ in _lines(engine, CORPUS)] == [
        b"[rank1]: W", b"noise", b"step 3 los", b"\xff\xfe invalid", b"last line ",
    ]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([
    "NCCL INFO x", "Watchdog caught it", "CUDA out of memory", "loss=nan", "ok", "", "ValueError: v", "\r 5%|", "é",
]), max_size=30))
def test_engines_agree_on_random_logs(parts: list[str]) -> None:
    buf = "\n".join(parts).encode()
    want = _lines("re", buf)
    for engine in ENGINES:
        assert _lines(engine, buf) == want


def test_unknown_engine_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="not available"):
        Scanner(PATTERNS, engine="nope")


@pytest.mark.parametrize("engine", ENGINES)
def test_fallback_engines_give_the_same_events(engine: str, real_logs) -> None:  # type: ignore[no-untyped-def]
    """The parser over each engine (hyperscan → RE2 → re fallback) yields identical events."""
    from detectors.parsers.base import FileState

    ref = default_parser()
    other = LogParser(engine=engine)
    for case in sorted(real_logs.iterdir()):
        log = case / "combined.log"
        if not log.exists():
            continue
        buf = log.read_bytes()
        if not buf.endswith(b"\n"):
            buf += b"\n"
        a = ref.parse_chunk(buf, 1, FileState("x"))
        b = other.parse_chunk(buf, 1, FileState("x"))
        assert [(e.kind, e.failure, e.source.line, e.rank) for e in a] == [(e.kind, e.failure, e.source.line, e.rank) for e in b], case.name


@pytest.mark.parametrize("engine", [e for e in ENGINES if e != "re"])
def test_hostile_line_is_linear(engine: str) -> None:
    """A 1 MB line built to make backtracking engines explode is scanned quickly."""
    parser = default_parser() if engine == ENGINES[0] else LogParser(engine=engine)

    def cost(n: int) -> float:
        line = b"step=1 " + b"loss " * n + b"\n"
        t = time.perf_counter()
        for _ in range(3):
            parser.scanner.scan(line)
        return time.perf_counter() - t

    small, big = cost(20_000), cost(200_000)
    # 10x the input: linear is ~10x the time; quadratic would be ~100x. Relative, not a deadline.
    assert big < small * 40 + 0.05


@pytest.mark.skipif("hyperscan" not in ENGINES, reason="hyperscan not installed")
def test_database_cache_round_trip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A database loaded from the cache finds what a fresh compile finds; a damaged entry is replaced."""
    from detectors.scanner import set_database_cache
    from monitor.scancache import FileDatabaseCache

    cache = FileDatabaseCache(tmp_path)
    fresh = _lines("hyperscan", CORPUS)
    set_database_cache(cache)
    try:
        assert _lines("hyperscan", CORPUS) == fresh  # compiled, then stored
        (entry,) = tmp_path.glob("scan-*.hsdb")
        stored = entry.read_bytes()
        assert _lines("hyperscan", CORPUS) == fresh  # loaded
        entry.write_bytes(b"not a database")
        assert _lines("hyperscan", CORPUS) == fresh  # recompiled
        assert entry.read_bytes() == stored
    finally:
        set_database_cache(None)
