"""NoiseRule.has_pair answers by a line's digit layout (detectors/scanner.py): the answer is
exactly the search's, for the parser's real metric keys (one of them holds a digit:
``log2_loss_scale``), on the test corpora's candidate lines, on lines built from keys,
digits and separators, and a second time from the memo."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from detectors.parsers import metrics
from detectors.scanner import NoiseRule
from tests.helpers import corpus_candidate_lines


def _rule() -> NoiseRule:
    return NoiseRule(frozenset(), frozenset(), metrics._KEYS)


def test_a_digit_written_in_a_key_keeps_its_meaning() -> None:
    only = NoiseRule(frozenset(), frozenset(), ["log2"])
    assert not only.has_pair(b"log5: 16")  # remembered first: its layout must not answer for log2
    assert only.has_pair(b"log2: 16")
    assert not only.has_pair(b"log7: 99")
    rule = _rule()
    for line in (b"log2_loss_scale: 16", b"log5_loss_scale: 16", b"log2_loss_scale: x", b"xloss: 1", b"loss: 1"):
        assert rule.has_pair(line) == rule._search(line), line
        assert rule.has_pair(line) == rule._search(line), line  # from the memo


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([b"loss", b"log2_loss_scale", b"grad_norm", b"lr", b"step", b"_", b"x", b"X",
                                 b"0", b"2", b"7", b"12", b".", b":", b"=", b" ", b"'", b"nan", b"tensor(["]),
                max_size=14))
def test_same_answer_as_the_search(parts: list[bytes]) -> None:
    rule = _rule()
    line = b"".join(parts)
    assert rule.has_pair(line) == rule._search(line)
    assert rule.has_pair(line) == rule._search(line)


def test_same_answer_on_the_test_corpora_candidate_lines() -> None:
    rule = _rule()
    n = 0
    for path, line in corpus_candidate_lines():
        assert rule.has_pair(line) == rule._search(line), (path, line)
        n += 1
    assert n > 1000
