"""detectors/volatile.py: the cached digest of a context-only line is exactly the CRC-32 of
the line with its VOLATILE parts replaced by "#", for lines whose layout is cached, lines that
share a layout but not their integers, lines holding the placeholder byte, and random bytes."""

from __future__ import annotations

import zlib

from hypothesis import given, settings
from hypothesis import strategies as st

from detectors import volatile
from tests.helpers import corpus_candidate_lines


def _reference(line: bytes) -> int:
    return zlib.crc32(volatile.VOLATILE.sub(b"#", line))


def test_same_digest_as_substitution_on_timer_lines() -> None:
    lines = [
        b"[2024-12-18 06:23:16,512] [INFO] [logging.py:128:log_dist] [Rank 0] time (ms) | fwd: 459.70 | bwd: 901.2",
        b"[2024-12-18 06:23:17,004] [INFO] [logging.py:128:log_dist] [Rank 0] time (ms) | fwd: 448.93 | bwd: 899.0",
        b"[2024-12-18 06:23:17,004] [INFO] [logging.py:128:log_dist] [Rank 1] time (ms) | fwd: 448.93 | bwd: 899.0",
        b"[2024-12-18 06:23:17,004] [INFO] [logging.py:129:log_dist] [Rank 1] time (ms) | fwd: 448.93 | bwd: 899.0",
        b"12:34:56 123:45:67 1-2-3 4,5 7.5e3 step 10 step 11",
        b"NUL \x00 in 1.5 and 2",
        b"",
    ]
    for line in lines * 2:  # the second pass reads the cached layouts and digests
        assert volatile.digest(line) == _reference(line)
    # the same layout with other integers is another line; with other decimals it is the same
    assert volatile.digest(lines[1]) == volatile.digest(lines[0].replace(b"459.70", b"448.93").replace(b"901.2", b"899.0")
                                                         .replace(b"16,512", b"17,004"))
    assert volatile.digest(lines[2]) != volatile.digest(lines[1])
    assert volatile.digest(lines[3]) != volatile.digest(lines[2])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([b"0", b"1", b"9", b"12", b":", b".", b",", b"-", b"#", b" ", b"a", b"\x00", b"\r"]),
                max_size=30))
def test_same_digest_as_substitution_on_any_bytes(parts: list[bytes]) -> None:
    line = b"".join(parts)
    assert volatile.digest(line) == _reference(line)
    assert volatile.digest(line) == _reference(line)  # cached


def test_same_digest_on_the_test_corpora_candidate_lines() -> None:
    n = 0
    for path, line in corpus_candidate_lines():
        assert volatile.digest(line) == _reference(line), (path, line)
        n += 1
    assert n > 1000
