"""A user's rank tag after python logging's relative clock.

``%(relativeCreated)d`` is the milliseconds since the logging module was loaded, right-aligned by
its width (the Python logging cookbook's ``'%(relativeCreated)6d %(threadName)s %(message)s'``;
the LogRecord attribute table of the logging docs); a job that logs it before its own short rank
tag (``%(relativeCreated)8dms [R%(rank)s] %(levelname).1s %(message)s``, corpus holdout29 g29-023,
generated; the bare ``[R1]`` tag at a line's start, holdout18 g18-016) names the rank with the tag.
The clock alone, before anything but such a tag, is left in the message.
"""

from __future__ import annotations

import pytest

from detectors.prefixes import split_prefixes
from tests.helpers import engine_verdict


@pytest.mark.parametrize(("line", "rank", "body"), [
    ("   10294ms [R3] W step 52: non-finite local grad norm nan (loss 0.6255)", 3,
     "W step 52: non-finite local grad norm nan (loss 0.6255)"),
    ("  8869 [r1] I step 10 loss 1.1877", 1, "I step 10 loss 1.1877"),
    ("   10294ms [rank2] step 52 loss 1.0", 2, "step 52 loss 1.0"),
    ("     12 rank0: step 3 loss 2.5", 0, "step 3 loss 2.5"),
])
def test_the_tag_after_a_relative_clock_names_the_rank(line: str, rank: int, body: str) -> None:
    p = split_prefixes(line, 2026)
    assert (p.rank, p.body) == (rank, body)


def test_a_number_before_anything_else_is_left_alone() -> None:
    for line in ("   12 Thread-1 Hi from myfunc", "2024 rank 3 done", "  300 steps [r3 warm-up]"):
        p = split_prefixes(line, 2026)
        assert p.rank is None and p.body == line
    assert split_prefixes("   12 [R1] Hi from myfunc", 2026).rank == 1  # (the contrast)


def _job() -> list[str]:
    lines: list[str] = []
    t = 8869
    for step in range(10, 51, 10):
        for r in (1, 0, 2, 3):
            t += 3
            lines.append(f"{t:8d}ms [R{r}] I step {step} loss {1.2 - step / 100 + r / 50:.4f} "
                         f"local_grad_norm {0.7 - step / 200 + r / 40:.3f}")
    lines.append(f"{t + 50:8d}ms [R3] W step 52: non-finite local grad norm nan (loss 0.6255)")
    for step in range(53, 58):
        for r in (3, 1, 2, 0):
            lines.append(f"{t + 20 * step:8d}ms [R{r}] W step {step}: non-finite local grad norm nan (loss nan)")
    return lines


def test_the_rank_whose_local_grad_norm_went_nan_first_is_named() -> None:
    # only [R3] warns at step 52 (its loss still finite); from step 53 every rank's loss is NaN
    top = engine_verdict(_job())[0]
    assert (top.failure, top.rank, top.step) == ("nonfinite_loss", 3, 52)
