"""ESPnet2's logging format: ``[{hostname}:{rank}/{world_size}] %(asctime)s (%(module)s:%(lineno)d)
%(levelname)s: %(message)s`` (espnet2/tasks/abs_task.py). The bracket names the host and the rank.

Real lines: espnet/espnet#4095 (corpus holdout3 h3-092, ``[7cc1303a881b:0/8] 2022-02-21 11:42:05,031
(trainer:617) WARNING: The grad norm is nan. Skipping updating the model.``); a four-process CPU job
in the same format (holdout32 g32b-005).
"""

from __future__ import annotations

import pytest

from detectors.prefixes import split_prefixes
from tests.helpers import engine_verdict


@pytest.mark.parametrize(("line", "host", "rank"), [
    ("[7cc1303a881b:0/8] 2022-02-21 11:42:05,031 (trainer:617) WARNING: The grad norm is nan. Skipping updating the model.",
     "7cc1303a881b", 0),
    ("[node7:5/6] 2023-03-01 09:12:44,120 (trainer:321) INFO: 3epoch results: [train] iter_time=0.2, loss=12.3",
     "node7", 5),
])
def test_the_bracket_names_the_host_and_the_rank(line: str, host: str, rank: int) -> None:
    pre = split_prefixes(line, 2023)
    assert (pre.host, pre.rank, pre.time is not None) == (host, rank, True)


@pytest.mark.parametrize("line", ["[vm:4/4] 2026-12-08 00:34:48,465 (train:41) INFO: x",  # no rank 4 of 4
                                  "[train:1/4] step 12 loss 0.5",  # a user's own label with no clock behind it
                                  "[0/4][12/20]\tLoss_D: 1.1237"])
def test_brackets_of_other_shapes_name_no_rank(line: str) -> None:
    assert split_prefixes(line, 2026).rank is None


def _interval(rank: int, first: int, gnorm: str) -> str:
    return (f"[vm:{rank}/4] 2026-12-08 00:34:{48 + first // 20:02d},465 (train:41) INFO: 1epoch:train:{first}-{first + 19}batch: "
            f"loss_ctc=3.912, loss_att=3.502, acc=0.031, loss=3.625, grad_norm={gnorm}, iter_time=0.089")


def test_one_ranks_own_grad_norm_going_inf_with_no_step_on_the_lines_names_it() -> None:
    # ESPnet's reporter lines carry no step, only "1epoch:train:21-40batch": rank 1's norm is inf,
    # the three others keep logging finite norms after it (an all-reduced inf would reach them all)
    lines = [_interval(r, 1, "1.404") for r in range(4)]
    lines += ["[vm:1/4] 2026-12-08 00:34:49,498 (train:33) WARNING: The grad norm is inf. Skipping updating the model."]
    lines += [_interval(r, first, "inf" if r == 1 else "0.841") for first in (21, 41, 61) for r in (3, 2, 1, 0)]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("nonfinite_loss", 1)


def test_every_ranks_grad_norm_going_inf_names_none() -> None:
    lines = [_interval(r, 1, "1.404") for r in range(4)] + [_interval(r, 21, "inf") for r in (3, 2, 1, 0)]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("nonfinite_loss", None)
