"""Every process's copy of the same apex back-off, and the NVIDIA GNMT training line.

apex's dynamic scaler prints ``Gradient overflow.  Skipping step, loss scaler 0 reducing loss
scale to 256.0`` on every rank, untagged, so an 8-GPU job shows each back-off as a burst of 8
identical lines. When every back-off comes as such a burst, all of one length, each burst is one
move; the same back-off again after other lines is another (the scale grew back in between). The
same back-off on the very next line is a copy too, whatever the run's length (a scaler cannot back
off to one scale twice without growing back in between). NVIDIA DeepLearningExamples' GNMT (MLPerf v0.6, corpus h27a-013)
logs ``TRAIN [3][840/1938]\\tTime ... Loss/tok 2.4976 (3.1624)\\tLR 1.000e-03``: its epoch and the
iteration in it, and the loss per target token.
"""

from __future__ import annotations

from detectors.correlate import _dedupe_moves
from detectors.engine import Engine
from detectors.parsers.fields import extract
from tests.helpers import engine_verdict, fed_state

_BACKOFF = "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 256.0"
_TRAIN = ("0: TRAIN [0][150/1938]\tTime 0.171 (0.151)\tData 1.58e-04 (3.06e-03)\tTok/s 98407 (92133)\t"
          "Loss/tok 7.7909 (8.4858)\tLR 6.181e-04")


def test_bursts_of_one_length_are_one_back_off_each() -> None:
    st = fed_state([_BACKOFF] * 8 + [_TRAIN] + [_BACKOFF] * 8)
    assert len(_dedupe_moves(st.scale_moves)) == 2


def test_the_same_back_off_on_the_next_line_is_a_copy_and_after_other_lines_a_move() -> None:
    # a dynamic scaler cannot back off to one scale twice in a row without growing back over a
    # window of clean steps: the same words on the very next line are another process's copy
    # (192 ranks' apex lines one after another, corpus holdout28 h28b-004) ...
    assert len(_dedupe_moves(fed_state([_BACKOFF] * 5).scale_moves)) == 1
    assert len(_dedupe_moves(fed_state([_BACKOFF] * 8 + [_TRAIN] + [_BACKOFF] * 3).scale_moves)) == 2
    # ... while one process backing off again after other lines of the run is one move each time
    between = [x for _ in range(5) for x in (_BACKOFF, "INFO saving checkpoint")]
    assert len(_dedupe_moves(fed_state(between).scale_moves)) == 5


def test_gnmt_loss_per_token_is_the_loss() -> None:
    assert extract("TRAIN [0][10/1938]\tTime 0.115 (0.186)\tTok/s 89553 (81553)\tLoss/tok 9.6782 (10.2120)\tLR 2.518e-05")[
        "loss"] == 9.6782


def test_gnmt_training_line_is_a_sample_of_its_epoch_and_iteration() -> None:
    engine = Engine("t")
    engine.feed(f"{_TRAIN}\n".encode(), 1, engine.open_file("train.log"))
    samples = [s for rs in engine.state.ranks.values() for s in rs.samples]
    assert [(s.data.get("loss"), s.data.get("epoch"), s.data.get("epoch_iter")) for s in samples] == [(7.7909, 0.0, 150.0)]


def _train(epoch: int, it: int, loss: float) -> str:
    return (f"0: TRAIN [{epoch}][{it}/1938]\tTime 0.171 (0.151)\tData 1.58e-04 (3.06e-03)\tTok/s 98407 (92133)\t"
            f"Loss/tok {loss:.4f} ({loss:.4f})\tLR 1.000e-03")


def _burst(scale: float) -> list[str]:
    return [f"Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {scale}"] * 8


def test_back_offs_a_few_per_epoch_over_epochs_counted_per_epoch_are_the_scalers_cycle() -> None:
    # GNMT counts iterations per epoch, no step: four back-offs over four epochs of 1938
    # iterations, the scale grown back to 8192 before the last, is the dynamic scaler's cycle
    lines = [*_burst(256.0), _train(0, 0, 10.53), _train(0, 140, 7.87), *_burst(256.0), _train(0, 170, 7.72),
             *_burst(128.0), _train(0, 1930, 3.21), _train(1, 900, 3.4), _train(2, 900, 3.2), _train(3, 840, 2.50),
             *_burst(4096.0), _train(3, 850, 3.28), _train(3, 1930, 3.02)]
    assert not [i for i in engine_verdict(lines) if i.severity in ("warning", "critical")]


def test_back_offs_every_few_iterations_stay_reported() -> None:
    # the same lines, a halving every ten iterations deep into epoch 2: no cycle, an alert
    lines = [_train(2, 0, 3.2)]
    scale = 65536.0
    for k in range(1, 13):
        scale /= 2
        lines += [*_burst(scale), _train(2, 10 * k, 3.2)]
    assert [i for i in engine_verdict(lines) if i.severity in ("warning", "critical")]
