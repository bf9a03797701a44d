"""``diagnose`` with worker processes gives the same report, byte for byte, as one process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import monitor.diagnose as diagnose_mod
import monitor.parallel as parallel_mod
from bench.generate import generate
from monitor.diagnose import diagnose_paths

GOLDEN = Path(__file__).resolve().parents[1] / "e2e" / "golden"
MULTI_FILE_CASES = sorted(
    p.parent.name for p in GOLDEN.glob("*/expected.json") if sum(1 for f in (p.parent / "logs").rglob("*") if f.is_file()) > 1
)


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parallel even for small inputs, and many batches per file (forked workers see this too)."""
    monkeypatch.setattr(diagnose_mod, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(diagnose_mod, "CHUNK", 4096)


def _json(paths: list[str], jobs: int) -> str:
    return json.dumps(diagnose_paths(paths, job="job", jobs=jobs).report, indent=2, ensure_ascii=False)


def test_golden_cases_have_several_files() -> None:
    assert len(MULTI_FILE_CASES) >= 8, MULTI_FILE_CASES


@pytest.mark.parametrize("case", MULTI_FILE_CASES)
def test_parallel_equals_serial_on_golden_cases(case: str, small_chunks: None) -> None:
    logs = str(GOLDEN / case / "logs")
    assert _json([logs], jobs=3) == _json([logs], jobs=1)


def test_parallel_equals_serial_on_the_noisy_bench_corpus(tmp_path: Path, small_chunks: None,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(diagnose_mod, "CHUNK", 256 << 10)
    corpus = tmp_path / "noisy"
    generate(corpus, 2, seed=3, quiet=True, mix="noisy")
    serial = _json([str(corpus)], jobs=1)
    assert json.loads(serial)["incidents"][0]["failure"] == "cuda_oom"
    assert _json([str(corpus)], jobs=2) == serial
    assert _json([str(corpus)], jobs=8) == serial


def _filler(n: int, tag: str) -> str:
    return "".join(f"2024-12-18 06:00:{i % 60:02d},000 - INFO - data - {tag} shard {i} prefetched\n" for i in range(n))


@pytest.mark.parametrize("tail", [50, 6000])
def test_rank_learnt_from_an_earlier_file_is_used(tmp_path: Path, small_chunks: None, tail: int) -> None:
    """NCCL host:pid -> rank comes from a.log; b.log's NCCL WARN of that pid needs it (the
    worker parsing b.log alone cannot know it: the main process re-parses b.log). With a
    long tail b.log has many more 4 KiB batches than ``AHEAD``: its worker is stopped while
    still parsing (usually waiting on its full queue), not after it sent the whole file."""
    if tail > 100:
        assert tail * 60 > 2 * parallel_mod.AHEAD * 4096  # (a filler line is ~66 bytes)
    (tmp_path / "a.log").write_text(
        "node7:4242:4300 [3] NCCL INFO comm 0x7f12ab00 rank 3 nRanks 4 cudaDev 3 busId 3a000 - Init START\n"
        + _filler(300, "a")
    )
    (tmp_path / "b.log").write_text(
        "{'loss': 2.5, 'grad_norm': 1.25, 'learning_rate': 1e-05, 'epoch': 0.1}\n"
        + _filler(400, "b")
        + "node7:4242:4250 [3] misc/socket.cc:50 NCCL WARN Net : Connection closed by remote peer "
        "node8<41734>\n"
        + _filler(tail, "b")
    )
    serial = _json([str(tmp_path)], jobs=1)
    report = json.loads(serial)
    blamed = {(c["rank"], c["evidence"]["path"]) for inc in report["incidents"] for c in inc["collateral"]}
    blamed |= {(inc["initiator"]["rank"], e["path"]) for inc in report["incidents"] for e in inc["initiator"]["evidence"]}
    assert (3, "b.log") in blamed, serial
    assert _json([str(tmp_path)], jobs=2) == serial
