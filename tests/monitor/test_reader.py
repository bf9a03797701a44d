"""ChunkReader: any split of the same bytes gives the same lines; long lines are capped and counted."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.reader import ChunkReader


def _run(data: bytes, cuts: list[int], max_line: int = 1 << 20) -> tuple[list[tuple[int, bytes]], ChunkReader]:
    r = ChunkReader(max_line=max_line)
    out: list[tuple[int, bytes]] = []
    pos = 0
    for c in [*sorted(set(cuts)), len(data)]:
        c = min(max(c, pos), len(data))
        buf, first = r.feed(data[pos:c])
        out += [(first + i, line) for i, line in enumerate(buf.split(b"\n")[:-1])]
        pos = c
    buf, first = r.flush()
    out += [(first + i, line) for i, line in enumerate(buf.split(b"\n")[:-1])]
    return out, r


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400), st.lists(st.integers(min_value=0, max_value=400), max_size=12))
def test_any_chunking_gives_the_same_lines(data: bytes, cuts: list[int]) -> None:
    whole, _ = _run(data, [])
    split, _ = _run(data, cuts)
    assert split == whole
    expected = data.split(b"\n")
    if expected and expected[-1] == b"":
        expected.pop()
    assert [line for _, line in whole] == expected
    assert [n for n, _ in whole] == list(range(1, len(expected) + 1))


def test_long_line_is_capped_and_counted() -> None:
    data = b"a\n" + b"x" * 5000 + b"\nafter\n"
    for cuts in ([], [10, 3000, 4000], list(range(0, len(data), 7))):
        lines, r = _run(data, cuts, max_line=1000)
        assert [ln for _, ln in lines] == [b"a", b"x" * 1000, b"after"]
        assert [n for n, _ in lines] == [1, 2, 3]
        assert r.truncated_lines == 1 and r.dropped_bytes == 4000


def test_unterminated_last_line_is_kept() -> None:
    lines, _ = _run(b"one\ntwo", [2])
    assert lines == [(1, b"one"), (2, b"two")]
