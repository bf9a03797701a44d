"""Non-finite losses in shapes the engine used to miss.

Three classes of real lines:

- the loss printed under the name ``cost`` (Marian, Theano-era loops), and a duration that
  follows the word ``cost`` ("cost 278.35s") is not a loss;
- a non-finite value zero-padded by a Python format (``"{:07.5f}".format(nan)`` gives
  ``0000nan``);
- the exception of a training loop's own NaN-loss guard (its message, or, in a cut paste, the
  source line of its ``raise``), which names the failure better than the bare exception.
"""

from __future__ import annotations

import math

from detectors.parsers.fields import extract
from tests.helpers import engine_verdict

# https://github.com/marian-nmt/marian/issues/120 (corpus holdout6 h6a-012)
MARIAN = [
    "[2017-10-14 02:03:26] Ep. 2 : Up. 116780 : Sen. 6967296 : Cost 139.78 : Time 4.01s : 12567.44 words/s",
    "[2017-10-14 02:03:30] Ep. 2 : Up. 116790 : Sen. 6969856 : Cost 87.32 : Time 3.71s : 9522.98 words/s",
    "[2017-10-14 02:03:33] Ep. 2 : Up. 116800 : Sen. 6972416 : Cost nan : Time 2.74s : 19413.05 words/s",
    "[2017-10-14 02:03:36] Ep. 2 : Up. 116810 : Sen. 6974976 : Cost nan : Time 3.23s : 13540.76 words/s",
]
# https://github.com/ryankiros/visual-semantic-embedding/issues/10: the same key in a Theano loop
KIROS = "Epoch  2 Update  550 Cost  25.91058 UD  0.57851600647"
# https://github.com/tensorflow/tensorflow/issues/42834 (corpus holdout6 h6b-007): "{:07.5f}"
TF_ZERO_PAD = [
    "Step      50 (16.03%): loss = 3.19242 EER=0.19232 ",
    "Step      60 (19.23%): loss = 3.09014 EER=0.17402 ",
    "Step      80 (23.64%): loss = 0000nan EER=0.00000",
]
# Marian's fp16 scaler at its floor while the progress lines print "Cost nan" (corpus dev d4-026,
# https://github.com/marian-nmt/marian/issues/386)
MARIAN_FLOOR = [
    "[2022-05-09 06:45:23] Ep. 8 : Up. 535500 : Sen. 94,495,934 : Cost nan : Time 149.83s : "
    "144461.61 words/s : gNorm 0.6068 : L.r. 5.1856e-05",
    "[2022-05-09 06:50:57] Ep. 8 : Up. 537000 : Sen. 98,569,133 : Cost 2.46588373 : Time 111.03s : "
    "191311.12 words/s : gNorm 4.6161 : L.r. 5.1784e-05",
    "[2022-05-09 06:54:39] Ep. 8 : Up. 538000 : Sen. 101,269,034 : Cost nan : Time 110.79s : "
    "190254.29 words/s : gNorm 4.0652 : L.r. 5.1736e-05",
    "[2022-05-09 06:55:01] NaN/Inf percentage 0.70 in 10 gradient updates, but cost-scaling factor "
    "7.62939e-06 is already at minimum",
]

# NaN-loss guards that raise
# https://github.com/Buzz-Beater/LEMMA/issues/5 (SlowFast's misc.check_nan_losses)
LEMMA = [
    "Traceback (most recent call last):",
    '  File "rec_main.py", line 167, in <module>',
    "    main()",
    '  File "/usa/wqtwjt/LEMMA/utils/model_utils/misc.py", line 27, in check_nan_losses',
    '    raise RuntimeError("ERROR: Got NaN losses {}".format(datetime.now()))',
    "RuntimeError: ERROR: Got NaN losses 2021-10-28 23:20:46.797813",
]
# https://github.com/yairf11/MUPPET/issues/2
MUPPET = [
    "Traceback (most recent call last):",
    '  File "hotpot/scripts/train_eval/ablate_iterative_hotpot.py", line 346, in <module>',
    "    main()",
    '  File "/mnt/blossom/data/amankansal/QA/2020-Hotpot-QA/MUPPET/hotpot/trainer.py", line 824, in _train_async',
    '    raise RuntimeError("NaN loss!")',
    "RuntimeError: NaN loss!",
]
# https://github.com/mozilla/TTS/issues/668 (corpus holdout6 h6a-046): two writers interleaved,
# the message lands in the middle of the traceback
MOZILLA_TTS = [
    "Traceback (most recent call last):",
    '  File "TTS/TTS/bin/train_tacotron.py", line 721, in <module>',
    "    main(args)RuntimeError:  [!] NaN loss with decoder_loss.",
    "",
    '  File "/content/TTS/TTS/tts/layers/losses.py", line 398, in forward',
    '    raise RuntimeError(f" [!] NaN loss with {key}.")',
]
# https://github.com/coqui-ai/TTS/issues/755 (corpus holdout6 h6a-045): the paste ends on the raise
COQUI_CUT = [
    "Traceback (most recent call last):",
    '  File "/home/fijipants/repo/coqui-0.2/TTS/trainer.py", line 855, in fit',
    "    self._fit()",
    '  File "/home/fijipants/repo/coqui-0.2/TTS/trainer.py", line 466, in _optimize',
    '    raise RuntimeError(f" > Detected NaN',
]




