"""A logger header whose clock has no date: ``logging.basicConfig(format="%(asctime)s
%(levelname)s %(message)s", datefmt="%H:%M:%S")`` (the logging HOWTO's own example of ``datefmt``),
and loguru's ``{time:HH:mm:ss.SSS} {level.icon} {level: <8} {message}`` with the level's icon
(loguru's documented ``level.icon``: ℹ️ INFO, ⚠️ WARNING). The clock, the icon and the level are
peeled off like a dated header's, so the level is known (a warning is no progress note) and a rank
tag after it is the line's."""

from __future__ import annotations

from detectors.prefixes import split_prefixes


def test_a_time_only_clock_before_the_level_is_a_header() -> None:
    for line, rank, level, body in [
        ("19:52:55 INFO [rank1] step 5 loss=1.2", 1, "INFO", "step 5 loss=1.2"),
        ("[19:52:55] WARNING [rank3] grad norm is inf", 3, "WARNING", "grad norm is inf"),
        ("12:30:01,123 ERROR: epoch 3 failed", None, "ERROR", "epoch 3 failed"),
        ("19:52:56.441 \u26a0\ufe0f WARNING r3 step 27: local grad_norm=nan", None, "WARNING", "r3 step 27: local grad_norm=nan"),
        ("19:52:55.856 \u2139\ufe0f INFO    r0 step 5: loss=1.2070", None, "INFO", "r0 step 5: loss=1.2070"),
    ]:
        p = split_prefixes(line, 2026)
        assert (p.rank, p.level, p.body) == (rank, level, body), line


def test_a_clock_before_other_words_is_left_in_the_message() -> None:
    for line in ["12:01:02 I train.py:40] x", "10:00:00 INFORMATION x", "19:52:55 step 5 loss 1.2"]:
        p = split_prefixes(line, 2026)
        assert p.level is None and p.body == line
