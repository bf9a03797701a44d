"""Validation-only jumps: a held-out loss that leaps above its best while the training loss
does not fall is a divergence (``loss_spike``); a held-out loss that creeps up while the
training loss keeps falling is over-fitting and stays quiet. Every fixture is a line users
pasted into a public issue (its URL beside it)."""

from __future__ import annotations

import math

from tests.helpers import engine_verdict, fed_state

# Marian's validation lines, the loss under "cross-entropy", the tag "[valid]" before it
# https://github.com/marian-nmt/marian-dev/issues/512
_MARIAN_JUMP = [
    "[2019-10-17 17:51:28] [valid] Ep. 2 : Up. 80000 : cross-entropy : 53.9433 : new best",
    "[2019-10-17 17:52:51] [valid] Ep. 2 : Up. 80000 : bleu : 26.4827 : new best",
    "[2019-10-17 18:19:36] [valid] Ep. 2 : Up. 90000 : cross-entropy : 53.018 : new best",
    "[2019-10-17 18:47:38] [valid] Ep. 2 : Up. 100000 : cross-entropy : 52.1468 : new best",
    "[2019-10-17 19:15:43] [valid] Ep. 2 : Up. 110000 : cross-entropy : 52.3338 : stalled 1 times",
    "[2019-10-17 19:44:00] [valid] Ep. 3 : Up. 120000 : cross-entropy : 75.2208 : stalled 2 times",
    "[2019-10-17 19:46:09] [valid] Ep. 3 : Up. 120000 : bleu : 12.0324 : stalled 1 times",
]
# a second Marian run: one evaluation prints a summed cross-entropy and a perplexity (two
# series on two scales), with the training "Cost" lines between evaluations
# https://github.com/marian-nmt/marian/issues/376
_MARIAN_TWO_SERIES = [
    "[2021-07-17 20:59:21] [valid] Ep. 1 : Up. 80000 : cross-entropy : 67.9483 : new best",
    "[2021-07-17 20:59:45] [valid] Ep. 1 : Up. 80000 : perplexity : 15.1079 : new best",
    "[2021-07-17 21:00:26] [valid] Ep. 1 : Up. 80000 : translation : 20.73 : new best",
    "[2021-07-17 21:11:31] Ep. 1 : Up. 82000 : Sen. 5,529,093 : Cost 2.79048038 : Time 817.42s : 2193.04 words/s",
    "[2021-07-17 21:20:49] Ep. 1 : Up. 84000 : Sen. 5,797,526 : Cost 2.56940508 : Time 557.78s : 3182.58 words/s",
    "[2021-07-17 21:30:44] Ep. 1 : Up. 86000 : Sen. 6,016,044 : Cost 3.01187825 : Time 595.39s : 2238.55 words/s",
]
# attention-is-all-you-need-pytorch's epoch summaries: "(Training)" and "(Validation)" lines of
# perplexity; both grow, the validation one tenfold
# https://github.com/jadore801120/attention-is-all-you-need-pytorch/issues/60
_AIAYN = [
    "[ Epoch 0 ]",
    "  - (Training)   ppl:  69.89619, accuracy: 48.127 %, elapse: 9.800 min",
    "  - (Validation) ppl:  86.35283, accuracy: 20.530 %, elapse: 3.096 min",
    "    - [Info] The checkpoint file has been updated.",
    "[ Epoch 1 ]",
    "  - (Training)   ppl:  135.71178, accuracy: 32.377 %, elapse: 10.807 min",
    "  - (Validation) ppl:  865.33501, accuracy: 5.777 %, elapse: 3.052 min",
    "[ Epoch 2 ]",
    "  - (Training)   ppl:  193.38618, accuracy: 27.988 %, elapse: 11.013 min",
    "  - (Validation) ppl:  949.73713, accuracy: 4.359 %, elapse: 3.093 min",
]
# over-fitting, not divergence: the validation loss rises to 2.3x its best (1.34x in one epoch)
# while the training loss falls every epoch (TensorFlow 2 tutorial code)
# https://github.com/lyhue1991/eat_tensorflow2_in_30_days/issues/69
_TF2_OVERFIT = [
    "Epoch=1,Loss:0.442317516,Accuracy:0.7695,Valid Loss:0.323672801,Valid Accuracy:0.8614",
    "Epoch=2,Loss:0.245737702,Accuracy:0.90215,Valid Loss:0.356488883,Valid Accuracy:0.8554",
    "Epoch=3,Loss:0.17360799,Accuracy:0.93455,Valid Loss:0.361132562,Valid Accuracy:0.8674",
    "Epoch=4,Loss:0.113476314,Accuracy:0.95975,Valid Loss:0.483677238,Valid Accuracy:0.856",
    "Epoch=5,Loss:0.0698405355,Accuracy:0.9768,Valid Loss:0.607856631,Valid Accuracy:0.857",
    "Epoch=6,Loss:0.0366807655,Accuracy:0.98825,Valid Loss:0.745884955,Valid Accuracy:0.854",
]
# Keras's verbose=2 epoch lines, over-fitting after epoch 7 (val_loss up, loss down)
# https://github.com/keras-team/keras/issues/10102
_KERAS_OVERFIT = [
    "Epoch 4/200",
    " - 2s - loss: 55.8033 - val_loss: 26.4454",
    "Epoch 5/200",
    " - 2s - loss: 53.3749 - val_loss: 26.3017",
    "Epoch 6/200",
    " - 3s - loss: 51.0523 - val_loss: 26.2110",
    "Epoch 7/200",
    " - 2s - loss: 48.8308 - val_loss: 26.1701",
    "Epoch 8/200",
    " - 2s - loss: 46.7058 - val_loss: 26.1759",
    "Epoch 9/200",
    " - 2s - loss: 44.6733 - val_loss: 26.2252",
    "Epoch 10/200",
    " - 2s - loss: 42.7294 - val_loss: 26.3153",
]


