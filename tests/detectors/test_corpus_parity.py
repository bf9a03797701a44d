"""Live and offline give the same verdict on the real corpus: every fourth case of ``tests/corpus``
(real excerpts and generated jobs, the newest held-out sets among them) is fed to one engine whole,
as ``diagnose`` reads a finished log, and to another a few lines at a time, as the daemon's tailer
hands over what a file grew by (1, 3, 7 or 64 lines per chunk, by case). The first incident's
failure, rank and severity must agree. (All of the corpus at 7 lines a chunk agreed in round 26;
the suite runs a quarter to keep its time.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from detectors.engine import Engine

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
CASES = sorted(CORPUS.glob("*/*/combined.log"))[::4]
SIZES = (1, 3, 7, 64)


def _top(engine: Engine) -> tuple[str, int | None, str] | None:
    verdict = engine.verdict()
    return (verdict[0].failure, verdict[0].rank, verdict[0].severity) if verdict else None


@pytest.mark.parametrize("size", SIZES)
def test_chunked_feeds_give_the_whole_files_verdict(size: int) -> None:
    differ: list[str] = []
    checked = 0
    for i, path in enumerate(CASES):
        if SIZES[i % len(SIZES)] != size:
            continue
        data = path.read_bytes()
        if not data.endswith(b"\n"):
            data += b"\n"
        lines = data.split(b"\n")[:-1]
        whole = Engine("t")
        whole.feed(data, 1, whole.open_file("combined.log"))
        live = Engine("t")
        fs = live.open_file("combined.log")
        for j in range(0, len(lines), size):
            live.feed(b"".join(ln + b"\n" for ln in lines[j:j + size]), j + 1, fs)
        checked += 1
        if _top(whole) != _top(live):
            differ.append(f"{path.parent.parent.name}/{path.parent.name}: {_top(whole)} != {_top(live)}")
    assert checked > 100
    assert not differ, differ[:5]
