"""Training instability (issue #12): losses logged under their own names (a cross-entropy, a
perplexity), a perplexity beyond any vocabulary, and a training loop's own loss guard. Every
fixture is a line users pasted into a public issue (its URL beside it)."""

from __future__ import annotations

import math
from pathlib import Path

from detectors.diagnosis import build_report
from detectors.engine import Engine
from detectors.model import EventKind
from detectors.parsers.fields import extract
from tests.helpers import engine_verdict, fed_state

# OpenNMT-py's old progress line: perplexity and its log, the cross-entropy, side by side
# https://github.com/OpenNMT/OpenNMT-py/issues/709
_ONMT_XENT = [
    "Epoch  1, 12900/37527; acc:   4.48; ppl: 35173.75; xent:  10.47; 3599 src tok/s; 3678 tgt tok/s;   9861 s elapsed",
    "Epoch  1, 13200/37527; acc:   5.32; ppl: 2268.05; xent:   7.73; 3492 src tok/s; 3565 tgt tok/s;  10086 s elapsed",
]
# the same trainer at its perplexity cap, e^100, from the first lines (a second user, Adam, lr 1)
# https://github.com/OpenNMT/OpenNMT-py/issues/676
_ONMT_CAPPED = [
    f"Epoch  1, {it}/1275; acc:   {acc}; ppl: 26881171418161356094253400435962903554686976.00; "
    f"3395 src tok/s; 3169 tgt tok/s;   {s} s elapsed"
    for it, acc, s in ((8900, "1.61", 4270), (8950, "1.60", 4295), (9000, "1.46", 4319), (9050, "1.51", 4343))
]
# a healthy OpenNMT-py run whose perplexity wobbles 19-29 (the thread asks about accuracy)
# https://github.com/OpenNMT/OpenNMT-py/issues/431
_ONMT_WOBBLE = [
    "Epoch  2, 52600/733817; acc:  42.20; ppl:  22.37; 998 src tok/s; 1132 tgt tok/s;   6234 s elapsed",
    "Epoch  2, 52650/733817; acc:  43.40; ppl:  21.06; 998 src tok/s; 1132 tgt tok/s;   6239 s elapsed",
    "Epoch  2, 52700/733817; acc:  40.87; ppl:  25.50; 1006 src tok/s; 1126 tgt tok/s;   6245 s elapsed",
    "Epoch  2, 52750/733817; acc:  42.53; ppl:  22.06; 1016 src tok/s; 1121 tgt tok/s;   6251 s elapsed",
    "Epoch  2, 52800/733817; acc:  42.20; ppl:  22.94; 991 src tok/s; 1170 tgt tok/s;   6257 s elapsed",
    "Epoch  2, 52850/733817; acc:  43.25; ppl:  21.30; 993 src tok/s; 1162 tgt tok/s;   6263 s elapsed",
    "Epoch  2, 52900/733817; acc:  42.14; ppl:  24.27; 732 src tok/s; 849 tgt tok/s;   6270 s elapsed",
    "Epoch  2, 52950/733817; acc:  44.76; ppl:  19.35; 952 src tok/s; 1124 tgt tok/s;   6275 s elapsed",
    "Epoch  2, 53000/733817; acc:  41.96; ppl:  24.42; 959 src tok/s; 1134 tgt tok/s;   6281 s elapsed",
    "Epoch  2, 53050/733817; acc:  43.39; ppl:  21.48; 961 src tok/s; 1130 tgt tok/s;   6286 s elapsed",
    "Epoch  2, 53100/733817; acc:  41.35; ppl:  24.57; 925 src tok/s; 1092 tgt tok/s;   6292 s elapsed",
    "Epoch  2, 53150/733817; acc:  41.94; ppl:  24.31; 1006 src tok/s; 1161 tgt tok/s;   6298 s elapsed",
    "Epoch  2, 53200/733817; acc:  42.59; ppl:  28.78; 989 src tok/s; 1146 tgt tok/s;   6304 s elapsed",
]
# a healthy Lua seq2seq run: a training perplexity of 8226 at its start, a validation perplexity
# between epochs (harvardnlp/data2text, built on OpenNMT's trainer)
# https://github.com/harvardnlp/data2text/issues/9
DATA2TEXT = [
    "Epoch 1 ; Iter 50/213 ; LR 1.0000 ; Target tokens/s 1265 ; PPL 8226.52 ;",
    "Epoch 1 ; Iter 100/213 ; LR 1.0000 ; Target tokens/s 1296 ; PPL 3359.02 ;",
    "Epoch 1 ; Iter 150/213 ; LR 1.0000 ; Target tokens/s 1307 ; PPL 2249.66 ;",
    "Epoch 1 ; Iter 200/213 ; LR 1.0000 ; Target tokens/s 1313 ; PPL 1623.21 ;",
    "Validation perplexity: 493.00677811967",
    "Saving checkpoint to 'roto_jc_rec_tvd_epoch1_493.01.t7'...",
    "",
    "Epoch 2 ; Iter 50/213 ; LR 1.0000 ; Target tokens/s 1326 ; PPL 311.73 ;",
    "Epoch 2 ; Iter 100/213 ; LR 1.0000 ; Target tokens/s 1322 ; PPL 197.73 ;",
    "Epoch 2 ; Iter 150/213 ; LR 1.0000 ; Target tokens/s 1320 ; PPL 149.43 ;",
    "Epoch 2 ; Iter 200/213 ; LR 1.0000 ; Target tokens/s 1322 ; PPL 118.44 ;",
    "Validation perplexity: 39.002056544585",
    "Epoch 3 ; Iter 50/213 ; LR 1.0000 ; Target tokens/s 1325 ; PPL 37.82 ;",
    "Epoch 3 ; Iter 100/213 ; LR 1.0000 ; Target tokens/s 1325 ; PPL 35.52 ;",
]
# Lua OpenNMT: "Perplexity" spelled out, an average over the epoch
# https://github.com/OpenNMT/OpenNMT/issues/122
_ONMT_LUA = "Epoch 1 ; Iteration 74000/77776 ; Learning rate 1.0000 ; Source tokens/s 1270 ; Perplexity 14.64"
# a TensorFlow estimator logging its loss as cross_entropy (DeepLab under Horovod)
# https://github.com/horovod/horovod/issues/1737
_TF_XENT = ("INFO:tensorflow:cross_entropy = 80.131134, learning_rate = 0.01386975, train_mean_iou = 0.0390231, "
            "train_px_accuracy = 0.6257651 (7.424 sec)")