def _samples(lines: list[str]) -> list[dict[str, object]]:
    st = fed_state(lines)
    return [dict(r.data) for rs in st.ranks.values() for r in rs.samples]


def _failures(lines: list[str]) -> list[str]:
    return [i.failure for i in engine_verdict(lines)]


def test_tagged_validation_lines_are_eval_losses() -> None:
    marian = _samples(_MARIAN_JUMP)
    assert [d.get("eval_loss") for d in marian] == [53.9433, 53.018, 52.1468, 52.3338, 75.2208]
    assert not any("loss" in d for d in marian)  # bleu lines are not losses; no training loss
    aiayn = _samples(_AIAYN)
    train = [d["loss"] for d in aiayn if "loss" in d]
    evals = [d["eval_loss"] for d in aiayn if "eval_loss" in d]
    assert [round(math.exp(float(x)), 3) for x in train] == [69.896, 135.712, 193.386]  # type: ignore[arg-type]
    assert [round(math.exp(float(x)), 3) for x in evals] == [86.353, 865.335, 949.737]  # type: ignore[arg-type]


def test_marian_evaluation_series_stay_apart() -> None:
    data = _samples(_MARIAN_TWO_SERIES)
    assert data[0] == {"eval_loss": 67.9483, "scope": "local"}
    assert data[1]["eval_from_ppl"] == 1.0 and math.isclose(float(data[1]["eval_loss"]), math.log(15.1079))  # type: ignore[arg-type]
    assert _failures(_MARIAN_TWO_SERIES) == []  # 67.9 after ln(15.1) is another scale, not a jump


def test_validation_jump_without_training_lines_is_a_spike() -> None:
    inc = engine_verdict(_MARIAN_JUMP)
    assert [i.failure for i in inc] == ["loss_spike"]
    assert inc[0].evidence[0].line == 6  # the 75.22 evaluation


def test_validation_and_training_both_rising_is_a_spike() -> None:
    inc = engine_verdict(_AIAYN)
    assert [i.failure for i in inc] == ["loss_spike"]
    assert inc[0].evidence[0].line == 7  # validation ppl 865


def test_overfitting_stays_quiet() -> None:
    # the validation loss rises by more than the jump ratio, the training loss falls meanwhile
    assert _failures(_TF2_OVERFIT) == []
    assert _failures(_KERAS_OVERFIT) == []


def test_same_jump_with_training_loss_not_falling_is_caught() -> None:
    # the TF2 tutorial lines with the training loss held at its epoch-3 value: the validation
    # rise no longer has over-fitting's alibi (the counterfactual of test_overfitting_stays_quiet)
    held = [line.replace(line.split(",")[1], "Loss:0.17360799") for line in _TF2_OVERFIT]
    assert _failures(held) == ["loss_spike"]



def test_a_training_tag_before_the_eval_tag_keeps_the_training_loss() -> None:
    # the AIAYN summary rows joined into one line (a constructed counterfactual: the first loss
    # read is the "(Training)" one, so the line stays a training sample)
    joined = _AIAYN[1].strip() + " " + _AIAYN[2].strip()
    data = _samples([joined])
    assert len(data) == 1 and "eval_loss" not in data[0] and round(math.exp(float(data[0]["loss"])), 3) == 69.896  # type: ignore[arg-type]


def test_megatron_validation_summary_is_an_eval() -> None:
    # Megatron's validation summary prints "LM loss"/"LM PPL": a held-out figure, not the
    # training loss of the iteration lines around it
    # https://github.com/THUDM/Chinese-Transformer-XL/issues/7
    data = _samples([" validation loss at iteration 1000 | LM loss: 4.503653E+00 | LM PPL: 9.034661E+01"])
    assert data and all("loss" not in d and "ppl" not in d for d in data)
    assert {d["eval_loss"] for d in data} == {4.503653}


def test_a_cv_loss_leaping_above_its_best_is_a_spike() -> None:
    # CAT's per-epoch cross-validation loss, the only series a grep of its log kept
    # (https://github.com/thu-spmi/CAT/issues/22): 687 → 1222 → 1671, never back
    lines = ['libri $ cat log_train_1.log |grep "mean"', "mean_cv_loss: 687.0884070194129",
             "mean_cv_loss: 1222.706387606534", "mean_cv_loss: 1671.5333037405303", "mean_cv_loss: 1874.3074100378788"]
    assert _failures(lines)[:1] == ["loss_spike"]
