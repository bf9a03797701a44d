"""Numeric failures a line tells without a history to measure them against: a loss of a trillion or
more (TF Object Detection API's ``global step 5746: loss = 3332910014858788864000.0000``: no objective
a run trains logs that; no healthy case of the corpus logs a loss above 1e6); a trainer's bare
``NaN detected`` warning (facebookresearch/XLM); and rows of transformers' DebugUnderflowOverflow
frame dump whose abs-max is inf (``9.77e-04      inf output[0]``, debug_utils.get_abs_min_max),
pasted without the detector's header line."""

from __future__ import annotations

from tests.helpers import engine_verdict


def test_a_loss_of_a_trillion_is_a_divergence_without_history() -> None:
    lines = [f"INFO:tensorflow:global step {s}: loss = {v:.4f} (8.303 sec/step)"
             for s, v in ((5746, 3.3e21), (5747, 3.99e21), (5748, 1.39e21), (5749, 8.9e20))]
    top = engine_verdict(lines)[0]
    assert top.failure == "loss_spike"


def test_an_ordinary_large_regression_loss_is_not() -> None:
    lines = [f"epoch {e} loss = {v:.1f}" for e, v in enumerate((4.1e9, 3.2e9, 2.9e9, 2.7e9, 2.6e9), 1)]
    assert not [i for i in engine_verdict(lines) if i.severity in ("warning", "critical")]


def test_a_trillion_then_inf_is_the_non_finite_loss() -> None:
    lines = ["Epoch 3: 42%| 4241/10000 [1:02:11<1:24:00, 1.14it/s, loss=7.54e+29, step=14863]",
             "Epoch 3: 42%| 4241/10000 [1:02:12<1:24:00, 1.14it/s, loss=inf, step=14864]"]
    assert engine_verdict(lines)[0].failure == "nonfinite_loss"


def test_a_bare_nan_detected_warning_is_a_non_finite_loss() -> None:
    lines = ["INFO - 10/04/19 16:19:13 - 0:19:05 -    4145 -  118.14 sent/s - MLM-en:  8.1367 - model LR: 1.3903e-05",
             *["WARNING - 10/04/19 16:19:13 - 0:19:06 - NaN detected"] * 4]
    assert engine_verdict(lines)[0].failure == "nonfinite_loss"


def test_nan_detected_inside_a_longer_message_is_not_this_report() -> None:
    assert engine_verdict(["INFO - scanning inputs: no NaN detected in 3 files, continuing"]) == []


def test_an_overflow_detector_row_at_inf_is_an_fp16_activation_overflow() -> None:
    lines = ["                  model.encoder.layers.10 PegasusEncoderLayer",
             "2.44e-04 6.86e+04 input[0]",
             "9.77e-04      inf output[0]"]
    assert engine_verdict(lines)[0].failure == "amp_bf16_vs_fp16"
    assert engine_verdict(lines[:2]) == []


# https://github.com/yl4579/AuxiliaryASR/issues/7 (corpus h21a-012): a loop printing loss.item() per
# batch between its tqdm bars; the epoch summaries stay finite
_ASR = ["train/loss     : 7.6923", "eval/loss      : 8.9892",
        "[train]:   0%|          | 0/5 [00:00<?, ?it/s]nan", "nan", "nan", "nan", "nan",
        "[train]: 100%|██████████| 5/5 [00:01<00:00,  3.65it/s]"]


def test_a_run_of_bare_nan_prints_is_a_non_finite_loss() -> None:
    assert [i.failure for i in engine_verdict(_ASR)][:1] == ["nonfinite_loss"]


def test_one_or_two_bare_nans_say_nothing() -> None:
    short = [line for line in _ASR if line != "nan"] + ["nan", "nan"]
    assert engine_verdict(short) == []
    apart = [*_ASR[:3], "nan", "note", "nan", "note", "nan"]
    assert engine_verdict(apart) == []


# a run of bare decimals, one per line: a question's printed MSE each step (corpus holdout29
# h29b-010, verbatim values) and Keras's history['val_loss'] pasted one value per line (corpus
# holdout20 h20a-015, verbatim values)
_MSE = ["1305310646.9058952", "184198069792.42996", "25992991779912.277", "3667984265155172.0",
        "5.176052331083886e+17", "7.304152852734643e+19", "1.0307208174021644e+22", "1.4544950315880012e+24"]
_VAL = ["2.328559160232544", "46.456790924072266", "2.044419527053833", "72.33136749267578", "1.930311918258667",
        "15.246846199035645", "1.9836046695709229", "1934.048583984375", "1.670356035232544", "1.4758470058441162"]


def test_a_run_of_bare_values_that_explodes_or_jumps_a_thousandfold_is_a_spike() -> None:
    for lines in (_MSE, _VAL):
        assert [i.failure for i in engine_verdict(lines)][:1] == ["loss_spike"], lines[0]


def test_bare_values_that_stay_level_or_stand_apart_say_nothing() -> None:
    level = ["0.6931", "0.6512", "0.6120", "0.5874", "0.5533", "0.5391", "0.5170", "0.4988"]
    assert engine_verdict(level) == []
    # two numbers alone, apart: anything's (an accuracy, a time), no series
    apart = ["0.61", "epoch done", "1934.05", "epoch done", "0.58"]
    assert engine_verdict(apart) == []
    # whole numbers are counters
    assert engine_verdict(["1", "20", "3000", "40000", "5"]) == []