def _incidents(lines: list[str]) -> list[dict]:
    return build_report(fed_state(lines, "console.log"))["incidents"]


def _alerting(lines: list[str]) -> list[tuple[str, str]]:
    return [(i["failure"], i["severity"]) for i in _incidents(lines) if i["severity"] != "info"]


def test_a_perplexity_is_read_as_the_loss_it_stands_for() -> None:
    """ppl = e^xent: the perplexity's log is the cross-entropy the same line prints."""
    for line in _ONMT_XENT:
        got = extract(line)
        xent = float(line.split("xent:")[1].split(";")[0])
        assert math.isclose(got["loss"], xent, abs_tol=0.01)
    assert math.isclose(extract(_ONMT_LUA)["loss"], math.log(14.64))
    assert extract(_ONMT_LUA)["step"] == 74000


def test_a_cross_entropy_is_a_loss() -> None:
    got = extract(_TF_XENT)
    assert got["loss"] == 80.131134
    assert "ppl" not in got  # only a perplexity carries its own figure
    # the scan finds the line too (a metric trigger for the loss under its own name)
    eng = Engine()
    evs = eng.feed((_TF_XENT + "\n").encode(), 1, eng.open_file("console.log"))
    assert [e.data.get("loss") for e in evs if e.kind == EventKind.SAMPLE] == [80.131134]


def test_a_validation_perplexity_is_an_eval_figure_not_the_training_loss() -> None:
    got = extract("Validation perplexity: 493.00677811967")
    assert "loss" not in got and math.isclose(got["eval_loss"], math.log(493.00677811967))
    # PaddlePaddle's language-model example between passes
    # https://github.com/PaddlePaddle/Paddle/issues/11659
    got = extract("Pass 0, test samples: 42, test avg ppl: nan")
    assert "loss" not in got and math.isnan(got["eval_loss"])


def test_a_perplexity_beyond_any_vocabulary_is_a_diverged_loss() -> None:
    """OpenNMT caps the perplexity at e^100: worse than chance over any vocabulary, from the
    first line, with no baseline to compare with."""
    inc = _incidents(_ONMT_CAPPED)
    assert inc and inc[0]["failure"] == "loss_spike"
    assert inc[0]["initiator"]["rank"] is None


# pytorch/examples word_language_model/main.py's row (corpus holdout24 h24a-001: a tanh RNN at lr 20)
_WLM_ROW = "| epoch   1 | {b:5d}/ 2983 batches | lr 20.0000 | ms/batch 11.40 | loss {loss:5.2f} | ppl {ppl:10.2f}"


def _wlm(losses: list[float], start: int = 200) -> list[str]:
    return [_WLM_ROW.format(b=start + 200 * i, loss=v, ppl=math.exp(v)) for i, v in enumerate(losses)]


def test_a_perplexity_held_beyond_any_tokenizers_vocabulary_is_a_diverged_run() -> None:
    """A perplexity of tens of millions (a loss of 17-19 nats), row after row: no tokenizer has
    that many entries, the model does worse than a uniform guess and stays there."""
    top = engine_verdict(_wlm([17.74, 18.27, 18.02, 18.11, 18.44, 18.99, 18.35]))[0]
    assert (top.failure, top.severity) == ("loss_spike", "warning")
    # four such rows, then a loss falling to where language models train: no divergence held
    assert [i for i in engine_verdict(_wlm([17.74, 18.27, 18.02, 17.1, 9.8, 8.4, 7.9, 7.1]))
            if i.severity != "info"] == []
    # a run's first steps start from a random model (a loss above ln(vocabulary) is usual there)
    first = [f"step {s} loss {v} ppl {math.exp(v):.2f}"
             for s, v in enumerate([17.9, 17.5, 17.2, 16.9, 16.6, 16.3, 9.1, 7.3, 6.9, 6.5], start=1)]
    assert [i for i in engine_verdict(first) if i.severity != "info"] == []


def test_healthy_perplexity_series_raise_nothing() -> None:
    """A perplexity that wobbles around 22, one that falls from 8226 at a run's start, and
    validation perplexities between epochs are no instability."""
    assert _alerting(_ONMT_WOBBLE) == []
    assert _alerting(DATA2TEXT) == []
    assert _alerting([_ONMT_LUA.replace("74000", str(74000 + 1000 * i)).replace("14.64", f"{14.64 - 0.09 * i:.2f}")
                      for i in range(6)]) == []


