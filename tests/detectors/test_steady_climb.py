"""A steady climb of the training loss: six logged values in a row, each above the one
before by steps of like size, 10 % or more over the six, past the first steps of the run.
No single value jumps, so the spike rules stay quiet; noise does not climb six times by even
steps. The real runs below are the shapes users paste; where values were changed to make a
climb or to break one, the fixture says so."""

from __future__ import annotations

from tests.helpers import engine_verdict, fed_state

# Keras's verbose=1 epoch lines of a run that drifted away under RMSprop, each epoch's
# average above the last, accuracy and val_loss following (the real values)
# https://github.com/keras-team/keras/issues/932 (corpus case holdout7/h7a-030)
_KERAS_EPOCHS = [
    "370784/370784 [==============================] - 6700s - loss: 1.8887 - acc: 0.4243 - val_loss: 1.8804 - val_acc: 0.4097",
    "370784/370784 [==============================] - 6702s - loss: 1.9328 - acc: 0.4118 - val_loss: 1.9089 - val_acc: 0.3977",
    "370784/370784 [==============================] - 6702s - loss: 1.9986 - acc: 0.3866 - val_loss: 1.9611 - val_acc: 0.3873",
    "370784/370784 [==============================] - 6708s - loss: 2.0482 - acc: 0.3752 - val_loss: 1.9454 - val_acc: 0.3878",
    "370784/370784 [==============================] - 6714s - loss: 2.1057 - acc: 0.3539 - val_loss: 2.0767 - val_acc: 0.3591",
    "137856/370784 [==========>...................] - ETA: 4147s - loss: 2.1578 - acc: 0.3390",
]

# a logger's iteration lines at a constant learning rate (CoTNet / timm-style "[INFO: ...]"),
# the loss growing by ~1.8 every 100 iterations (the real values)
# https://github.com/JDAI-CV/CoTNet/issues/4 (corpus case holdout12/h12a-017)
_COTNET = [
    f"[INFO: 2021-08-03 10:{17 + 3 * i:02d}:21,569] Epoch: 1/300, Iter: {4300 + 100 * i}/8007, loss: {v}, "
    f"lr: [0.0001], time_avg: 0.5289, eta: 14,16:17:41, mem: 15265"
    for i, v in enumerate(("22.9003", "24.6756", "26.5376", "28.3657", "30.2213", "32.0454", "33.8772"))
]

# TF's "step N \t loss = X" lines from a DeepLab run: real per-step noise, up and down by 2x
# (the lines after its one 3x value, which the spike rules rightly flag)
# https://github.com/DrSleep/tensorflow-deeplab-lfov/issues/5
_DEEPLAB_NOISE = [
    f"step {13104 + i} \t loss = {v}, (1.011 sec/step)"
    for i, v in enumerate(("0.712", "1.022", "1.330", "1.530", "1.014", "0.936", "1.616", "1.535", "3.276",
                           "2.440", "1.541", "1.519", "1.740", "1.382", "1.969", "2.276", "1.035", "1.278"))
]


def _failures(lines: list[str]) -> list[str]:
    return [i.failure for i in engine_verdict(lines)]


def test_epoch_averages_creeping_up_are_a_divergence() -> None:
    assert _failures(_KERAS_EPOCHS)[:1] == ["loss_spike"]


def test_a_constant_rate_climb_is_caught_before_any_jump() -> None:
    st = fed_state(_COTNET)
    (rs,) = st.ranks.values()
    assert rs.spike is not None
    assert rs.spike.step == 4800  # the sixth value of the climb, the first that can show it
    assert _failures(_COTNET)[:1] == ["loss_spike"]


def test_five_values_are_not_enough() -> None:
    assert _failures(_COTNET[:5]) == []


def test_per_step_noise_is_not_a_climb() -> None:
    assert _failures(_DEEPLAB_NOISE[9:]) == []


def test_uneven_steps_are_not_a_climb() -> None:
    # the CoTNet lines with one step made 5x the others (values changed): a run of rises
    # that is mostly one jump is the spike rules' to judge, not a trend
    vals = ("22.9003", "23.1000", "23.3000", "23.5000", "27.5000", "27.7000", "27.9000")
    lines = [line.replace(f"loss: {old}", f"loss: {new}") for line, old, new in
             zip(_COTNET, ("22.9003", "24.6756", "26.5376", "28.3657", "30.2213", "32.0454", "33.8772"), vals,
                 strict=True)]
    assert _failures(lines) == []


def test_a_small_drift_is_not_a_climb() -> None:
    # the Keras epochs rising 1 % a step (values changed): six rises, 5 % in all
    vals = ("1.8887", "1.9076", "1.9267", "1.9460", "1.9654", "1.9851")
    lines = [line.replace(f"loss: {old} ", f"loss: {new} ") for line, old, new in
             zip(_KERAS_EPOCHS, ("1.8887", "1.9328", "1.9986", "2.0482", "2.1057", "2.1578"), vals, strict=True)]
    assert _failures(lines) == []


def test_the_first_steps_may_climb() -> None:
    # the CoTNet climb moved to iterations 1-7 (steps changed): a run's first steps are no trend
    lines = [line.replace(f"Iter: {4300 + 100 * i}/", f"Iter: {i + 1}/") for i, line in enumerate(_COTNET)]
    assert _failures(lines) == []
