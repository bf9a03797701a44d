"""A gradient-clipping report that a paste word-wrapped onto two physical lines.

e-mail clients and chat boxes wrap a long log line at a word boundary, so icefall's
``Clipping_scale=2.0, grad-norm quartiles A B C D E, threshold=T, percent-clipped=P`` arrives
as ``... quartiles A B C D E,`` / ``threshold=T, percent-clipped=P``, and
``Scaling gradients by F, model_norm_threshold=T`` as ``Scaling gradients by`` / ``F,
model_norm_threshold=T``. The second half is read only on the line right after the first.
"""

from __future__ import annotations

import math

from detectors.model import EventKind
from detectors.parse import default_parser
from detectors.parsers.base import FileState
from tests.helpers import engine_verdict

# corpus holdout6 h6a-030 (k2-fsa/icefall fine-tuning, an e-mail-quoted paste), verbatim
ICEFALL_WRAPPED = [
    "2025-03-10 08:08:19,208 WARNING [optim.py:588] Clipping_scale=2.0,",
    "grad-norm quartiles 7.818e+02 2.145e+03 5.805e+03 1.588e+04 2.459e+05,",
    "threshold=1.161e+04, percent-clipped=7.0",
    "2025-03-10 08:08:19,209 WARNING [optim.py:604] Scaling gradients by",
    "0.27431949973106384, model_norm_threshold=11610.955078125",
]
# corpus holdout3 h3-096 (ZipVoice on icefall's ScaledAdam) and dev d3-047 (healthy ZipVoice):
# the one-line reports, wrapped here at the same word boundary the paste above shows
ZIPVOICE_OUTLIER = [
    "2025-07-16 15:27:26,157 WARNING [optim.py:600] (0/2) Clipping_scale=2.0,",
    "grad-norm quartiles 2.485e-02 3.150e-02 3.570e-02 4.058e-02 1.745e+00,",
    "threshold=7.139e-02, percent-clipped=10.0",
]
ZIPVOICE_HEALTHY = [
    "2025-10-27 17:32:19,686 WARNING [optim.py:600] Clipping_scale=2.0,",
    "grad-norm quartiles 2.645e-03 3.446e-03 3.830e-03 4.745e-03 9.672e-03,",
    "threshold=1.532e-02, percent-clipped=0.0",
]




def test_a_wrapped_quartile_report_far_above_its_threshold_is_an_explosion() -> None:
    for lines in (ICEFALL_WRAPPED[:3], ZIPVOICE_OUTLIER):
        top = engine_verdict(lines)[0]
        assert top.failure == "grad_norm_explosion", lines
        assert top.rank is None


def _norms(lines: list[str]) -> list[tuple[float, float]]:
    parser, state = default_parser(), FileState("f.log", year=2026)
    evs = [e for n, line in enumerate(lines, 1) for e in parser.parse_line(line, n, state)]
    return [(e.data["grad_norm"], e.data["clip_threshold"]) for e in evs
            if e.kind is EventKind.SAMPLE and "clip_threshold" in e.data]


def test_both_wrapped_reports_are_read() -> None:
    got = _norms(ICEFALL_WRAPPED)
    assert len(got) == 2
    assert got[0] == (2.459e05, 1.161e04)
    # the scaling report: the norm is the threshold over the factor (11610.96 / 0.2743)
    assert math.isclose(got[1][0], 11610.955078125 / 0.27431949973106384)
    assert got[1][1] == 11610.955078125


def test_a_wrapped_report_within_its_threshold_is_healthy() -> None:
    assert engine_verdict(ZIPVOICE_HEALTHY) == []


def test_a_threshold_line_not_right_after_a_cut_report_is_not_read() -> None:
    lines = [*ZIPVOICE_OUTLIER[:2], "2025-07-16 15:27:27,000 INFO [train.py:1] something else",
             ZIPVOICE_OUTLIER[2]]
    assert engine_verdict(lines) == []
    assert engine_verdict(["threshold=7.139e-02, percent-clipped=10.0"]) == []