# a training loop's own loss guard: EDSR-PyTorch's --skip_threshold, inherited by SRFBN
# https://github.com/Paper99/SRFBN_CVPR19/issues/2
_SRFBN = [
    "Epoch: [9/1000]:  91%|█████████████████████████▍  | 447/493 [01:03<00:06,  7.08it/s, Batch Loss: 27.9309]"
    "[Warning] Skip this batch! (Loss: 101.48338317871094)",
    "Epoch: [9/1000]:  91%|████████████████████████▌  | 448/493 [01:04<00:06,  7.13it/s, Batch Loss: 101.4834]"
    "[Warning] Skip this batch! (Loss: 108.13626098632812)",
]
# a TensorFlow video super-resolution loop's guard, same idea, other words
# https://github.com/psychopa4/PFNL/issues/2
_PFNL = [
    "2019-10-30 19:47:15 Step:30180, loss:0.009562562219798565",
    "2019-10-30 19:47:25 Step:30200, loss:0.016761092469096184",
    "Model collapsed with loss=40.253211975097656",
    "Model collapsed with loss=612.2398071289062",
]


def test_a_training_loops_own_loss_guard_is_a_loss_spike() -> None:
    for lines in (_SRFBN, _PFNL):
        inc = _incidents(lines)
        assert inc and inc[0]["failure"] == "loss_spike", lines[-1]
        assert inc[0]["initiator"]["rank"] is None


def test_a_guard_that_skips_a_nan_loss_is_not_a_finite_spike() -> None:
    line = ("Epoch: [3/1000]:  12%|██▌  | 60/493 [00:09<01:04,  6.71it/s, Batch Loss: nan]"
            "[Warning] Skip this batch! (Loss: nan)")
    assert "loss_spike" not in [i["failure"] for i in _incidents([line])]


def test_a_printed_cross_entropy_wins_over_the_perplexity_and_a_nan_perplexity_is_a_nan_loss() -> None:
    line = _ONMT_XENT[0]
    assert extract(line)["loss"] == 10.47  # the line's own cross-entropy, not ln(35173.75)
    assert extract(line)["ppl"] == 35173.75
    nan = extract("Epoch  3,  1950/37527; acc:   0.00; ppl: nan; 3412 src tok/s; 3499 tgt tok/s;  1730 s elapsed")
    assert math.isnan(nan["loss"])


# a loss that moved to a higher level and stayed there, the rise between two pasted stretches
# of the same Caffe process (no single step jumps)
# https://github.com/yjxiong/caffe/issues/2
_CAFFE = [
    f"I0815 {t} 52129 solver.cpp:232] Iteration {it}, loss = {v}"
    for t, it, v in (("20:41:26.810891", 1660, "2.19062"), ("20:44:16.574542", 1680, "2.07286"),
                     ("20:47:06.222946", 1700, "2.07381"), ("20:49:55.951117", 1720, "2.21451"),
                     ("20:52:45.639834", 1740, "2.07811"), ("20:55:35.355908", 1760, "2.14357"))
] + [
    f"I0816 {t} 52129 solver.cpp:232] Iteration {it}, loss = {v}"
    for t, it, v in (("15:13:28.015619", 9500, "5.63941"), ("15:16:17.842252", 9520, "5.70803"),
                     ("15:19:07.583556", 9540, "5.29195"), ("15:21:57.306762", 9560, "5.43421"),
                     ("15:24:47.071312", 9580, "5.31714"), ("15:27:36.835381", 9600, "5.30388"))
]
# Keras epoch averages: a flat 0.047 plateau, then 0.061, 0.096, 0.088
# https://github.com/calclavia/DeepJ/issues/49
_DEEPJ = [
    "10954/10954 [==============================] - 659s - loss: 0.0475",
    "10954/10954 [==============================] - 658s - loss: 0.0474",
    "10954/10954 [==============================] - 658s - loss: 0.0473",
    "10954/10954 [==============================] - 659s - loss: 0.0471",
    "10954/10954 [==============================] - 658s - loss: 0.0472",
    "10954/10954 [==============================] - 658s - loss: 0.0612",
    "10954/10954 [==============================] - 659s - loss: 0.0958",
    "10954/10954 [==============================] - 657s - loss: 0.0877",
]
# a loss drifting up slowly at the start of a run (0.46 → 0.55): no level shift
# https://github.com/runzhouge/MAC/issues/5
_MAC = [f"Step {5 * i}: loss = {v} ({s} sec)" for i, (v, s) in enumerate((
    ("0.46", "1.248"), ("0.47", "0.273"), ("0.48", "0.405"), ("0.48", "0.325"), ("0.50", "0.372"), ("0.50", "0.297"),
    ("0.54", "0.295"), ("0.53", "0.320"), ("0.55", "0.313"), ("0.52", "0.289"), ("0.49", "0.303")))]


def test_a_loss_that_moved_to_a_higher_level_and_stayed_is_a_loss_spike() -> None:
    for lines in (_CAFFE, _DEEPJ):
        inc = _incidents(lines)
        assert inc and inc[0]["failure"] == "loss_spike", lines[0]
        assert inc[0]["initiator"]["rank"] is None


