"""Megatron's ``number of skipped iterations`` counts the skips of one log interval (training_log
resets it at each line), unlike DeepSpeed's cumulative ``skipped=``. Line after line with every
iteration skipped at a loss scale that never moves means the scale cannot help: a static scale
(or one stuck) under which every step overflows, so nothing trains (``fp16_overflow_skips``).
The start-up search of a dynamic scale skips every iteration too, but its scale falls."""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict

_LINE = (" iteration {i:8d}/ 2753818 | consumed samples: {c:12d} | elapsed time per iteration (ms): 1119.8 | "
         "learning rate: 1.000E-07 | global batch size:     8 | loss scale: {s} | number of skipped iterations: "
         "{k:3d} | number of nan iterations:   0 |")


def test_every_iteration_skipped_at_a_scale_that_never_moves_is_an_overflow_failure() -> None:
    # Megatron's own line format at --log-interval 1 (the shape of the corpus case h11a-026, a real run
    # with a static 16384 scale; these figures are that shape's, not a second thread's)
    lines = [_LINE.format(i=i, c=8 * i, s="16384.0", k=1) for i in range(1, 6)]
    found = engine_verdict(lines)
    assert found and found[0].failure == "fp16_overflow_skips"
    assert found[0].data.get("static_scale") == 16384.0


def test_per_interval_counts_are_not_read_as_cumulative() -> None:
    # one skip in each interval of 10 (the scaler at work, its scale moving): not a static scale
    lines = [_LINE.format(i=10 * n, c=80 * n, s=f"{2.0 ** (16 - n % 2)}", k=1) for n in range(1, 12)]
    assert not [i for i in engine_verdict(lines) if i.failure == "fp16_overflow_skips"]


@pytest.mark.parametrize("lines", [
    # the start-up search of Megatron's dynamic scaler (2^32 halved each skipped iteration), then training:
    # a Megatron-LM tutorial's 350M run (2024-09-14)
    [" [2024-09-14 19:44:19] iteration       10/     200 | consumed samples:          160 | elapsed time per "
     "iteration (ms): 995.3 | learning rate: 0.000000E+00 | global batch size:    16 | loss scale: 8388608.0 | "
     "number of skipped iterations:  10 | number of nan iterations:   0 |",
     " [2024-09-14 19:44:24] iteration       20/     200 | consumed samples:          320 | elapsed time per "
     "iteration (ms): 457.6 | learning rate: 2.343750E-07 | global batch size:    16 | lm loss: 1.105231E+01 | loss "
     "scale: 262144.0 | grad norm: 23.668 | number of skipped iterations:   5 | number of nan iterations:   0 |"],
    # a 6.4B GPT-3 recipe on 8 GPUs under mpirun (2024-09-03, a Japanese HPC guide)
    [" [2024-09-03 15:54:54] iteration       10/  500000 | consumed samples:        10240 | elapsed time per "
     "iteration (ms): 13035.3 | throughput per GPU (TFLOP/s/GPU): 812.5 | learning rate: 0.000000E+00 | global batch "
     "size:  1024 | loss scale: 8388608.0 | number of skipped iterations:  10 | number of nan iterations:   0 |",
     " [2024-09-03 15:56:55] iteration       20/  500000 | consumed samples:        20480 | elapsed time per "
     "iteration (ms): 12137.8 | throughput per GPU (TFLOP/s/GPU): 872.5 | learning rate: 6.976744E-07 | global batch "
     "size:  1024 | lm loss: 1.064275E+01 | loss scale: 262144.0 | grad norm: 47.021 | number of skipped iterations:"
     "   5 | number of nan iterations:   0 |"],
])
def test_the_start_up_search_of_a_dynamic_scale_is_no_failure(lines: list[str]) -> None:
    assert not [i for i in engine_verdict(lines) if i.severity in ("warning", "critical")]


def test_megatron_deepspeeds_placeholder_scale_of_minus_one_is_no_scale() -> None:
    # bigscience-workshop/Megatron-DeepSpeed 3D-parallel GPT-2 logs (corpus holdout24 h24d-014): with
    # DeepSpeed's fp16 optimizer keeping the scale, Megatron prints "loss scale: -1.0" (and "grad norm:
    # 0.000") on every iteration line; the scale is not below 1, it is not Megatron's to print
    lines = [f" iteration {i:>8}/    1000 | consumed samples: {i * 1024:>12} | elapsed time per iteration (ms): 138000.0 | "
             f"learning rate: 1.500E-04 | global batch size:  1024 | lm-loss: {12.4 - i / 10:.6E} | loss scale: -1.0 | "
             "grad norm: 0.000 | num zeros: 0.0 | number of skipped iterations:   0 | number of nan iterations:   0 |"
             for i in range(1, 30)]
    assert [i.failure for i in engine_verdict(lines) if i.severity in ("critical", "warning")] == []


def test_iterations_still_skipped_interval_after_interval_once_the_scale_stopped_falling() -> None:
    # the same line format at --log-interval 20: the scale grew to 16384 and holds there (a hysteresis
    # that forgives overflows apart from each other), yet most intervals still skip one to five
    # iterations: 21 of the 280 logged iterations thrown away after the search was over
    skips = [0, 0, 0, 0, 5, 3, 1, 0, 1, 1, 3, 1, 4, 2, 0]
    scales = ["4096.0", "8192.0", "8192.0", "16384.0"] + ["16384.0"] * 11
    lines = [_LINE.format(i=20 * (n + 1), c=640 * (n + 1), s=s, k=k) for n, (s, k) in enumerate(zip(scales, skips, strict=True))]
    found = [i for i in engine_verdict(lines) if i.failure == "fp16_overflow_skips"]
    assert found and found[0].data.get("rate") == round(21 / 280, 3)
    # one burst in one interval is no such run
    burst = [0, 0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    lines = [_LINE.format(i=20 * (n + 1), c=640 * (n + 1), s=s, k=k) for n, (s, k) in enumerate(zip(scales, burst, strict=True))]
    assert not [i for i in engine_verdict(lines) if i.failure == "fp16_overflow_skips"]
