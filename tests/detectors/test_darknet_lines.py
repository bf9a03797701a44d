"""Darknet's iteration line (pjreddie's and AlexeyAB's YOLO v2-v4): `N: LOSS, AVG avg[ loss], LR rate, ...`.
The leading number is the iteration, not a Slurm `srun --label` task id (the shape `11: ` it shares),
and the running average is the loss to watch (AlexeyAB's README: nan in the avg field means the
training goes wrong). Real lines, their sources named; none from the corpus case that showed it."""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict, fed_state

# a healthy YOLOv2 run's log in a tutorial (a GV100, 4000 iterations)
_HEALTHY_V2 = ["   4259: 0.034688, 0.045240 avg loss, 0.001000 rate, 0.923000 seconds, 272576 images"]
# a YOLOv4 tutorial's later iterations (AlexeyAB's form)
_HEALTHY_V4 = [
    "11000: 0.051831, 0.085730 avg loss, 0.001000 rate, 0.886196 seconds, 2816000 images",
    "15000: 0.055898, 0.075187 avg loss, 0.001000 rate, 0.768312 seconds, 3840000 images",
    "15300: 0.053958, 0.071382 avg loss, 0.001000 rate, 1.472932 seconds, 3916800 images",
]


def test_the_iteration_is_a_step_not_a_slurm_rank() -> None:
    st = fed_state(_HEALTHY_V4)
    assert list(st.ranks) == [None]  # one rank-less series, no rank 11000, 15000, 15300
    samples = [s for rs in st.ranks.values() for s in rs.samples]
    assert [s.step for s in samples] == [11000, 15000, 15300]
    assert [s.data["loss"] for s in samples] == [0.08573, 0.075187, 0.071382]


@pytest.mark.parametrize("lines", [_HEALTHY_V2, _HEALTHY_V4])
def test_healthy_darknet_runs_raise_nothing(lines: list[str]) -> None:
    assert not [i for i in engine_verdict(lines) if i.severity in ("warning", "critical")]


@pytest.mark.parametrize("lines", [
    # https://github.com/AlexeyAB/darknet/issues/786 (pjreddie's 'avg' without 'loss')
    [" 2677: nan, nan avg, 0.001000 rate, 4.580532 seconds, 171328 images"],
    # a Japanese user's YOLOv4 notes (AlexeyAB's form, '-nan' as glibc prints it), from a blog the index holds
    ["  70: -nan, -nan avg loss, 0.000000 rate, 332.178208 seconds, 4480 images, 717.177361 hours left"],
])
def test_a_nan_average_loss_is_a_nan_loss(lines: list[str]) -> None:
    found = engine_verdict(lines)
    assert found and found[0].failure == "nonfinite_loss" and found[0].rank is None
