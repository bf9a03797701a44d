"""Metrics named under a namespace: Chainer's reporter puts what the optimizer's target reports
under ``main/`` and what its Evaluator reports under ``validation/main/`` (ESPnet1's ``log``
file and every Chainer example's PrintReport), and tables name their columns the way
TensorBoard tags do (``train/loss``, ``val/loss``).

Formats: Chainer's PrintReport as its MNIST example prints it (the header of corpus cases
h16a-022 and h19b-009, chainermn jobs), ESPnet1's ``exp/*/results/log`` (a JSON list written
with ``indent=4``: one member per line; espnet/espnet issue threads paste it), and a script's
fixed-width table with TensorBoard-style column names."""

from __future__ import annotations

import math

from tests.helpers import engine_events, engine_verdict

_PRINT_REPORT = [
    "epoch       main/loss   validation/main/loss  main/accuracy  validation/main/accuracy  elapsed_time",
    "1           0.191812    0.0891893             0.942183       0.9712                    10.2361",
    "2           0.0747431   0.0797045             0.976734       0.9755                    18.9472",
    "3           0.0487315   0.0694526             0.984268       0.9788                    27.6713",
    "4           nan         nan                   0.0987         0.098                     36.3104",
]


def _samples(lines: list[str]) -> list[dict[str, float]]:
    return [{k: v for k, v in ev.data.items() if k in ("loss", "eval_loss", "epoch")}
            for ev in engine_events(lines) if ev.kind.value == "sample"]


def test_chainer_print_report_columns_are_the_loss_and_the_held_out_loss() -> None:
    got = _samples(_PRINT_REPORT)
    assert got[0] == {"epoch": 1.0, "loss": 0.191812, "eval_loss": 0.0891893}
    assert math.isnan(got[-1]["loss"])
    top = engine_verdict(_PRINT_REPORT)[0]
    assert top.failure == "nonfinite_loss"


def test_espnet1_log_members_name_the_loss() -> None:
    lines = ["    {",
             '        "main/loss_ctc": 110.13659646987915,',
             '        "main/loss_att": 37.941686143875124,',
             '        "main/acc": 0.8417587452432902,',
             '        "main/loss": 59.60016016960144,',
             '        "validation/main/loss": 61.2,',
             '        "epoch": 1,',
             '        "iteration": 9000,',
             "    },"]
    got = _samples(lines)
    assert {"loss": 59.60016016960144} in got
    assert {"eval_loss": 61.2} in got


def test_tensorboard_style_column_names() -> None:
    lines = ["step      train/loss    val/loss    lr",
             "100       2.4512        2.5120      3.0e-4",
             "200       2.1034        2.2011      3.0e-4"]
    got = _samples(lines)
    assert [(g["loss"], g["eval_loss"]) for g in got] == [(2.4512, 2.512), (2.1034, 2.2011)]


def test_a_namespace_on_another_metric_is_no_loss() -> None:
    # "validation/main/accuracy" names the held-out accuracy: no loss column
    lines = ["epoch       validation/main/accuracy  elapsed_time",
             "1           0.9712                    10.2361"]
    assert all("loss" not in g and "eval_loss" not in g for g in _samples(lines))
