"""Numeric log lines the engine used to misread (issue #12, classes 1, 5 and 6).

Each fixture is a real line, quoted verbatim from the thread named beside it:

- a loss printed as an array of per-device values (``loss [nan 9.21 ...]``, ``loss: [nan]``)
  must pass the scan's noise check, which used to want a number right after the key;
- the bracketed epoch of metric loggers that count iterations per epoch (Swin/SimMIM/MoBY
  ``Train: [3/300][290/625]``, PaddleDetection ``Epoch: [0] [  560/21947]``, HRNet
  ``Epoch: [1][2000/4682]``) is the epoch, so an overflow in a later epoch is no warm-up;
- the min-loss-scale abort whose message is broken up or worded by another trainer, and the
  bare exception that ends the same traceback right below it (the abort, not a second crash).
"""

from __future__ import annotations

from detectors.parsers.fields import METRIC_KEYS
from detectors.scanner import NoiseRule
from tests.helpers import engine_verdict, fed_state

# https://github.com/PaddlePaddle/Paddle/issues/11659 (corpus h4-021): the fetched loss is a
# numpy array, one value per device
PADDLE_ARRAY = [
    "Pass 0, batch 300, loss [9.356211 9.21147  9.246531 9.155577 9.214032 8.904251 9.210296 9.28463 ]",
    "Pass 0, batch 500, loss [     nan 9.211133      nan      nan      nan      nan 9.210888      nan]",
    "Pass 1, batch 0, loss [     nan 9.209968      nan      nan      nan      nan 9.208872      nan]",
]
# https://github.com/PaddlePaddle/PaddleSlim/issues/1582: a one-element array
PADDLESLIM_ARRAY = [
    "2022-12-08 17:57:31,371-INFO: Total iter: 0, epoch: 0, batch: 0, loss: [10.000229]",
    "2022-12-08 17:57:32,672-INFO: Total iter: 10, epoch: 0, batch: 10, loss: [nan]",
    "2022-12-08 17:57:33,992-INFO: Total iter: 20, epoch: 0, batch: 20, loss: [nan]",
]

# https://github.com/SwinTransformer/Transformer-SSL/issues/19 (corpus d2-069: the first of the paste's
# glued records, its colour codes printed as '^[[32m' as pasted)
MOBY = ("^[[32m[2023-10-24 17:33:21 moby__swin_tiny__patch4_window7_224__odpr02_tdpr0_cm099_ct02_queue4096_proj2_pred2]"
        "^[[0m^[[33m(moby_main.py 177)^[[0m: INFO Train: [3/300][290/625]  eta 0:05:52 lr 0.002772 time 0.5567 (1.0516)    "
        "loss 10.5960 (10.9174)  grad_norm 1.4802 (1.5236)       mem 45716MB")
# https://github.com/PaddlePaddle/PaddleDetection/issues/4272
PPDET = ("[10/08 00:43:11] ppdet.engine INFO: Epoch: [0] [  560/21947] learning_rate: 0.000060 loss_rpn_cls: 0.677536 "
         "loss_rpn_reg: 0.017564 loss_bbox_cls: 0.030547 loss_bbox_reg: 0.006676 loss: 0.740015 eta: 1 day, 10:42:49 "
         "batch_cost: 0.4942 data_cost: 0.0003 ips: 4.0471 images/s")
# https://github.com/microsoft/human-pose-estimation.pytorch/issues/21 (corpus h3-059, verbatim)
HRNET = ("**Epoch: [1][2000/4682]\tTime 0.499s (0.496s)\tSpeed 64.1 samples/s\tData 0.000s (0.007s)\t"
         "Loss 0.00067 (0.00070)\tAccuracy 0.648 (0.578)")
# apex amp's overflow line (the same thread)
APEX = "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 65536.0"
# https://github.com/microsoft/Swin-Transformer/issues/47 (corpus num-034): an epoch-0 line of the same logger
SWIN_EPOCH0 = ("[2021-04-25 05:35:19 swin_base_patch4_window7_224](main_prune.py 310): INFO Train: [0/300][4050/5004]   "
               "eta 0:17:06 lr 0.000500 time 1.1737 (1.0765)    loss 3.2572 (3.3279)    grad_norm 1.0323 (nan)  mem 4814MB")