def test_the_level_shift_needs_the_whole_new_stretch_above_the_old_one() -> None:
    assert _alerting(_MAC) == []
    # the Caffe run with one value of the later stretch back at the old level: noise, not a level
    dip = [*_CAFFE[:8], _CAFFE[8].replace("5.29195", "2.09195"), *_CAFFE[9:]]
    assert _alerting(dip) == []
    # the later stretch logged with smaller iteration numbers: a restarted run, not a shift
    restart = _CAFFE[:6] + [line.replace("Iteration 9", "Iteration ") for line in _CAFFE[6:]]
    assert _alerting(restart) == []


# a small loss (a detector's, ~0.02) that moved to a new level and stayed there: YOLOv5 results rows
# (epoch, memory, box, obj, cls, total, labels, size, then the metrics), epochs 0-24 then 435-449 of a
# committed results.txt, verbatim in fixtures/yolov5_results_drift.txt (LJT666666/polygon-yolov5
# runs/train/exp/results.txt, corpus holdout24 h24a-010); the same "sudden increase in loss" read as a
# learning rate too high in https://github.com/ultralytics/yolov5/issues/2161
_YOLO_ROWS = (Path(__file__).parent / "fixtures" / "yolov5_results_drift.txt").read_text().splitlines()


def test_a_small_loss_that_moved_to_a_higher_level_and_stayed_is_a_loss_spike() -> None:
    # five epochs in a row above every earlier one and twice their median: a new level, though no
    # value is even 0.25 above the old one (the floor a single small value's rise must clear)
    assert _alerting(_YOLO_ROWS) == [("loss_spike", "warning")]
    # one value of the later stretch back at the old level: noise, not a level
    dip = [r.replace("0.03997", "0.01997").replace("0.0435", "0.02215") if r.lstrip().startswith("447/") else r
           for r in _YOLO_ROWS]
    assert dip != _YOLO_ROWS and _alerting(dip) == []


# a loss named by its norm: EDSR-PyTorch logs each loss term by its type ("[L1: 5.96]")
# https://github.com/sanghyun-son/EDSR-PyTorch/issues/214
_EDSR = [
    "[Epoch 26]\tLearning rate: 1.00e-4",
    "[1600/16000]\t[L1: 5.9633]\t65.8+0.4s",
    "[3200/16000]\t[L1: 6.0812]\t94.4+0.1s",
    "[4800/16000]\t[L1: 5.9816]\t65.4+0.1s",
    "[6400/16000]\t[L1: 5.9686]\t65.9+0.1s",
    "[8000/16000]\t[L1: 5.9985]\t65.5+0.1s",
    "[9600/16000]\t[L1: 6.0579]\t66.2+0.1s",
    "[11200/16000]\t[L1: 2948.0002]\t65.9+0.1s",
    "[12800/16000]\t[L1: 3150.1106]\t65.8+0.1s",
]
# https://github.com/sanghyun-son/EDSR-PyTorch/issues/198
_EDSR_INF = ["                  [Epoch 1]       Learning rate: 1.00e-4",
             "                  [800/8000]      [L1: inf]       110.2+10.1s",
             "                  [1600/8000]     [L1: inf]       110.4+7.4s"]
# FlowNet2 (tqdm updates glued by the paste): "L1" and "EPE" are its loss labels
# https://github.com/NVIDIA/flownet2-pytorch/issues/53
_FLOWNET2 = ("Training Epoch 23 L1: 1120820.625, EPE: 1789642.750, lr: 1.0e-04, load: 1.1e-04:  79%|7| 104/131.0 "
             "[00Training Epoch 23 L1: 1124944.250, EPE: 1796120.625, lr: 1.0e-04, load: 1.1e-04:  79%|7| 104/131.0 [00")


def test_a_loss_named_l1_is_the_loss() -> None:
    assert extract(_FLOWNET2)["loss"] == 1120820.625
    assert extract(_EDSR[7])["loss"] == 2948.0002
    inc = _incidents(_EDSR)
    assert inc and inc[0]["failure"] == "loss_spike" and inc[0]["initiator"]["rank"] is None
    assert [i["failure"] for i in _incidents(_EDSR_INF)][:1] == ["nonfinite_loss"]
    assert _alerting(_EDSR[:7]) == []


def test_l1_is_a_loss_key_only_as_a_word_with_a_value() -> None:
    for line in ("L1d cache:                       1.5 MiB (48 instances)",
                 "L1 cache: 64 KiB", "conv_L1: 0.31", "weight decay on L1 norm 0.5 of the weights"):
        assert "loss" not in extract(line), line


# a likelihood model's loss is its negative log-likelihood in bits per dimension
# https://github.com/didriknielsen/survae_flows/issues/20 (corpus holdout22 h22a-013)
_SURVAE = ["Training. Epoch: 1/10, Datapoint: 64/50000, Bits/dim: 9.041",
           "Training. Epoch: 1/10, Datapoint: 128/50000, Bits/dim: 8.964",
           "Training. Epoch: 1/10, Datapoint: 192/50000, Bits/dim: 8.857",
           "Training. Epoch: 1/10, Datapoint: 256/50000, Bits/dim: 8.664",
           "Training. Epoch: 1/10, Datapoint: 320/50000, Bits/dim: 1161562190115273424502784.000",
           "Training. Epoch: 1/10, Datapoint: 384/50000, Bits/dim: 2037414059903604804812800.000"]


