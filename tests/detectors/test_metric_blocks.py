"""Metric blocks printed one metric per line: a loss *component* alone on its line is one line of
the block, not the loss (issue #12, class 1).

Coqui TTS's trainer prints every metric of a step on its own line (``| > loss_mel: 16.8
(17.38)``); read one by one, each component became the next sample of one loss series, and the
jump from ``loss_kl`` to ``loss_mel`` read as a loss spike. The lines below are copied from the
real excerpts of the corpus (their source threads are in each ``case.json``):

- h3-102: coqui-ai/TTS#2070 (VITS, https://github.com/coqui-ai/TTS/issues/2070)
- h3-103: coqui-ai/TTS#3637 (GlowTTS, https://github.com/coqui-ai/TTS/issues/3637)
- d4-031: a YourTTS recipe's evaluation block (``avg_loss_*``), see its ``case.json``

and, from another project, a pytorch-template style trainer that logs its epoch summary one
``key : value`` per line (https://github.com/facebookresearch/maskrcnn-benchmark/issues/1334).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from detectors.engine import Engine
from detectors.model import EventKind
from detectors.parsers.fields import extract

CORPUS = Path(__file__).resolve().parents[1] / "corpus"

LONE_COMPONENTS = [
    ("h3-102", "      | > loss_gen: 2.27486  (2.29334)"),
    ("h3-102", "      | > loss_kl: 1.51007  (1.61466)"),
    ("h3-102", "      | > loss_mel: 16.80119  (17.38435)"),
    ("h3-102", "      | > loss_disc: 2.40120  (2.51074)"),
    ("h3-103", "     | > loss_dur: 3.0002617835998535  (2.896509297688802)"),
    ("d4-031", "     | > avg_loss_kl: 174.0107794040587 (+0)"),
    ("d4-031", "     | > avg_loss_mel: 27.186232636614545 (+0)"),
    ("maskrcnn-benchmark#1334", "2022-03-09 06:21:51,095 - trainer - INFO -     loss_box_reg   : 0.10907483100891113"),
    ("maskrcnn-benchmark#1334", "2022-03-09 06:21:51,095 - trainer - INFO -     attribute_loss : 0.24423398077487946"),
]

# maskrcnn-benchmark#1334, verbatim: two epoch summaries, one metric per line
EPOCH_SUMMARIES = """\
2022-03-09 06:21:51,094 - trainer - INFO -     epoch          : 1
2022-03-09 06:21:51,095 - trainer - INFO -     loss_classifier: 0.11012238264083862
2022-03-09 06:21:51,095 - trainer - INFO -     loss_box_reg   : 0.10907483100891113
2022-03-09 06:21:51,095 - trainer - INFO -     attribute_loss : 0.24423398077487946
2022-03-09 06:21:51,095 - trainer - INFO -     loss_objectness: 0.032822877168655396
2022-03-09 06:21:51,095 - trainer - INFO -     loss_rpn_box_reg: 0.015091314911842346
2022-03-09 06:21:51,095 - trainer - WARNING - Warning: Metric 'val_loss' is not found. Model performance monitoring is disabled.
2022-03-09 06:33:35,350 - trainer - INFO -     epoch          : 2
2022-03-09 06:33:35,350 - trainer - INFO -     loss_classifier: 0.025048378854990005
2022-03-09 06:33:35,350 - trainer - INFO -     loss_box_reg   : 0.033926017582416534
2022-03-09 06:33:35,350 - trainer - INFO -     attribute_loss : 0.1824456751346588
2022-03-09 06:33:35,351 - trainer - INFO -     loss_objectness: 0.008666656911373138
2022-03-09 06:33:35,351 - trainer - INFO -     loss_rpn_box_reg: 0.0010567393619567156
"""


@pytest.mark.parametrize(("source", "line"), LONE_COMPONENTS)
def test_a_lone_finite_component_is_not_the_loss(source: str, line: str) -> None:
    assert "loss" not in extract(line), source


def test_a_lone_non_finite_component_is_still_a_non_finite_loss() -> None:
    # h3-102's line with its value made NaN: a NaN in any part is a NaN total, block or not
    got = extract("      | > loss_mel: nan  (17.38435)")
    assert math.isnan(got["loss"])


def test_the_block_total_and_a_line_of_several_components_are_still_the_loss() -> None:
    # h3-103's own total, printed in the same block shape
    assert extract("     | > loss: 3.6332433223724365  (3.534811576207479)")["loss"] == pytest.approx(3.6332433223724365)
    # a line of several components and no total (fields.py's docstring example) sums them
    got = extract("content_loss:0.0 lap_loss:6.5e8 rec_loss:3.4e4")
    assert got["loss"] == pytest.approx(6.5e8 + 3.4e4)


def test_coqui_amp_scaler_is_the_loss_scale() -> None:
    assert extract("      | > amp_scaler: 128.00000  (1477.33333)") == {"loss_scale": 128.0}


def _fed(case: str) -> Engine:
    path = next(CORPUS.glob(f"*/{case}-*/combined.log"))
    engine = Engine()
    engine.feed(path.read_bytes(), 1, engine.open_file(str(path)))
    return engine


def test_a_coqui_block_makes_no_loss_series_out_of_its_components() -> None:
    engine = _fed("h3-102")
    assert engine.verdict() == []  # was a false loss_spike (loss_kl 1.5 → loss_mel 16.8)


def test_a_coqui_block_total_is_still_read() -> None:
    path = next(CORPUS.glob("*/h3-103-*/combined.log"))
    engine = Engine()
    events = engine.feed(path.read_bytes(), 1, engine.open_file(str(path)))
    losses = [e.data["loss"] for e in events if e.kind is EventKind.SAMPLE and "loss" in e.data]
    assert losses == [pytest.approx(3.6332433223724365)]
    assert engine.verdict() == []  # healthy (h3-103): its lone loss_dur line makes no second loss sample


def test_per_line_epoch_summaries_make_no_loss_series() -> None:
    engine = Engine()
    events = engine.feed(EPOCH_SUMMARIES.encode(), 1, engine.open_file("train.log"))
    # before: six components read as six samples of one loss (0.11, 0.24, 0.033, 0.025, ...)
    assert [e for e in events if e.kind is EventKind.SAMPLE and "loss" in e.data] == []
    assert engine.verdict() == []