def test_cost_is_the_loss() -> None:
    assert extract(MARIAN[1])["loss"] == 87.32
    assert math.isnan(extract(MARIAN[2])["loss"])
    assert extract(KIROS)["loss"] == 25.91058


def test_a_duration_after_cost_is_not_a_loss() -> None:
    # corpus d2-070 and d3-027: the time an epoch cost
    for line in ["cost 278.3528826236725s.", "Epoch: 6 cost time: 59.172507524490356",
                 "Ep cost: 230.42s,   Ev cost: -,    Remain: 18:41:23"]:
        assert "loss" not in extract(line), line


def test_a_zero_padded_nan_is_nan() -> None:
    got = extract(TF_ZERO_PAD[2])
    assert got["step"] == 80 and math.isnan(got["loss"])
    assert extract("loss = 0000inf")["loss"] == math.inf
    assert extract("loss = 0003.25")["loss"] == 3.25  # a zero-padded number stays a number


def test_a_cost_turning_nan_is_a_nonfinite_loss() -> None:
    top = engine_verdict(MARIAN)[0]
    assert top.failure == "nonfinite_loss"
    assert top.rank is None
    assert "Cost nan" in top.evidence[0].text
    assert engine_verdict(MARIAN[:2]) == []


def test_a_zero_padded_nan_loss_is_a_nonfinite_loss() -> None:
    top = engine_verdict(TF_ZERO_PAD)[0]
    assert top.failure == "nonfinite_loss"
    assert top.step == 80
    assert engine_verdict(TF_ZERO_PAD[:2]) == []


def test_nan_costs_beside_a_scaler_at_its_floor_are_the_collapse() -> None:
    found = engine_verdict(MARIAN_FLOOR)
    assert found[0].failure == "loss_scale_collapse"  # the NaN costs are the steps it could not skip


def test_a_nan_guard_exception_is_a_nonfinite_loss() -> None:
    for lines in (LEMMA, MUPPET, MOZILLA_TTS, COQUI_CUT):
        top = engine_verdict(lines)[0]
        assert top.failure == "nonfinite_loss", lines[-1]
        assert top.rank is None


def test_other_exceptions_stay_crashes() -> None:
    lines = [*LEMMA[:4], '    raise RuntimeError("ERROR: could not open {}".format(path))',
             "RuntimeError: ERROR: could not open data/train.json"]
    assert engine_verdict(lines)[0].failure == "rank_exception"


# An exception whose message names NaN as a word (round 6): the trainers' own checks
# https://github.com/ssnl/dataset-distillation/issues/11
DISTILL = [
    "Traceback (most recent call last):",
    '  File "/home/isucholu/original/dataset-distillation/train_distilled_image.py", line 283, in train',
    "    raise RuntimeError('loss became NaN')",
    "RuntimeError: loss became NaN",
]
# https://github.com/neuralhydrology/neuralhydrology/issues/101 (the title is the exception line)
NEURALHYDROLOGY = ["RuntimeError: Loss was NaN for 1 times in a row. Stopped training."]
# GluonTS's trainer raises this when the first epoch has no finite loss (https://github.com/awslabs/gluonts/pull/701)
GLUONTS_FIRST = ["gluonts.core.exception.GluonTSUserError: Got NaN in first epoch. Try reducing initial learning rate."]
# exceptions that only contain the letters: a module, a path, a name
NOT_NAN = [
    "ModuleNotFoundError: No module named 'nanogpt'",
    "FileNotFoundError: [Errno 2] No such file or directory: '/data/nano/train.bin'",
    "ValueError: unknown model nanoGPT-small",
]

# A loop's NaN guard telling in prose that a batch gave a non-finite loss
PROSE_GUARDS = [
    # GluonTS's trainer: logger.warning("Batch [%d] of Epoch[%d] gave NaN loss and it will be ignored")
    "WARNING:gluonts.trainer:Batch [7] of Epoch[3] gave NaN loss and it will be ignored",
    # https://github.com/utcsilab/deep-jsense/issues/2
    "skipping a NaN loss",
    # https://github.com/roytseng-tw/Detectron.pytorch/issues/7: logger.info('NaN loss found! Skipping the current step ...')
    "INFO train_net.py: 312: NaN loss found! Skipping the current step ...",
]
NOT_PROSE_GUARDS = [
    "skip_nan_loss: true",
    "Namespace(batch_size=8, skip_batches_with_nan_loss=True, lr=0.001)",
]


def test_an_exception_naming_nan_is_a_nonfinite_loss() -> None:
    for lines in (DISTILL, NEURALHYDROLOGY, GLUONTS_FIRST):
        top = engine_verdict(lines)[0]
        assert top.failure == "nonfinite_loss", lines[-1]


def test_an_exception_with_nan_inside_a_word_is_not() -> None:
    for line in NOT_NAN:
        assert all(i.failure != "nonfinite_loss" for i in engine_verdict([line])), line


def test_a_guard_saying_a_batch_gave_a_nan_loss_is_a_nonfinite_loss() -> None:
    for line in PROSE_GUARDS:
        found = engine_verdict([line])
        assert found and found[0].failure == "nonfinite_loss", line
    for line in NOT_PROSE_GUARDS:
        assert engine_verdict([line]) == [], line