# https://github.com/facebookresearch/fairseq/issues/1215 (corpus h2-040): the paste interleaves
# the format call of fp16_optimizer.py with its message; the exception line keeps two words
FAIRSEQ_GARBLED = [
    'File "/home/sumegha/fairseq/fairseq/optim/fp16_optimizer.py", line 189, in clip_grad_norm',
    "    ).format(self.args. scale reached (0.0001). Your loss is probably exploding. Try lowering the learning "
    "rate, using gradient clipping or increasing the batch size.min_loss_scale))",
    "FloatingPointError: Minimum loss.",
]
# the same abort in other trainers' words: fairseq's AMP optimizer (fairseq/optim/amp_optimizer.py)
# and kscalelabs/mlfab (mlfab/task/mixins/parallel.py raises MinGradScaleError with this text);
# both reconstructed from the raise statements, the message has no placeholder but the scales
OTHER_WORDINGS = [
    "FloatingPointError: AMP: Minimum loss scale reached (0.0001). Your loss is probably exploding. "
    "Try restarting training or use fp32. 6.103515625e-05",
    "mlfab.utils.experiments.MinGradScaleError: Minimum gradient scale reached; your loss is probably exploding",
]




def _noise_rule() -> NoiseRule:
    return NoiseRule(frozenset(), frozenset(), METRIC_KEYS)


def test_a_loss_array_is_a_metric_key_beside_a_number() -> None:
    rule = _noise_rule()
    for line in PADDLE_ARRAY + PADDLESLIM_ARRAY:
        assert rule.has_pair(line.encode()), line
    assert not rule.has_pair(b"Pass 0, batch 500, loss [details below]")


def test_a_nan_in_a_per_device_loss_array_is_a_nonfinite_loss() -> None:
    top = engine_verdict(PADDLE_ARRAY)[0]
    assert top.failure == "nonfinite_loss"
    assert top.rank is None  # the array's slots are devices, not ranks the log names
    assert "batch 500" in top.evidence[0].text


def test_a_one_element_loss_array_turning_nan() -> None:
    top = engine_verdict(PADDLESLIM_ARRAY)[0]
    assert top.failure == "nonfinite_loss"
    assert top.step == 10


def test_finite_loss_arrays_raise_nothing() -> None:
    assert engine_verdict(PADDLE_ARRAY[:1] + PADDLESLIM_ARRAY[:1]) == []


def test_the_bracketed_epoch_is_read() -> None:
    assert fed_state([MOBY], "train.log").max_epoch == 3.0
    assert fed_state([HRNET], "train.log").max_epoch == 1.0
    st = fed_state([PPDET], "train.log")
    assert st.max_epoch == 0.0 and st.ranks  # read as a sample, epoch 0
    sample = next(iter(st.ranks.values())).samples[0]
    assert sample.data["epoch"] == 0.0 and sample.step is None  # the iteration restarts every epoch


def test_an_overflow_in_a_later_epoch_is_not_warm_up() -> None:
    """corpus d2-069: epoch 3 of 300, an apex overflow after the metric line."""
    top = engine_verdict([MOBY, APEX])[0]
    assert top.failure == "fp16_overflow_skips"
    assert top.severity == "warning"


def test_an_overflow_in_epoch_zero_stays_warm_up() -> None:
    """corpus num-034: the same logger in epoch 0: the scaler calibrating (info, never pages)."""
    found = engine_verdict([APEX.replace("65536.0", "131072.0"), SWIN_EPOCH0])
    assert [i.failure for i in found] == ["loss_scale_warmup"]
    assert found[0].severity == "info"


def test_a_garbled_min_loss_scale_abort_is_the_collapse() -> None:
    found = engine_verdict(FAIRSEQ_GARBLED)
    assert found[0].failure == "loss_scale_collapse"
    assert found[0].severity == "critical"
    # the bare FloatingPointError right below is the abort's own exit, not a crash of its own
    assert all(i.failure != "rank_exception" for i in found)


def test_other_wordings_of_the_min_scale_abort() -> None:
    for line in OTHER_WORDINGS:
        assert engine_verdict([line])[0].failure == "loss_scale_collapse", line


