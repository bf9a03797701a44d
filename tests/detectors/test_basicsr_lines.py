"""BasicSR's MessageLogger line (basicsr/utils/logger.py), the format of the restoration,
super-resolution and image-quality projects built on it: the iteration (thousands separated) is
the step, the ``l_<term>`` losses of the model (the generator's, not the discriminator's
``l_d_*``) add up to its loss. Lines from committed logs: an ESRGAN run of 2019 (corpus holdout6
h6b-008, ``<epoch: 86, iter: 107,200, lr:2.500e-05>``) and an IQA-PyTorch model of 2025 (corpus
holdout33 h33a-016, ``[basel..][epoch:  0, iter:     100, lr:(3.000e-05,)]``)."""

from __future__ import annotations

import math

from detectors.model import EventKind
from tests.helpers import engine_events, engine_verdict

_IQA = ("2025-02-04 22:37:09,911 INFO: [basel..][epoch:  {ep}, iter:     {it}, lr:(3.000e-05,)] [eta: 4:06:17, time (data): "
        "1.663 (0.247)] l_mos: {mos} l_metric: 1.5984e-01 train_metrics/srcc: 8.9118e-01 train_metrics/plcc: 9.2480e-01 ")
_ESRGAN = ("19-08-09 08:25:25.996 - INFO: <epoch: 86, iter: 107,200, lr:2.500e-05> l_g_pix: 1.4819e-03 l_g_fea: 1.0389e+00 "
           "l_g_gan: 7.2056e-02 l_d_real: 1.4378e-05 l_d_fake: 4.0903e-06 D_real: -2.5625e+01 D_fake: -4.0036e+01 ")


def _sample(line: str) -> tuple[int | None, float]:
    (ev,) = [e for e in engine_events([line]) if e.kind is EventKind.SAMPLE]
    return ev.step, float(ev.data["loss"])  # type: ignore[arg-type]


def test_the_iteration_is_the_step_and_the_model_terms_add_up_to_the_loss() -> None:
    step, loss = _sample(_IQA.format(ep=0, it=100, mos="8.1951e-03"))
    assert step == 100 and math.isclose(loss, 8.1951e-03 + 1.5984e-01)
    step, loss = _sample(_ESRGAN)
    assert step == 107200 and math.isclose(loss, 1.4819e-03 + 1.0389 + 7.2056e-02)  # no l_d_* terms


def test_a_nan_term_is_a_nan_loss() -> None:
    lines = [_IQA.format(ep=e, it=100 * e, mos=f"{8e-3 / e:.4e}") for e in range(1, 12)]
    lines.append(_IQA.format(ep=12, it=1200, mos="nan"))
    top = engine_verdict(lines)[0]
    assert (top.failure, top.step) == ("nonfinite_loss", 1200)