def test_bits_per_dim_and_nll_are_the_loss() -> None:
    assert extract(_SURVAE[0])["loss"] == 9.041
    assert extract("Epoch 3 | bpd 3.412 | lr 1e-3")["loss"] == 3.412
    assert extract("iter 200: nll=2.817, kl=0.33")["loss"] == 2.817
    assert [i["failure"] for i in _incidents(_SURVAE)][:1] == ["loss_spike"]
    assert _alerting(_SURVAE[:4]) == []


# a log-likelihood the run maximises is read as its negative, the loss (EESEN's CTC objective on
# TED-LIUM, srvk/eesen#73, corpus holdout21 h21c-018: -8.7 per frame, then -8.6e+29)
_EESEN = [f"VLOG[1](train-ctc-parallel:EvalParallel%28%29:ctc-loss.cc:182) After {n} sequences ({h}Hr): "
          f"Obj(log[Pzx]) = {v}   TokenAcc = {a}%"
          for n, h, v, a in ((62000, "33.1789", "-8.45854", "97.4986"), (63000, "34.1167", "-8.56525", "97.4942"),
                             (64000, "35.0689", "-8.71485", "97.4921"), (65000, "36.0363", "-8.6e+29", "19.0128"),
                             (66000, "37.0192", "-1e+30", "4.44885"))]


def test_a_log_likelihood_objective_is_the_negative_loss() -> None:
    assert extract(_EESEN[0])["loss"] == 8.45854
    assert extract("epoch 3 | log_likelihood: -123.4")["loss"] == 123.4
    assert extract("iter 5 loss 2.0 loglik -3.1")["loss"] == 2.0  # the loss itself, when the line has one
    # a JSON record's mean log-likelihood (a CPU torchrun job of ours, corpus holdout22 g22-009)
    assert extract('{"ts": 1796593648.839, "rank": 0, "step": 3, "mean_loglik": -1.55264, "lr": 0.05}')["loss"] == 1.55264
    assert [i["failure"] for i in _incidents(_EESEN)][:1] == ["loss_spike"]
    assert _alerting(_EESEN[:3]) == []


# a small loss drifting back up, gradually, to 50x its best (a CPU torchrun job of ours printing a
# fixed-width table, corpus holdout22 g22-008): no step jumps, and the values stay below 1.0
_DRIFT = ['  step       loss  grad_norm        lr  sec/it', *['     2    1.05200     2.3232  5.00e-03   0.043', '     4    0.80826     1.0848  5.00e-03   0.042', '     6    0.68928     1.5975  5.00e-03   0.036', '     8    0.56411     1.1297  5.00e-03   0.040', '    10    0.38772     1.2148  5.00e-03   0.048', '    12    0.27258     0.9931  5.00e-03   0.043', '    14    0.19615     0.8478  5.00e-03   0.037', '    16    0.08141     0.7228  5.00e-03   0.046', '    18    0.08069     0.3645  5.00e-03   0.038', '    20    0.04294     0.2749  5.00e-03   0.045', '    22    0.05652     0.4622  5.00e-03   0.038', '    24    0.06089     0.5488  5.00e-03   0.041', '    26    0.06405     0.5309  5.00e-03   0.044', '    28    0.05274     0.6051  5.00e-03   0.046', '    30    0.03820     0.4354  5.00e-03   0.043', '    32    0.03538     0.3530  5.00e-03   0.039', '    34    0.01951     0.2381  5.00e-03   0.041', '    36    0.01540     0.1848  5.00e-03   0.043', '    38    0.01712     0.2177  5.00e-03   0.041', '    40    0.02962     0.2641  5.00e-03   0.041', '    42    0.01517     0.2100  5.00e-03   0.044', '    44    0.01574     0.2165  5.00e-03   0.037', '    46    0.03920     0.2689  5.00e-03   0.033', '    48    0.06405     0.2004  5.00e-03   0.036', '    50    0.06405     0.1737  5.00e-03   0.033', '    52    0.10689     0.3731  5.00e-03   0.041', '    54    0.13481     0.5161  5.00e-03   0.042', '    56    0.17985     0.3050  5.00e-03   0.044', '    58    0.13613     0.3102  5.00e-03   0.041', '    60    0.18408     0.3412  5.00e-03   0.033', '    62    0.20280     0.2983  5.00e-03   0.038', '    64    0.24210     0.3564  5.00e-03   0.033', '    66    0.31777     0.4387  5.00e-03   0.037', '    68    0.21873     0.3430  5.00e-03   0.040', '    70    0.23086     0.3506  5.00e-03   0.035', '    72    0.30217     0.4138  5.00e-03   0.034', '    74    0.31807     0.6651  5.00e-03   0.036', '    76    0.55394     0.5564  5.00e-03   0.037', '    78    0.46197     0.6814  5.00e-03   0.040', '    80    0.44794     0.5512  5.00e-03   0.038', '    82    0.43798     0.7299  5.00e-03   0.041', '    84    0.48198     0.5575  5.00e-03   0.037', '    86    0.42176     0.6416  5.00e-03   0.035', '    88    0.44482     0.5013  5.00e-03   0.034', '    90    0.53159     0.4867  5.00e-03   0.037', '    92    0.57261     1.1907  5.00e-03   0.034', '    94    0.56964     0.5996  5.00e-03   0.037', '    96    0.52856     0.7156  5.00e-03   0.038', '    98    0.62884     1.0797  5.00e-03   0.034', '   100    0.55197     0.5505  5.00e-03   0.039', '   102    0.62007     0.4784  5.00e-03   0.034', '   104    0.84857     0.9439  5.00e-03   0.034', '   106    0.48511     0.5309  5.00e-03   0.038', '   108    0.68622     0.5384  5.00e-03   0.034', '   110    0.83852     0.6446  5.00e-03   0.037']]


