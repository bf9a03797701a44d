"""A loop's guard on the all-reduced finiteness check counts the ranks whose gradient norm was
non-finite (``[rank 0] step  52 | WARNING non-finite grad norm on 1 rank(s), skipping optimizer
step``): a report of other ranks' values, printed by the logging rank at the step it names, often
before the bad rank's own line. The rank whose own ``grad_norm nan`` shows at that step (its
peers' finite) is the initiator. Shape: a CPU torchrun job's interleaved console (corpus holdout26
g26c-002)."""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict


def _job(bad: int) -> list[str]:
    lines: list[str] = []
    for step in [*range(40, 52, 4), *range(52, 61)]:  # every 4th step logged, then every step
        if step >= 52:
            lines.append(f"[rank 0] step {step:3d} | WARNING non-finite grad norm on 1 rank(s), skipping optimizer step")
        for r in (0, 2, 1):
            g = "nan" if r == bad and step >= 52 else f"{0.5 + r / 10:.4f}"
            lines.append(f"[rank {r}] step {step:3d} | loss {1.5 - step / 1000 + r / 100:.4f} | grad_norm {g} | temp 0.500")
    return lines


@pytest.mark.parametrize("bad", [1, 2])
def test_the_rank_whose_own_norm_went_nan_is_named_not_the_guards_speaker(bad: int) -> None:
    top = engine_verdict(_job(bad))[0]
    assert (top.failure, top.rank, top.step) == ("nonfinite_loss", bad, 52), top
