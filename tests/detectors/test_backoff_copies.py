"""Every process's copy of the same apex back-off, and the NVIDIA GNMT training line.

apex's dynamic scaler prints ``Gradient overflow.  Skipping step, loss scaler 0 reducing loss
scale to 256.0`` on every rank, untagged, so an 8-GPU job shows each back-off as a burst of 8
identical lines. A burst is one move; the same back-off again after other lines is another (the
scale grew back in between). NVIDIA DeepLearningExamples' GNMT (MLPerf v0.6, corpus h27a-013)
logs ``TRAIN [3][840/1938]\\tTime ... Loss/tok 2.4976 (3.1624)\\tLR 1.000e-03``: its epoch and the
iteration in it, and the loss per target token.
"""

from __future__ import annotations

from detectors.correlate import _dedupe_moves
from detectors.engine import Engine
from detectors.parsers.fields import extract
from tests.helpers import fed_state

_BACKOFF = "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 256.0"
_TRAIN = ("0: TRAIN [0][150/1938]\tTime 0.171 (0.151)\tData 1.58e-04 (3.06e-03)\tTok/s 98407 (92133)\t"
          "Loss/tok 7.7909 (8.4858)\tLR 6.181e-04")


def test_a_burst_of_word_for_word_copies_is_one_back_off() -> None:
    st = fed_state([_BACKOFF] * 8)
    assert len(_dedupe_moves(st.scale_moves)) == 1


def test_the_same_back_off_after_other_lines_is_another() -> None:
    st = fed_state([_BACKOFF] * 8 + [_TRAIN] + [_BACKOFF] * 8)
    assert len(_dedupe_moves(st.scale_moves)) == 2


def test_gnmt_loss_per_token_is_the_loss() -> None:
    assert extract("TRAIN [0][10/1938]\tTime 0.115 (0.186)\tTok/s 89553 (81553)\tLoss/tok 9.6782 (10.2120)\tLR 2.518e-05")[
        "loss"] == 9.6782


def test_gnmt_training_line_is_a_sample_of_its_epoch_and_iteration() -> None:
    engine = Engine("t")
    engine.feed(f"{_TRAIN}\n".encode(), 1, engine.open_file("train.log"))
    samples = [s for rs in engine.state.ranks.values() for s in rs.samples]
    assert [(s.data.get("loss"), s.data.get("epoch"), s.data.get("epoch_iter")) for s in samples] == [(7.7909, 0.0, 150.0)]