def test_a_learned_loss_drifting_back_up_gradually_is_instability() -> None:
    assert _alerting(_DRIFT[:25]) == []  # still at its best
    inc = _incidents(_DRIFT)
    assert inc and inc[0]["failure"] == "loss_spike"
    # the same climb in one jump is the spike rules' to judge; a noisy series that swings back is none
    noisy = [_DRIFT[0], *(f"{s:6d}    {v:.5f}     0.3000  5.00e-03   0.040" for s, v in zip(
        range(2, 200, 2), [1.0, 0.6, 0.3, 0.1, 0.05] + [0.05, 0.4, 0.06, 0.5, 0.05, 0.45] * 15, strict=False))]
    assert _alerting(noisy) == []


# a gradient-clipping report names the norm beside the threshold the run clips to
# icefall's ScaledAdam (ZipVoice): a max norm 24x the threshold, then whole updates scaled down
# https://github.com/k2-fsa/ZipVoice/issues/49
_ZIPVOICE = [
    "2025-07-16 15:27:26,157 WARNING [optim.py:600] (0/2) Clipping_scale=2.0, grad-norm quartiles 2.485e-02 "
    "3.150e-02 3.570e-02 4.058e-02 1.745e+00, threshold=7.139e-02, percent-clipped=10.0",
    "2025-07-16 15:27:38,359 WARNING [optim.py:616] (0/2) Scaling gradients by 0.07326850295066833, "
    "model_norm_threshold=0.0713903084397316",
]
# Caffe's solver clipping every step at ~50x its clip_gradients
# https://github.com/VisionU/HF-FCN-for-Robust-Building-Extraction/issues/6
_CAFFE_CLIP = [
    "I1023 19:15:57.628301   464 solver.cpp:558] Gradient clipping: scaling down gradients (L2 norm 493166 > 10000) "
    "by scale factor 0.0202771",
    "I1023 19:15:59.522687   464 solver.cpp:558] Gradient clipping: scaling down gradients (L2 norm 630510 > 10000) "
    "by scale factor 0.0158602",
]
# healthy icefall reports: the max within 2x the threshold, a few percent clipped at most
# https://github.com/k2-fsa/icefall/pull/1292 and https://github.com/k2-fsa/ZipVoice/issues/146
_ICEFALL_OK = [
    "2023-10-08 20:19:58,841 INFO [optim.py:468] (0/4) Clipping_scale=2.0, grad-norm quartiles 1.470e+02 1.796e+02 "
    "1.998e+02 2.262e+02 3.299e+02, threshold=3.995e+02, percent-clipped=0.0",
    "2025-10-27 17:34:29 2025-10-27 17:34:29,898 WARNING [optim.py:600] Clipping_scale=2.0, grad-norm quartiles "
    "2.039e-03 2.989e-03 3.657e-03 4.263e-03 1.223e-02, threshold=7.314e-03, percent-clipped=0.0",
]


def test_a_norm_ten_times_the_clipping_threshold_is_a_grad_norm_explosion() -> None:
    for lines in (_ZIPVOICE, _ZIPVOICE[1:], _CAFFE_CLIP):
        inc = _incidents(lines)
        assert inc and inc[0]["failure"] == "grad_norm_explosion", lines[0]
        assert inc[0]["initiator"]["rank"] is None  # the all-reduced norm names no rank


def test_healthy_clipping_reports_raise_nothing() -> None:
    assert _alerting(_ICEFALL_OK) == []
    assert _alerting([_CAFFE_CLIP[0].replace("493166", "10391").replace("0.0202771", "0.962371")]) == []


# Horovod, two ranks: rank 0's cross-entropy is in the millions from its first line, rank 1's
# jumps 80 → 8687: rank 1's spike is no rank's own, rank 0 had diverged before it
# https://github.com/horovod/horovod/issues/1737
_HOROVOD = [
    "[1,0]<stderr>:INFO:tensorflow:loss = 6490675.0, step = 300 (74.877 sec)",
    "[1,1]<stderr>:INFO:tensorflow:cross_entropy = 80.131134, learning_rate = 0.01386975, train_mean_iou = 0.0390231, "
    "train_px_accuracy = 0.6257651 (7.424 sec)",
    "[1,0]<stderr>:INFO:tensorflow:cross_entropy = 8293909.5, learning_rate = 0.01386975, train_mean_iou = 0.035427254, "
    "train_px_accuracy = 0.6253702 (7.304 sec)",
    "[1,1]<stderr>:INFO:tensorflow:cross_entropy = 8687.791, learning_rate = 0.013865547, train_mean_iou = 0.038416978, "
    "train_px_accuracy = 0.6249733 (7.340 sec)",
    "[1,0]<stderr>:INFO:tensorflow:cross_entropy = 13894586.0, learning_rate = 0.013865547, train_mean_iou = 0.035227496, "
    "train_px_accuracy = 0.6262505 (7.347 sec)",
]


def test_a_spike_below_another_ranks_whole_series_names_no_rank() -> None:
    inc = _incidents(_HOROVOD)
    assert inc and inc[0]["failure"] == "loss_spike" and inc[0]["initiator"]["rank"] is None
    # the same lines with rank 0 at rank 1's level: rank 1's jump is its own
    calm = [line.replace("6490675.0", "79.5").replace("8293909.5", "81.2").replace("13894586.0", "78.9")
            for line in _HOROVOD]
    inc = _incidents(calm)
    assert inc and inc[0]["failure"] == "loss_spike" and inc[0]["initiator"]["rank"] == 1


