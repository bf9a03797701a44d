"""ESPnet2's logging format: ``[{hostname}:{rank}/{world_size}] %(asctime)s (%(module)s:%(lineno)d)
%(levelname)s: %(message)s`` (espnet2/tasks/abs_task.py). The bracket names the host and the rank.

Real lines: espnet/espnet#4095 (corpus holdout3 h3-092, ``[7cc1303a881b:0/8] 2022-02-21 11:42:05,031
(trainer:617) WARNING: The grad norm is nan. Skipping updating the model.``); a four-process CPU job
in the same format (holdout32 g32b-005).
"""

from __future__ import annotations

import pytest

from detectors.prefixes import split_prefixes


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
