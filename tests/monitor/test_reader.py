"""ChunkReader: any split of the same bytes gives the same lines; long lines are capped and counted."""

from __future__ import annotations

import pytest
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


def _segments_run(data: bytes, cuts: list[int], live: bool, max_line: int = 1 << 20) -> list[tuple[int, bytes]]:
    """Every (line number, \\r-segment) handed out, in order: what a parser would see."""
    r = ChunkReader(max_line=max_line)
    out: list[tuple[int, bytes]] = []

    def take(buf: bytes, first: int, pseudo: bool) -> None:
        for i, line in enumerate(buf.split(b"\n")[:-1]):
            out.extend((first + (0 if pseudo else i), seg) for seg in line.split(b"\r"))

    pos = 0
    for c in [*sorted(set(cuts)), len(data)]:
        c = min(max(c, pos), len(data))
        take(*r.feed(data[pos:c]), pseudo=False)
        if live:
            take(*r.segments(), pseudo=True)
        pos = c
    take(*r.flush(), pseudo=False)
    return out


_TQDM = st.lists(st.sampled_from([b"a", b"loss=1", b"\r", b"\n", b"\r\r", b"x" * 7]), max_size=60).map(b"".join)


@settings(max_examples=300, deadline=None)
@given(st.one_of(_TQDM, st.binary(max_size=300)), st.lists(st.integers(min_value=0, max_value=300), max_size=12))
def test_live_segments_hand_out_every_segment_once_sooner(data: bytes, cuts: list[int]) -> None:
    """A tqdm bar's \\r-updates reach the parser before the line's newline, each exactly once,
    with the line's number; line numbers and the lines themselves are unchanged."""
    assert _segments_run(data, cuts, live=True) == _segments_run(data, [], live=False)


def test_a_bar_postfix_is_seen_before_the_epoch_ends() -> None:
    r = ChunkReader()
    assert r.feed(b"step 1\nEpoch 0:  10%|#| 1/10 [00:01<00:09, loss=2.1]\rEpoch 0:  20%|##| 2/10 [00:02<00:08, loss=")
    assert r.segments() == (b"Epoch 0:  10%|#| 1/10 [00:01<00:09, loss=2.1]\n", 2)
    assert r.segments() == (b"", 2)  # nothing new: the update being written is not complete
    assert r.feed(b"nan]\r") == (b"", 2)
    assert r.segments() == (b"Epoch 0:  20%|##| 2/10 [00:02<00:08, loss=nan]\n", 2)
    buf, first = r.feed(b"Epoch 0: 100%|###| 10/10\n")
    assert (buf, first, r.lines_done) == (b"Epoch 0: 100%|###| 10/10\n", 2, 2)


def _run_uncounted(data: bytes, cuts: list[int], advance_every: int, max_line: int = 1 << 20) -> list[tuple[int, bytes]]:
    """``_run`` with ``count=False``: the caller counts each chunk's lines and says so with
    ``advance``, except on every ``advance_every``-th chunk, which the reader must count itself."""
    r = ChunkReader(max_line=max_line, count=False)
    out: list[tuple[int, bytes]] = []
    pos = 0
    handed = 0
    for c in [*sorted(set(cuts)), len(data)]:
        c = min(max(c, pos), len(data))
        buf, first = r.feed(data[pos:c])
        lines = buf.split(b"\n")[:-1]
        out += [(first + i, line) for i, line in enumerate(lines)]
        if buf:
            handed += 1
            if handed % advance_every:
                r.advance(len(lines))
        pos = c
    buf, first = r.flush()
    out += [(first + i, line) for i, line in enumerate(buf.split(b"\n")[:-1])]
    assert r.lines_done == len(out)
    return out


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400), st.lists(st.integers(min_value=0, max_value=400), max_size=12),
       st.integers(min_value=1, max_value=3), st.sampled_from([8, 1 << 20]))
def test_caller_counted_lines_are_numbered_alike(data: bytes, cuts: list[int], every: int, max_line: int) -> None:
    # count=False (diagnose: the parse counts the newlines) numbers every line as the reader's own count
    # does, also when a chunk is left uncounted (the next call counts it) and across capped lines
    counted, _ = _run(data, cuts, max_line=max_line)
    assert _run_uncounted(data, cuts, every, max_line=max_line) == counted


def test_advance_without_a_chunk_is_refused() -> None:
    r = ChunkReader(count=False)
    with pytest.raises(RuntimeError):
        r.advance(1)
    buf, _ = r.feed(b"a\nb\n")
    r.advance(buf.count(b"\n"))
    with pytest.raises(RuntimeError):
        r.advance(2)  # the same chunk twice
    assert r.lines_done == 2