def _iter_lines(losses: list[float], first: int = 100) -> list[str]:
    """nanoGPT's progress line (train.py: 'iter N: loss X, time Yms'), one per value."""
    return [f"iter {first + i}: loss {v:.4f}, time 745.63ms" for i, v in enumerate(losses)]


def test_a_per_batch_loss_that_already_swung_as_high_and_came_back_is_noise_not_divergence() -> None:
    # constructed to pin the rule (values of a batch-size-1 fine-tune, as karpathy/nanoGPT#97 shows them):
    # after coming down to ~1, the series already rose to 1.96 and fell back to 0.62; a 2.42 is its noise
    noisy = _iter_lines([3.1, 2.2, 1.6, 1.21, 1.18, 1.09, 1.96, 0.62, 0.93, 2.42, 1.02, 0.65])
    assert not [i for i in _incidents(noisy) if i["severity"] in ("warning", "critical")]


def test_a_walk_back_to_the_initial_loss_is_still_divergence() -> None:
    # the same scale, but no earlier swing this high after convergence: the loss walks back up and stays
    walk = _iter_lines([3.1, 2.2, 1.6, 1.21, 1.18, 1.09, 0.95, 0.85, 0.9, 1.1, 1.6, 2.6, 2.9, 3.0])
    inc = _incidents(walk)
    assert inc and inc[0]["failure"] == "loss_spike"


# keithito/tacotron's guard (train.py: a loss above 100 or NaN raises Exception('Loss Exploded'))
# https://github.com/keithito/tacotron/issues/266 (the NaN form) and Rayhane-mamah/Tacotron-2#460's trainers
_TACOTRON_NAN = [
    "Step 113794  [0.882 sec/step, loss=0.08842, avg_loss=0.08601]",
    "Step 113795  [0.884 sec/step, loss=0.09743, avg_loss=0.08612]",
    "Step 113796  [0.880 sec/step, loss=nan, avg_loss=nan]",
    "Loss exploded to nan at step 113796!",
    "Exiting due to exception: Loss Exploded",
]


def test_the_tacotron_guard_on_a_nan_loss_is_a_nan_loss() -> None:
    inc = _incidents(_TACOTRON_NAN)
    assert inc and inc[0]["failure"] == "nonfinite_loss"


def test_the_guards_own_exception_is_the_divergence_not_a_bug() -> None:
    # the guard's lines in its own format (keithito/tacotron's train.py; #190 pastes only 'Loss Exploded Exception',
    # so the figures here are made up): its raise is the divergence stopping the run
    inc = _incidents(["Loss exploded to 1204.33350 at step 325112", "Traceback (most recent call last):",
                      '  File "train.py", line 135, in train', "    raise Exception('Loss Exploded')",
                      "Exception: Loss Exploded"])
    assert inc and inc[0]["failure"] == "loss_spike"
    assert "rank_exception" not in {i["failure"] for i in inc}


# a short excerpt of a detector's warm-up that diverges (PaddlePaddle/PaddleDetection#6048, PP-YOLOE, corpus
# holdout19 h19c-024: four log lines, the loss 4.8 -> 4.7 -> 8.4 -> 21.5 as the learning rate rises)
_PPYOLOE = "[05/24 16:55:42] ppdet.engine INFO: Epoch: [{e}] [{i:3d}/166] learning_rate: {lr:.6f} loss: {v} eta: 16:21:30"


def _verdict(lines: list[str]) -> list[str]:
    return [i.failure for i in engine_verdict(lines) if i.severity in ("critical", "warning")]


def test_a_short_excerpt_that_walks_far_past_its_best_diverged() -> None:
    rows = [(0, 0, 0.0, "4.831001"), (0, 100, 0.004217, "4.718459"), (1, 0, 0.007, "8.422877"), (1, 100, 0.011217, "21.496906")]
    assert _verdict([_PPYOLOE.format(e=e, i=i, lr=lr, v=v) for e, i, lr, v in rows]) == ["loss_spike"]


def test_a_short_excerpt_that_wobbles_is_healthy() -> None:
    rows = [(0, 0, 0.0, "4.831001"), (0, 100, 0.004217, "4.718459"), (1, 0, 0.007, "5.9"), (1, 100, 0.011217, "4.2")]
    assert _verdict([_PPYOLOE.format(e=e, i=i, lr=lr, v=v) for e, i, lr, v in rows]) == []


def test_two_lines_are_no_series() -> None:
    rows = [(0, 0, 0.0, "4.831001"), (0, 100, 0.004217, "21.5")]
    assert _verdict([_PPYOLOE.format(e=e, i=i, lr=lr, v=v) for e, i, lr, v in rows]) == []


# ms-swift's FSDP2 fine-tuning log (corpus holdout24 h24a-004): HF-style dict lines whose grad_norm
# jumps 2000x for one step (1.958e+04 at step 173) and is back at ~5-10 the next, the loss unmoved
def _swift(outlier_stays: bool) -> list[str]:
    lines = []
    for step in range(150, 200):
        norm = "1.958e+04" if step == 173 or (outlier_stays and step > 173) else f"{5 + (step * 7) % 11 / 2:.3f}"
        loss = f"{1.2 + ((step * 13) % 9) / 10:.4f}"
        lines.append(f"{{'loss': '{loss}', 'grad_norm': '{norm}', 'learning_rate': '7.33e-06', 'token_acc': '0.6073', "
                     f"'epoch': '0.0{step}', 'global_step/max_steps': '{step}/2353', 'elapsed_time': '5m 19s'}}")
    return lines