def test_a_bare_exception_far_below_a_cause_is_its_own_crash() -> None:
    """Only the traceback's own ending (at most a few lines below) is explained by the cause."""
    lines = [FAIRSEQ_GARBLED[1]] + [f"| epoch 001 | valid on 'valid' subset | ppl {n}.5" for n in range(8)] + [
        "Traceback (most recent call last):", '  File "train.py", line 3, in <module>', "KeyError: 'net'"]
    assert "rank_exception" in {i.failure for i in engine_verdict(lines)}


# YOLACT's MovingAverage drops a non-finite loss term with this warning; every report shows the
# loss diverging. https://github.com/dbolya/yolact/issues/318 (YOLACT's own progress line) and
# https://github.com/WisconsinAIVision/yolact_edge/issues/63 (a fork with another logger; its
# progress line is joined where the paste wrapped it, inside 'S: 53.717')
YOLACT = [
    "Warning: Moving average ignored a value of nan",
    "Warning: Moving average ignored a value of inf",
    "[  0]     810 || B: 269798101701.176 | C: 10486286282.783 | M: 36.434 | S: 131908262526481968836640768.000 | "
    "T: 131908262526482243714547712.000 || ETA: 1 day, 17:33:02 || timer: 1.974",
]
YOLACT_EDGE = [
    "[03/03 20:01:13 yolact.train]: eta: 2 days, 16:03:49  epoch: 0  iter: 2310  B: 4553196547360513069834586017497088.000  "
    "M: 7.165  C: 1973261171199612081599711933366272.000  S: 53.717  T: 6526457718560124863203921799151616.000  "
    "time: 1.050  data_time: 0.634  lr: 0.004000  max_mem: 8498M",
    "Warning: Moving average ignored a value of nan",
    "Warning: Moving average ignored a value of inf",
]


def test_a_meter_dropping_non_finite_loss_terms_is_a_nonfinite_loss() -> None:
    for lines in (YOLACT, YOLACT_EDGE):
        top = engine_verdict(lines)[0]
        assert top.failure == "nonfinite_loss"
        assert top.rank is None
        assert top.evidence[0].text.startswith("Warning: Moving average ignored")


def test_one_ranks_own_grad_norm_going_inf_names_it() -> None:
    """Per-rank lines (a pipe style, corpus holdout18 g18-009): from step 168 rank 1's grad norm is
    inf and its skip counter climbs while ranks 0 and 2 log finite norms at the same steps. A norm
    of all-reduced gradients would be the same everywhere: these are rank 1's own."""
    lines = []
    for step in range(144, 220, 12):
        for r in (2, 1, 0):
            bad = r == 1 and step >= 168
            lines.append(f"rank {r} | step {step:4d} | loss 1.79{r} | grad_norm {'inf' if bad else '0.102'} | "
                         f"skipped {12 * ((step - 156) // 12) if bad else 0}")
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank, top.step) == ("nonfinite_loss", 1, 168)


def test_non_finite_grad_norms_in_a_late_epoch_are_no_start_up_calibration() -> None:
    # mmdet's logger in epoch 12 (BEVFormer-style detection training, 2022): every logged iteration's
    # grad_norm is nan while the loss stays finite; a scaler calibrates in a run's first steps only
    lines = [f"2022-12-05 16:{28 + i}:38,593 - mmdet - INFO - Epoch [12][{700 + 50 * i}/3953]\tlr: 3.604e-06, "
             f"eta: 3:08:55, time: 3.157, data_time: 0.852, memory: 19582, loss_cls: 0.2271, loss: {4.35 + i / 10:.4f}, "
             "grad_norm: nan" for i in range(3)]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.severity) == ("nonfinite_loss", "critical")


def test_apexs_overflow_line_without_the_scaler_id() -> None:
    # a scaler written after apex's prints its line with no scaler number (corpus holdout22 g22b-026:
    # a Lightning job's own fp16 callback, "[fp16] step 6: Gradient overflow. Skipping step, loss scaler
    # reducing loss scale to 131072")
    from detectors.model import EventKind
    from tests.helpers import engine_events

    line = "[fp16] step 6: Gradient overflow. Skipping step, loss scaler reducing loss scale to 131072"
    (ev,) = [e for e in engine_events([line]) if e.kind is EventKind.MATCH]
    assert (ev.failure, ev.data.get("to_scale")) == ("fp16_overflow_skips", "131072")
