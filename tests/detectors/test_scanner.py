"""The multi-pattern scan: every engine finds the same candidate lines, in linear time."""

from __future__ import annotations

import re
import time
from pathlib import Path

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


# noise rejected by structure: ids 0-1 are "metric" triggers, 2 a "perf" trigger, 3 a fingerprint
NOISE_PATTERNS = [r"loss", r"step ?\d+", r"\d+(?:\.\d+)? samples/s", r"Connection closed by"]


def _noise_scan(engine: str, buf: bytes) -> list[list[int]]:
    from detectors.scanner import NoiseRule

    rule = NoiseRule(frozenset({0, 1}), frozenset({0, 1, 2}), ["loss", "step", "grad_norm"])
    return [sorted(ids) for _, _, ids in Scanner(NOISE_PATTERNS, engine=engine, noise=rule).scan(buf)]


@pytest.mark.parametrize("engine", ENGINES)
def test_metric_trigger_needs_a_number_beside_a_metric_key(engine: str) -> None:
    assert _noise_scan(engine, b"the loss function is cross entropy\n") == []
    assert _noise_scan(engine, b"step 12 | loss 2.31\n") == [[0, 1]]
    assert _noise_scan(engine, b"{'eval_loss': 2.5, 'eval_runtime': 3.1}\n") == [[0]]  # a prefixed key counts
    assert _noise_scan(engine, b"throughput 812.5 samples/s\n") == [[2]]  # not a metric trigger: kept
    # MXNet glues CamelCase loss parts to their names (corpus holdout5 h5-082): a metric key too
    assert _noise_scan(engine, b"Train-RPNAcc=0.797503, RPNL1Loss=nan (lossless)\n") == [[0]]
    assert _noise_scan(engine, b"Train-RPNAcc=0.797503, rpnl1loss=nan (lossless)\n") == []  # glued lower case: no key


@pytest.mark.parametrize("engine", ENGINES)
def test_nccl_info_and_tqdm_lines_are_noise_unless_they_carry_a_metric(engine: str) -> None:
    nccl = b"node1:4242:4300 [3] NCCL INFO Channel 00/0 : 3[3] -> 4[4] via P2P (lossless), 812.5 samples/s\n"
    assert _noise_scan(engine, nccl) == []
    assert _noise_scan(engine, nccl.replace(b"NCCL INFO", b"INFO")) == [[2]]  # not NCCL: perf kept
    warn = b"node1:4242:4300 [3] NCCL INFO [Service thread] Connection closed by localRank 2 (lossy link)\n"
    assert _noise_scan(engine, warn) == [[3]]  # a fingerprint is never vetoed; the metric trigger is
    bar = "\r 50%|█████     | 5/10 [00:01<00:01, 812.50 samples/s]\r 60%|██████    | 6/10 [00:01<00:01, 812.50 samples/s]\n"
    assert _noise_scan(engine, bar.encode()) == []
    postfix = "\r 50%|█████     | 5/10 [00:01<00:01, 812.50 samples/s, loss=2.31]\n"
    assert _noise_scan(engine, postfix.encode()) == [[0, 2]]
    glued = "\r 50%|█████     | 5/10 [00:01<00:01, 812.50 samples/s]step 5 done\n"  # text after the bar
    assert _noise_scan(engine, glued.encode()) == [[1, 2]]


def test_parser_rejects_a_dataset_map_bar() -> None:
    """A datasets ``Map`` bar in samples/s is a throughput trigger by its unit; it is noise, and
    parsing it would give nothing anyway."""
    from detectors.parsers.base import FileState

    line = "\rMap:  50%|█████     | 5000/10000 [00:01<00:01, 4000.00 samples/s]"
    parser = default_parser()
    assert parser.scanner.scan((line + "\n").encode()) == []
    assert parser.parse_line(line, 1, FileState(path="x")) == []


_WANT: dict[tuple[tuple[str, ...], str], list[tuple[int, bytes, frozenset[int]]]] = {}


def _rule_hits(patterns: tuple[str, ...], path: Path, buf: bytes) -> list[tuple[int, bytes, frozenset[int]]]:
    """(offset, line, ids of the rules whose Python regex matches it) of every line that some rule
    matches: the truth, computed once per file and shared by the engines' runs (it is the slow part)."""
    key = (patterns, str(path))
    if key not in _WANT:
        rules = [re.compile(p.encode()) for p in patterns]
        hits, pos = [], 0
        for line in buf.split(b"\n")[:-1]:
            want = frozenset(i for i, rx in enumerate(rules) if rx.search(line))
            if want:
                hits.append((pos, line, want))
            pos += len(line) + 1
        _WANT[key] = hits
    return _WANT[key]


@pytest.mark.parametrize("engine", [e for e in ENGINES if e != "re"])
def test_scan_finds_every_line_a_rule_matches_in_the_real_corpora(engine: str, real_logs: Path) -> None:
    """Candidate lines are a superset of the lines each rule's Python regex matches, over every
    real log the project has (a false negative of the engine would silently lose a failure)."""
    parser = LogParser(engine=engine)
    # no noise rule: the raw engine, with the scan forms the parser runs (detectors/scanforms.py)
    scanner = Scanner(parser.scanner.patterns, engine=engine, forms=parser.scanner.forms)
    corpus = Path(__file__).resolve().parents[1] / "corpus"
    files = sorted(corpus.glob("*/*/combined.log")) + sorted(real_logs.glob("*/combined.log"))
    assert len(files) > 700
    lost: list[str] = []
    matched = 0
    for path in files:
        buf = path.read_bytes()
        if not buf.endswith(b"\n"):
            buf += b"\n"
        found = {s: set(ids) for s, _e, ids in scanner.scan(buf)}
        for pos, line, want in _rule_hits(tuple(scanner.patterns), path, buf):
            matched += 1
            if not want <= found.get(pos, set()):
                lost.append(f"{path.parent.name}: {line[:120]!r} {sorted(want - found.get(pos, set()))}")
    assert matched > 1000  # the rules do match the corpora's lines
    assert lost == []


@pytest.mark.parametrize("engine", ENGINES)
def test_non_ascii_text_inside_a_bounded_gap_is_still_found(engine: str) -> None:
    # a rule counts characters ("Error: .{0,20}nan"); Hyperscan and re scan bytes, where each of
    # these Chinese characters is three: the scan must still offer the line (a superset)
    pattern = r"(?:Error|Exception):\s.{0,20}?(?:NaN|nan)"
    line = "RuntimeError: 训练损失出现异常值，模型参数为 nan".encode()
    assert re.search(pattern, line.decode()) is not None
    assert [ids for _, _, ids in Scanner([pattern, r"a[^x]b"], engine=engine).scan(line + b"\n")] == [[0]]
    assert [ids for _, _, ids in Scanner([r"a[^x]b"], engine=engine).scan("aéb\n".encode())] == [[0]]