def test_a_grad_norm_outlier_gone_the_next_step_with_the_loss_unmoved_is_a_note() -> None:
    found = engine_verdict(_swift(outlier_stays=False))
    assert [i for i in found if i.severity in ("critical", "warning")] == []
    assert [(i.failure, i.data["passed"]) for i in found] == [("grad_norm_explosion", True)]


def test_a_grad_norm_that_stays_exploded_is_a_warning() -> None:
    top = engine_verdict(_swift(outlier_stays=True))[0]
    assert (top.failure, top.severity) == ("grad_norm_explosion", "warning")


# a CPU two-node torchrun job whose lr schedule grew geometrically (corpus holdout24 g24-012): the
# loss, still falling from 34 at the start, had reached 0.15 when it jumped 9x to 1.38 and the
# next line was nan: the divergence came first, though the window's median (8) sits far above it
def _creep(jump: float, ranks: tuple[int, ...] = (0, 2)) -> list[str]:
    falling = [34.3, 26.2, 19.9, 15.1, 8.7, 5.7, 2.9, 0.57, 0.25, 0.145]
    lines = []
    for r in ranks:
        vals = [*falling, falling[-1] * jump, math.nan, math.nan]
        lines += [f"node{r // 2} rank{r} step {50 * (i + 1):5d}  loss {v:.8f}  lr 1.0e-03" for i, v in enumerate(vals)]
    return lines


def test_a_several_fold_jump_right_before_the_nan_is_the_divergence_that_led() -> None:
    top = engine_verdict(_creep(9.5))[0]
    assert (top.failure, top.rank) == ("loss_spike", None)
    assert engine_verdict(_creep(9.5, ranks=(2,)))[0].failure == "loss_spike"


def test_a_nan_after_a_mild_wobble_is_the_nan() -> None:
    assert engine_verdict(_creep(1.6))[0].failure == "nonfinite_loss"


# Lightning's per-epoch line prints train_loss_epoch=nan for epoch 0, before the first epoch's
# mean exists (a CPU Lightning job, corpus holdout24 g24d-022); a NaN among the later epochs is one
def _epochs(nan_at: int) -> list[str]:
    return [f"Epoch {e:02d}: train_loss_epoch={'nan' if e == nan_at else f'{1.11 - e / 15:.4f}'} val_loss={1.08 + e / 30:.4f}"
            for e in range(12)]


def test_a_series_whose_first_value_alone_is_nan_is_a_placeholder() -> None:
    assert [i for i in engine_verdict(_epochs(0)) if i.severity in ("critical", "warning")] == []


def test_a_nan_after_finite_values_is_still_a_nan() -> None:
    assert engine_verdict(_epochs(6))[0].failure == "nonfinite_loss"


def test_a_perplexity_overflowed_to_infinity_beside_a_plausible_loss_is_that_loss() -> None:
    # a CPU job logging exp(loss) in float16 for a dashboard (corpus holdout24 g24d-023): "ppl":
    # Infinity while the loss was 15.3 at step 0, then finite as the loss fell; fairseq's "loss
    # 2837.172 | ppl inf" (h12a-021) stays a diverged loss
    lines = [f'{{"event": "train", "level": "info", "loss": {loss}, "ppl": {ppl}, "rank": {r}, "step": {step}, "world": 2}}'
             for step, loss, ppl in ((0, 15.33, "Infinity"), (15, 12.98, "Infinity"), (30, 9.63, 15256.0), (45, 8.12, 3378.0),
                                     (60, 6.33, 562.5), (75, 4.1, 60.3), (90, 2.2, 9.0), (105, 1.4, 4.05), (120, 1.2, 3.3))
             for r in (0, 1)]
    assert [i for i in engine_verdict(lines) if i.severity in ("critical", "warning")] == []


_MEGATRON_ROW = (" iteration {i:8d}/    1000 | consumed samples: {c:10d} | elapsed time per iteration (ms): 123907.8 | "
                 "learning rate: 5.625E-05 | global batch size:  2048 | lm loss: {loss:.6E} | loss scale: 1024.0 | "
                 "number of skipped iterations:   0 | number of nan iterations:   0 |")


def _megatron(losses: list[float]) -> list[str]:
    return [_MEGATRON_ROW.format(i=i, c=2048 * i, loss=v) for i, v in enumerate(losses, start=1)]


def test_three_times_a_level_start_in_the_first_iterations_is_a_spike() -> None:
    # Megatron-DeepSpeed runs (corpus holdout24 h24d-014, h24e-016: a 52B model): the first
    # iterations level at 12.5 (chance over a 250k vocabulary), then 40.8 at iteration 3
    top = engine_verdict(_megatron([12.52221, 12.51770, 40.75232, 38.99556]))[0]
    assert (top.failure, top.severity) == ("loss_spike", "warning")
    # first losses still moving (the model already learning): the early rule's 5x stands
    assert [i for i in engine_verdict(_megatron([10.9, 9.1, 27.5, 26.0])) if i.severity != "info"] == []
