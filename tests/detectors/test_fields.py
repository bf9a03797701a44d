"""General field extraction: metric lines of many real shapes → canonical keys.

Each line is copied from a real log; the source is named (issue #12's examples, or the
real excerpt under tests/corpus/dev/ it comes from).
"""

from __future__ import annotations

import math

import pytest

from detectors.model import EventKind
from detectors.parse import default_parser
from detectors.parsers.base import FileState
from detectors.parsers.fields import extract
from tests.helpers import engine_verdict, fed_state

NAN = math.nan

# (source, line, expected subset of the extracted fields)
LINES = [
    ("issue #12: python logging with a logger prefix and pipes",
     "2026-12-02 13:15:05,079 [rank0] INFO train: step 6 | loss 1.08 | grad_norm nan | loss_scale 1.0",
     {"step": 6, "loss": 1.08, "grad_norm": NAN, "loss_scale": 1.0}),
    ("issue #12: space-separated key value", "INFO train: rank 1 step 13 loss nan", {"step": 13, "loss": NAN}),
    ("issue #12: JSON with a bare NaN and an a/b counter",
     '{"loss": NaN, "grad_norm": 3.2, "global_step/max_steps": "8280/11043"}', {"loss": NAN, "step": 8280}),
    ("a per-epoch step/total_step counter (luopeixiang/named_entity_recognition#24)",
     "Epoch 12, step/total_step: 5/60 8.33% Loss:5.1469", {"step": 5, "loss": 5.1469}),
    ("issue #12: lightning fabric / litgpt (corpus num-062)", "iter 1152 step 144: loss 11.4630, iter time: 1260.82ms",
     {"step": 1152, "loss": 11.463}),
    ("fairseq k=v progress (corpus num-041)",
     "| epoch 001:    370 / 614 loss=10.093, nll_loss=10.093, ppl=1092.29, wps=1334, ups=3.0, wpb=439, bsz=18, "
     "num_updates=371, lr=0.05, gnorm=0.788, clip=100%, oom=0",
     {"loss": 10.093, "step": 371, "grad_norm": 0.788, "lr": 0.05}),
    ("OpenNMT-py progress, cross-entropy as xent (corpus d3-033)",
     "Epoch  1, 12950/37527; acc:   4.50; ppl: 42885.19; xent:  10.67; 3594 src tok/s; 3678 tgt tok/s;   9897 s elapsed",
     {"loss": 10.67}),
    ("TF estimator logging hook under horovodrun (corpus h2-090)",
     "[1,0]<stderr>:INFO:tensorflow:cross_entropy = 8293909.5, learning_rate = 0.01386975, train_mean_iou = 0.035427254",
     {"loss": 8293909.5, "lr": 0.01386975}),
    ("MXNet Speedometer with CamelCase loss parts glued to their names (corpus holdout5 h5-082)",
     "Epoch[0] Batch [200]    Speed: 1.11 samples/sec Train-RPNAcc=0.797503,  RPNLogLoss=0.509807,    RPNL1Loss=nan,  "
     "RCNNAcc=0.669038,       RCNNLogLoss=3.597333,   RCNNL1Loss=0.004864,",
     {"loss": NAN}),
    ("HF Trainer dict (corpus num-063)", "{'loss': 0.1474, 'grad_norm': nan, 'learning_rate': 0.0001, 'epoch': 0.04}",
     {"loss": 0.1474, "grad_norm": NAN, "epoch": 0.04}),
    ("mmengine (corpus num-031)",
     "2024/05/10 15:46:31 - mmengine - INFO - Epoch(train)  [2][ 50/788]  lr: 2.0000e-03  eta: 4:14:00  time: 0.8167  "
     "data_time: 0.0169  memory: 15943  grad_norm: 3.4572  loss: 1.5043  loss_cls: 0.8781  loss_bbox: 0.6262",
     {"grad_norm": 3.4572, "loss": 1.5043}),
    ("mlx-lm (corpus num-029)", "Iter 50: Train loss 1.406, Learning Rate 7.000e-05, It/sec 0.942, Tokens/sec 369.778",
     {"step": 50, "loss": 1.406}),
    ("Megatron (corpus dist-033)",
     " iteration      182/  250000 | consumed samples:       186368 | elapsed time per iteration (ms): 126995.3 | "
     "learning rate: 1.365E-05 | global batch size:  1024 | lm loss: 2.382640E+00 | loss scale: 1.0 | grad norm: 0.227 |",
     {"step": 182, "loss": 2.38264, "loss_scale": 1.0, "grad_norm": 0.227}),
    ("plain print, aligned columns (corpus num-039)", "step=275  loss=5.82   gnorm=15.6", {"step": 275, "loss": 5.82, "grad_norm": 15.6}),
    ("OpenAI logger table row (corpus num-064)", "| loss          | nan       |", {"loss": NAN}),
    ("torch tensor repr", "loss: tensor(nan, device='cuda:0', grad_fn=<AddBackward0>)", {"loss": NAN}),
    ("a statement, not a table", "loss is nan, skipping batch", {"loss": NAN}),
    ("eval namespace is not the training loss", "step 5 | train/loss 2.1 | eval/loss 3.0 | val_loss 3.1",
     {"step": 5, "loss": 2.1, "eval_loss": 3.0}),
    # loss components and no total: their sum is the loss (a blow-up or NaN in any part shows)
    ("CAP-VSTNet components, no total (corpus ovf-004)",
     "Iteration: 00019940/00170000  content_loss:0.0000  lap_loss:1809156145152.0000  rec_loss:566731.1250  "
     "style_loss:26138923008.0000  loss_tmp:0.0000  loss_tmp_GT:0.0000",
     {"step": 19940, "loss": 1809156145152.0 + 566731.125 + 26138923008.0}),
    ("DFace: components before the total (corpus ovf-009)",
     "2019-01-23 14:32:38.544129 : Epoch: 2, Step: 2200, accuracy: 0.97, det loss: 0.7360723614692688, "
     "bbox loss: 51090.0234375, all_loss: 25545.748046875, lr:0.01",
     {"step": 2200, "loss": 25545.748046875}),
    ("mmdet components beside a NaN part", "Epoch [3][100/500] lr: 0.02, loss_rpn_cls: 0.05, loss_bbox: nan",
     {"loss": NAN}),
    ("LMOps PPO tot_loss among parts (corpus num-036)",
     "train | global iter:     28/  5000| tot_loss: 2442.9075 | rl_loss: 2440.2554 | pt_loss: 2.6521 | scale:  16.00",
     {"step": 28, "loss": 2442.9075}),
    ("WaveGlow underscore-joined key and value (corpus ovf-018)", "step_78620:\tloss_4191.683593750", {"loss": 4191.68359375}),
    ("WaveGlow negative NLL", "step_78540:\tloss_-4.065555573", {"loss": -4.065555573}),
    ("PaddleOCR pads with '{:x<6f}' (corpus holdout num-080)",
     "[2023/10/09 10:49:12] ppocr INFO: epoch: [986/2000], global_step: 737800, lr: 0.000516, CTCLoss: nanxxx, "
     "loss: nanxxx, avg_reader_cost: 0.00013 s", {"step": 737800, "loss": NAN}),
    ("OpenAI diffusion logs log2 of the scale (corpus holdout num-065)", "| lg_loss_scale | -0.821   |",
     {"loss_scale": 2 ** -0.821}),
    ("MosaicML Composer's console logger (metric names are TensorBoard-style paths)",
     "\t Train loss/train/total: 7.1000", {"loss": 7.1}),
    ("a TensorBoard tag used as the key", "Loss/train: nan", {"loss": NAN}),
    ("YOLOv3-TF: the loss's total, then its parts (corpus h2-055, h3-075)",
     "Epoch: 1, global_step: 200 | loss: total: nan, xy: 11.83, wh: 1146.74, conf: nan, class: nan | lr: 0.0004329",
     {"step": 200, "loss": NAN}),
    ("NeMo's bar: a 'loss=nan' placeholder beside the all-reduced loss (corpus h3-046)",
     "Epoch 0:   3%|▎         | 565/20101 [2:12:19<76:15:08, 14.05s/it, loss=nan, v_num=, val_loss_step=11.30, "
     "reduced_train_loss=3.910, gradient_norm=1.070, global_step=563.0]", {"loss": 3.91, "grad_norm": 1.07}),
    ("PaddleSlim prints the loss as a numpy array (corpus h4-020)",
     "2022-12-08 17:57:32,672-INFO: Total iter: 10, epoch: 0, batch: 10, loss: [nan]", {"step": 10, "loss": NAN}),
    ("rsl_rl: a component named 'value_function loss' is a value, not a setting (corpus h4-055)",
     "          Mean value_function loss: inf", {"loss": math.inf}),
    ("a bracketed key (corpus d2-022, loguru)",
     "2023-01-25 00:21:34.569 | INFO     | trainers.base_trainer:train_epochs:256 - [R0] | E6 iter[ 14/ 15] | "
     "[Loss] nan | [step]   104 |", {"loss": NAN, "step": 104}),
    ("WeNet's epoch summary (wenet/bin/train.py: logging.info('Epoch {} CV info cv_loss {}')): the held-out "
     "'cv' set's loss is an evaluation loss", "2021-03-02 10:11:12,345 INFO Epoch 3 CV info cv_loss 12.3456",
     {"eval_loss": 12.3456, "epoch": 3}),
    ("CAT's per-epoch 'mean_cv_loss' (thu-spmi/CAT#22, a grep of its training log)", "mean_cv_loss: 687.0884070194129",
     {"eval_loss": 687.0884070194129}),
    ("TensorFlowTTS's one-loss-per-line summary: 'loss' inside an underscore-joined name is a component, "
     "and a NaN component is a NaN loss (TensorSpeech/TensorFlowTTS#258)",
     "2020-09-10 11:52:14,449 (base_trainer:831) INFO: (Step: 95400) train_mel_loss_before = nan.",
     {"step": 95400, "loss": NAN}),
    ("ESTRNN's weighted loss term '1*L1_Charbonnier_loss_color' (zzh-tech/ESTRNN#43)",
     "[train] 1*L1_Charbonnier_loss_color : inf (best 0.0443), PSNR : inf (best inf)", {"loss": math.inf}),
    ("verl's console tracker: 'step:N - actor/<metric>:v - ...', the actor's namespace before the key "
     "(the shape verl users' analysis scripts parse, e.g. 'actor/pg_loss:-.02 - actor/grad_norm:nan')",
     "step:7 - timing_s/step:1200.5 - actor/lr:3e-06 - actor/pg_loss:-0.02 - actor/grad_norm:nan - "
     "critic/score/mean:0.9", {"step": 7, "grad_norm": NAN}),
]


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9)


@pytest.mark.parametrize(("source", "line", "want"), LINES, ids=[x[0] for x in LINES])
def test_extract(source: str, line: str, want: dict[str, float]) -> None:
    got = extract(line)
    for k, v in want.items():
        assert k in got, f"{source}: {k} missing from {got}"
        assert _same(got[k], v), f"{source}: {k}={got[k]}, want {v}"


@pytest.mark.parametrize("line", [
    "iter time: 812ms",  # a duration, not a step
    "loss_scale_window: 1000",  # a config key that merely starts like a metric
    "loss_cls=dict(type='CrossEntropyLoss', use_sigmoid=True, loss_weight=1.0)",  # an mmdet config dump
    "saved checkpoint to ckpt/epoch_3_loss_0.1234.pt",  # a file name, not a metric line
    "loss_0: 0.5, loss_1: 0.3",  # numbered losses: which is the training loss is unknowable
    "dev_loss: 3.2",  # an evaluation set's loss is not the training loss
    "Using loss function CrossEntropyLoss with label smoothing",
    "evaluation_strategy: steps",
])
def test_no_metric_where_there_is_none(line: str) -> None:
    assert not ({"loss", "grad_norm", "loss_scale"} & extract(line).keys()), extract(line)


def _samples(line: str) -> list:
    evs = default_parser().parse_line(line, 1, FileState("f.log", year=2026))
    return [e for e in evs if e.kind is EventKind.SAMPLE and e.data.get("scope") != "perf"]


def test_logger_prefix_keeps_step_and_rank() -> None:
    """The class of issue #12's first miss: the step survives a logger prefix, the rank tag is read."""
    (ev,) = _samples("2026-12-02 13:15:05,079 [rank2] INFO train: step 6 | loss 1.08 | grad_norm nan | loss_scale 1.0")
    assert ev.step == 6 and ev.rank == 2 and ev.rank_from == "prefix" and math.isnan(ev.data["grad_norm"])


def test_rank_named_in_a_metric_message() -> None:
    (ev,) = _samples("INFO train: rank 1 step 13 loss nan")
    assert ev.rank == 1 and ev.rank_from == "message" and ev.step == 13 and math.isnan(ev.data["loss"])


def test_tqdm_postfix_metrics_are_read() -> None:
    """fairseq's progress bar carries the loss scale in its postfix (corpus num-043)."""
    line = ("| epoch 053:  62%|▌| 188/305 [08:00<04:04,  2.09s/it, loss=11.469, nll_loss=10.892, ppl=1900.69, "
            "num_updates=15945, lr=0.000500846, gnorm=0.282, loss_scale=0.016]")
    (ev,) = _samples(line)
    assert ev.data["loss_scale"] == 0.016 and ev.step == 15945


def test_a_bars_postfix_behind_a_launchers_prefix_is_that_ranks() -> None:
    """torchrun's ``--tee``/``--redirects`` prefix before each worker's tqdm bar (``[default1]:``,
    ``[rank1]:``): the bar's postfix metrics are that worker's, as the text glued after a bar is
    (corpus holdout30 g30-005, a Lightning-style bar from each of two workers)."""
    line = "[default1]:Epoch 0:  42%|███████▌          | 21/50 [00:00<00:00, 69.87it/s, loss=nan, scale=524288]"
    (ev,) = _samples(line)
    assert (ev.local_rank, math.isnan(ev.data["loss"]), ev.data["loss_scale"]) == (1, True, 524288)
    (ev,) = _samples(line.replace("[default1]:", "[rank3]:"))
    assert ev.rank == 3


def test_a_camel_case_term_after_the_word_loss_is_a_part_of_the_loss() -> None:
    """A JAX/equinox trainer's outer-step line (``LossTrajs: nan``, a committed nohup.log of ddrous/ncflow,
    corpus holdout33 h33a-012): the loss, and its NaN; ``LossScale`` stays the loss scale."""
    (ev,) = _samples("    Outer Step:   140      LossTrajs: nan     ContextsNorm: nan     ValIndCrit: nan")
    assert ev.step == 140 and math.isnan(ev.data["loss"])
    (ev,) = _samples("    Outer Step:   130      LossTrajs: 1.34405100     ContextsNorm: 0.03500433")
    assert ev.data["loss"] == 1.344051
    assert all("loss" not in e.data for e in _samples("step 5 LossScale: 1024"))


def test_a_norm_qualified_as_the_one_before_clipping_is_the_grad_norm() -> None:
    """``grad_norm (pre-clip)     8.474``: the norm before clipping, the one that shows a blow-up
    clipping hides (corpus holdout33 g33e-013)."""
    (ev,) = _samples("step  650 | loss 10.1955 | grad_norm (pre-clip)      143.582 | max      280.107 | clip_coef 0.0070")
    assert (ev.step, ev.data["grad_norm"]) == (650, 143.582)


def test_reduced_views_are_global() -> None:
    """HF dicts and fairseq summaries are the logging rank's view of the job: never local."""
    assert _samples("{'loss': 2.1, 'grad_norm': nan, 'epoch': 0.1}")[0].data["scope"] == "global"
    assert _samples("| epoch 027 | loss 6.343 | num_updates 10198 | loss_scale 0.000 |")[0].data["scope"] == "global"
    assert _samples("step 3 loss nan")[0].data["scope"] == "local"


def test_json_lines_with_a_rank_field_are_that_ranks() -> None:
    (ev,) = _samples('{"time": "2026-12-02T13:15:05Z", "level": "INFO", "rank": 2, "step": 6, "loss": NaN}')
    assert ev.rank == 2 and ev.data["scope"] == "local" and ev.step == 6


def test_divergence_after_convergence_is_a_spike() -> None:
    """corpus num-039: the loss converges to 1.43, then walks back toward its random baseline."""
    from detectors.correlate import incidents
    from detectors.detect import JobState

    st = JobState(job="t")
    fs = FileState("train.log", year=2026)
    lines = ["step=1    loss=15.50  gnorm=42.7", "step=55   loss=13.00  gnorm=14.0", "step=110  loss=3.80   gnorm=24.4",
             "step=165  loss=2.39   gnorm=7.1", "step=220  loss=1.43   gnorm=7.7", "step=275  loss=5.82   gnorm=15.6",
             "step=330  loss=7.05   gnorm=15.3", "step=385  loss=10.03  gnorm=70.7"]
    for i, line in enumerate(lines, 1):
        for ev in default_parser().parse_line(line, i, fs):
            st.add(ev)
    found = {i.failure: i for i in incidents(st)}
    assert "loss_spike" in found and found["loss_spike"].step == 385
    # a noisy but converging run is not a divergence
    st = JobState(job="t")
    for i, v in enumerate([9.0, 6.5, 4.0, 3.1, 2.9, 3.4, 2.7, 3.0, 2.6, 2.8], 1):
        for ev in default_parser().parse_line(f"step={i * 10} loss={v}", i, fs):
            st.add(ev)
    assert not [i for i in incidents(st) if i.failure == "loss_spike"]


def test_glued_tqdm_updates_are_each_a_sample() -> None:
    """A paste lost tqdm's \r: the updates of the description are glued into one line
    (EfficientDet, corpus ovf-019); each update is its own step."""
    line = ("Step: 895. Epoch: 0/500. Iteration: 896/897. Cls loss: 0.31577. Reg loss: 0.06190. Total loss: 0.37767: "
            "100%|▉| Step: 895. Epoch: 0/500. Iteration: 896/897. Cls loss: 0.31577. Reg loss: 0.06190. Total loss: "
            "0.37767: 100%|▉| Step: 896. Epoch: 0/500. Iteration: 897/897. Cls loss: 0.34984. Reg loss: 0.07105. "
            "Total loss: 0.42089: 100%|█| 897/897 [17:16<00:00,  1.16s/it]")
    got = [(ev.step, ev.data["loss"]) for ev in _samples(line)]
    assert got == [(895, 0.37767), (896, 0.42089)]
    # a counter glued to the next update ("1/Step: 898") still starts a record; the cut total
    # leaves the parts, whose sum is the loss
    line = ("Step: 897. Epoch: 1/500. Iteration: 1/897. Cls loss: 0.34505. Reg loss: 0.16021. Total loss: 0.50526:"
            "   0%| | 1/Step: 898. Epoch: 1/500. Iteration: 2/897. Cls loss: 1.12159. Reg loss: 2.12988. T")
    got = [(ev.step, round(ev.data["loss"], 5)) for ev in _samples(line)]
    assert got == [(897, 0.50526), (898, round(1.12159 + 2.12988, 5))]


def test_a_repeated_step_key_without_metrics_is_one_record() -> None:
    assert extract("step 5 loss 2.0 (best at step 3)") == {"step": 5.0, "loss": 2.0}


def _incidents(lines: list[str]) -> dict[str, object]:
    from detectors.correlate import incidents

    return {i.failure: i for i in incidents(fed_state(lines, "train.log"))}


def test_negative_loss_spike() -> None:
    """An NLL sits below zero (WaveGlow, corpus ovf-016/018): the spike is judged on the rise."""
    base = [-4.07, -4.49, -4.45, -4.32, -4.41, -4.38]
    found = _incidents([f"step {i * 20}: loss {v}" for i, v in enumerate([*base, 4191.68, -2.41], 1)])
    assert found["loss_spike"].step == 140
    # drifting from -5.4 to -4.7 is noise of an NLL, not a spike
    found = _incidents([f"step {i}: loss {v}" for i, v in enumerate([-5.48, -5.35, -5.30, -5.46, -5.55, -4.72, -5.18], 1)])
    assert "loss_spike" not in found


def test_a_loss_a_million_times_its_level_is_a_spike_either_way() -> None:
    """Keras's running average from 8.28 to -2.0e17 after one batch (corpus d4-034): one earlier
    sample is history enough; an NLL improving from -4.3 to -5.1 is not a blow-up."""
    bar = "{n}/511502 [==>...........................] - ETA: 63s - loss: {v}"
    found = _incidents([bar.format(n=66496, v="8.2800"), bar.format(n=66528, v="-204433556137039776.0000")])
    assert found["loss_spike"].step == 66528
    found = _incidents([f"step {i}: loss {v}" for i, v in enumerate([-4.3, -4.6, -5.1], 1)])
    assert "loss_spike" not in found


def test_a_jump_off_a_plateau_is_a_spike() -> None:
    """Keras epoch averages flat at 0.047 for five epochs, then 0.061 and 0.096 (corpus ovf-012)."""
    vals = [0.0475, 0.0474, 0.0473, 0.0471, 0.0472, 0.0612, 0.0958]
    found = _incidents([f"10954/10954 [==============================] - 658s - loss: {v}" for v in vals])
    assert "loss_spike" in found
    # the same rise on a noisy per-step series is not
    vals = [0.061, 0.040, 0.052, 0.047, 0.035, 0.0612, 0.058]
    found = _incidents([f"10954/10954 [==============================] - 658s - loss: {v}" for v in vals])
    assert "loss_spike" not in found


def test_bare_step_and_loss_columns() -> None:
    """``print(step, loss.item())``: yanmtt (corpus num-068) and WaveGlow (corpus ovf-016)."""
    found = _incidents(["76950 2.596339", "76960 2.735384", "76970 2.6265104", "76980 nan", "76990 nan"])
    assert found["nonfinite_loss"].step == 76980
    rows = [f"{123880 + i}: {v}" for i, v in enumerate([-5.44, -5.49, -5.27, -5.31, -5.55, -4.85, 40490.18, -3.48])]
    spike = _incidents(rows)["loss_spike"]
    assert spike.step == 123886 and spike.rank is None  # "123880:" is a step, not a Slurm label


def test_bare_step_and_several_loss_columns() -> None:
    """A GAN's ``print(f"{i}: {d_loss}  {g_loss}")`` (corpus holdout18 h18a-002: "0: inf  nan",
    then "10: nan nan"): the row is NaN whichever column went non-finite."""
    found = _incidents(["0: 0.6931  0.6914", "10: 0.6802  0.7102", "20: 0.6754  nan", "30: nan nan"])
    assert found["nonfinite_loss"].step == 20 and found["nonfinite_loss"].rank is None
    assert not _incidents(["0: 0.6931  0.6914", "10: 0.6802  0.7102", "20: 0.6754  0.7213"])


def test_bare_columns_need_a_sequence_and_a_gross_change() -> None:
    # one row alone is any two numbers
    assert not _samples("76980 nan")
    # an accuracy printed the same way rises 9x in training: not a spike of an unkeyed column
    assert "loss_spike" not in _incidents([f"{e} {a}" for e, a in enumerate([0.1, 0.3, 0.5, 0.7, 0.85, 0.9], 1)])


def test_the_iteration_between_key_and_value() -> None:
    """NVIDIA Tacotron2/WaveGlow print ``Train loss {iteration} {loss} Grad Norm {norm}``."""
    assert extract("Train loss 12002 4.972964 Grad Norm inf 1.78s/it") == {
        "step": 12002.0, "loss": 4.972964, "grad_norm": math.inf}
    assert extract("Step 100 0.53 s/it loss 2.0") == {"step": 100.0, "loss": 2.0}


def test_rows_of_a_key_value_table_are_samples() -> None:
    """OpenAI's logger prints one key per row: a row is explicit about its key."""
    (ev,) = _samples("| lg_loss_scale | -0.821   |")
    assert 0.56 < ev.data["loss_scale"] < 0.57
    assert _samples("| loss          | 5.99e+04 |")[0].data["loss"] == 5.99e4
    assert not _samples("loss scale 2")  # a bare phrase, not a table row


def test_a_key_after_the_logger_name_is_not_a_logger_name() -> None:
    """torchtitan (``root - INFO - step:  10  loss:  9.8765``): one logger name per header,
    and "step:" followed by its value is a key, not a second name."""
    (ev,) = _samples("[rank0]:2024-05-01 10:00:00,000 - root - INFO - step:  10  loss:  9.8765  "
                     "memory: 30.00GiB(37.80%)  wps: 1,234  mfu: 30.00%")
    assert (ev.step, ev.data["loss"], ev.rank) == (10, 9.8765, 0)
    (ev,) = _samples("2026-12-02 13:15:05,079 [rank0] INFO train: step 6 | loss 1.08")
    assert ev.step == 6


def test_lightning_step_suffixed_loss_in_the_bar_postfix() -> None:
    """Lightning's ``self.log("train_loss", on_step=True, on_epoch=True)`` shows
    ``train_loss_step`` and ``train_loss_epoch`` in the progress bar's postfix."""
    (ev,) = _samples("Epoch 2: 45%|████▌ | 450/1000 [01:00<01:13, 7.50it/s, v_num=3, train_loss_step=nan, "
                     "train_loss_epoch=0.412]")
    assert math.isnan(ev.data["loss"])


@pytest.mark.parametrize(("line", "want"), [
    # loguru with colours (a TTY, or colorize=True) captured to a file
    ("\x1b[32m2024-05-01 10:00:00.123\x1b[0m | \x1b[1mINFO    \x1b[0m | \x1b[36mtrain\x1b[0m:\x1b[36mloop\x1b[0m:"
     "\x1b[36m42\x1b[0m - \x1b[1mstep 5 loss nan\x1b[0m", (None, 5)),
    ("\x1b[2m[rank1]\x1b[0m step 13 loss=\x1b[31mnan\x1b[0m", (1, 13)),
    ("[rank2] step 7 loss nan", (2, 7)),  # a user's own "[rank2] " tag, no colon
    # ESC shown as "^[" by the terminal the log was copied from (corpus d2-069)
    ("^[[32m[2023-10-24 17:33:21 moby]^[[0m^[[33m(moby_main.py 177)^[[0m: INFO step 9 loss nan", (None, 9)),
])
def test_terminal_colours_and_plain_rank_tags(line: str, want: tuple[int | None, int]) -> None:
    (ev,) = _samples(line)
    assert (ev.rank, ev.step) == want and math.isnan(ev.data["loss"])


def test_colour_codes_do_not_hide_a_line_from_the_scan() -> None:
    """The scan sees the chunk with escapes removed: ``loss=\x1b[31mnan`` is a candidate."""
    from detectors.model import EventKind as _K

    fs = FileState("f.log", year=2026)
    evs = default_parser().parse_chunk(b"noise\n\x1b[1mstep 3\x1b[0m loss=\x1b[31mnan\x1b[0m\n", 1, fs)
    (ev,) = [e for e in evs if e.kind is _K.SAMPLE]
    assert ev.source.line == 2 and "\x1b" not in ev.source.text


def test_a_loss_a_hundred_times_the_runs_best_is_a_spike() -> None:
    """MeshMAE (corpus d2-050): 'Loss: 39307117.63 | Best Loss: 2.271230' in one epoch summary."""
    found = _incidents(["Epoch 2 Pretrain | Loss: 39307117.633155 | Best Loss: 2.271230 | Best Epoch: 0 | Time: 2.4h"])
    assert found["loss_spike"].data["baseline"] == 2.27123
    assert "loss_spike" not in _incidents(["Epoch 2 Pretrain | Loss: 2.9 | Best Loss: 2.271230 | Best Epoch: 0"])


def test_the_fast_pattern_reads_every_real_line_like_the_full_one() -> None:
    """``_FIELD_NO_PARTS`` skips the loss-component alternative when no "loss" on the line
    can be a component; on every line of the real corpora both read the same records."""
    from pathlib import Path

    from detectors.parsers import fields

    root = Path(__file__).resolve().parents[1] / "corpus"
    shared = Path(__file__).resolve().parents[2].parent / "shared" / "real-logs"
    checked = 0
    for log in [*root.glob("*/*/combined.log"), *shared.glob("*/combined.log")]:
        for line in log.read_text(errors="replace").splitlines():
            if "oss" not in line and "OSS" not in line:
                continue
            for seg in line.split("\r"):
                full = fields._records(seg, fields._FIELD)
                assert fields.extract_records(seg) == full or _nan_equal(fields.extract_records(seg), full), seg
                checked += 1
    assert checked > 1000


def _nan_equal(a: list[dict[str, float]], b: list[dict[str, float]]) -> bool:
    return len(a) == len(b) and all(x.keys() == y.keys() and all(_same(x[k], y[k]) for k in x) for x, y in zip(a, b, strict=True))


def test_a_lone_scale_under_a_quoted_key_is_a_sample() -> None:
    """Pretty-printed JSON history (audiocraft, corpus d2-071): one key per line."""
    assert _samples('      "grad_scale": 32784.3828125,')[0].data["loss_scale"] == 32784.3828125
    assert not _samples("Attempted loss scale: 65536")  # a phrase in a message is not a metric


def test_a_line_with_only_loss_components_reaches_the_parser() -> None:
    """mmdet v1 (corpus holdout ovf-010): the line is cut before its total; the scan must still
    pass 'loss_rpn_cls: 156.2920' on to the parser."""
    from detectors.model import EventKind as _K

    line = ("2019-07-30 10:08:08,752 - INFO - Epoch [1][900/58633]\tlr: 0.02000, eta: 3 days, 0:22:50, time: 0.361, "
            "data_time: 0.004, memory: 3791, loss_rpn_cls: 156.2920, loss_r\n")
    evs = default_parser().parse_chunk(line.encode(), 1, FileState("f.log", year=2026))
    (ev,) = [e for e in evs if e.kind is _K.SAMPLE and "loss" in e.data]
    assert ev.data["loss"] == 156.292


def test_per_batch_noise_is_not_a_divergence() -> None:
    """NVIDIA DLE SQuAD fine-tuning logs single-batch losses jumping 0.1 ↔ 2.4: no trend to diverge from."""
    vals = [1.454, 0.805, 1.799, 0.098, 0.401, 1.250, 2.394, 1.598, 0.691]
    rows = [f"DLL 2022-04-05 02:19:23.315333 - Training Epoch: 0 Training Iteration: {1151 + 50 * i}  step_loss : {v}"
            for i, v in enumerate(vals)]
    assert "loss_spike" not in _incidents(rows)


def test_a_percentage_is_progress_not_a_value() -> None:
    assert extract("Train step: 45% loss: 0.3") == {"loss": 0.3}
    assert extract("Steps:   0%|▏          | 16/6000 [00:55<4:54:46,  2.96s/it, lr=0, step_loss=0.3]") == {"lr": 0.0, "loss": 0.3}


def test_a_csv_metrics_file_is_read_by_its_header() -> None:
    """Lightning's CSVLogger metrics.csv (recorded job golden/nan-pltrainer_csv-logdir): a header row,
    then rows of numbers, cells empty where a metric was not logged."""
    rows = ["epoch,grad_norm,step,train_loss,val_loss", "0,0.85,0,0.2005,", "0,0.87,1,0.0796,", "0,,1,,0.31",
            "0,1.47,2,0.3953,", "0,nan,5,0.4752,", "0,nan,6,nan,"]
    found = _incidents(rows)
    assert (found["nonfinite_loss"].step, found["nonfinite_loss"].rank) == (5, None)
    # a CSV of other numbers (no metric column) is not read
    assert _incidents(["id,width,height", "1,640,480", "2,nan,480"]) == {}


def test_the_first_steps_of_a_run_are_no_baseline_for_a_loss_spike() -> None:
    """A raw per-batch loss in the first steps (Lightning's bar postfix, golden healthy_bf16-pltrainer-console):
    0.200, 0.0798, 0.395, 0.634 is a random model, not a spike; 21944 → 319374 at iteration 1
    (detectron2, corpus holdout5 h5-080) still is."""
    bar = "Epoch 0:  {p}%|██        | {n}/20 [00:00<00:00, 39.26it/s, train_loss={v}, grad_norm=1.060]"
    vals = [0.200, 0.200, 0.0798, 0.0798, 0.395, 0.395, 0.634, 0.634, 0.349]
    assert "loss_spike" not in _incidents([bar.format(p=5 * i, n=i // 2 + 1, v=v) for i, v in enumerate(vals)])
    d2 = "[07/28 14:14:38 d2.utils.events]:  iter: {i}  total_loss: {v}  lr: 0.000001  max_mem: 2372M"
    assert "loss_spike" in _incidents([d2.format(i=0, v=21944.058), d2.format(i=1, v=319373.750)])


def test_mxnet_metric_names_glued_or_behind_a_hyphenated_namespace() -> None:
    """MXNet's Speedometer / fit() print ``Train-<metric>=value`` and GluonCV's detectors a glued
    ``CrossEntropy=``; the namespace is a hyphen away from the key."""
    # https://github.com/NervanaSystems/ngraph-mxnet/pull/378 (MXNet's SSD example)
    got = extract("INFO:root:Epoch[0] Batch [10]\tSpeed: 3.22 samples/sec\tCrossEntropy=4.200497\tSmoothL1=0.816728")
    assert got["loss"] == 4.200497
    # https://github.com/miraclewkf/MXNet-Deep-Learning-in-Action/issues/5
    assert math.isnan(extract("Train-cross-entropy=nan")["loss"])
    # https://github.com/TuSimple/mx-maskrcnn/issues/137: loss components glued to their name
    assert math.isnan(extract("Train-RCNNL1Loss=nan     Train-MaskLogLoss=nan")["loss"])
    assert extract("Validation-cross-entropy=2.31") == {"eval_loss": 2.31}


def test_a_dict_printed_behind_a_bar_is_logged_at_the_bars_step() -> None:
    # HF Trainer's console in vistec-AI/thai2transformers docs/5a_finetune_sequence_classificaition.md (apex fp16): the dict has no
    # step of its own; the bar's counter right before it is the step it was logged at, so three
    # overflows at steps 893-988 of 1352 are mid-run, not the first steps of a run
    line = ("    64%|██████▍   | 870/1352 [05:29<01:08,  7.08it/s]{'loss': 0.676788330078125, "
            "'learning_rate': 1.1891447368421053e-05, 'epoch': 0.643491124260355}")
    st = fed_state([line])
    assert [(s.step, s.data["loss"]) for rs in st.ranks.values() for s in rs.samples] == [(870, 0.676788330078125)]
    # a bar with the dict on a line of its own keeps no step from an earlier bar
    st = fed_state(["    64%|██████▍   | 870/1352 [05:29<01:08,  7.08it/s]",
                    "{'loss': 0.676788330078125, 'learning_rate': 1.1891447368421053e-05, 'epoch': 0.643491124260355}"])
    assert [s.step for rs in st.ranks.values() for s in rs.samples] == [None]


def test_a_table_row_with_a_measure_in_a_column_the_table_does_not_know() -> None:
    # a CPU torchrun job of ours printing a metrics table (corpus g19-028): its "elapsed" column holds
    # "0.2s", which made every row "not a row of numbers"; warnings printed between header and rows
    lines = ["opt_step | micro |     loss |      ppl |       lr | elapsed",
             "------------------------------------------------------------",
             "/job/train.py:18: UserWarning: To copy construct from a tensor, it is recommended to use sourceTensor.clone()",
             "  lab = torch.tensor(y)  # legacy copy",
             "       5 |    15 |   1.6560 |    5.238 |   0.0200 |    0.2s",
             "      10 |    30 |   1.5201 |    4.573 |   0.0200 |  812ms"]
    st = fed_state(lines)
    assert [s.data["loss"] for rs in st.ranks.values() for s in rs.samples] == [1.656, 1.5201]
    # a text cell there is still another text's row
    st = fed_state([*lines[:2], "       5 |    15 |   1.6560 |    5.238 |   0.0200 |    slow"])
    assert not [s for rs in st.ranks.values() for s in rs.samples]


def test_bare_columns_that_rise_fifty_fold_are_a_spike() -> None:
    """Headerless rows ``step smoothed_loss lr gnorm`` (a CPU torchrun job, corpus holdout24 g24-008):
    the loss column climbs 19 → 315 → 1497 after the lr column jumps 0.002 → 2.0: 77 times its level,
    a divergence whatever the column is; a 9x rise (an accuracy) is still none."""
    rows = [f"{s} {23.7 - s / 40:.4f} 0.0020 {5 + s % 9}.12" for s in range(6, 150, 6)]
    rows += [f"{s} {v:.4f} 2.0000 13210274.00" for s, v in ((156, 315.0), (162, 601.9), (168, 880.4), (174, 1150.6), (180, 1496.9))]
    assert "loss_spike" in _incidents(rows)


def test_demucs_summary_grad_is_the_gradient_norm() -> None:
    # demucs' solver (and SCNet built on it, corpus holdout24 h24a-013) logs its epoch summary with
    # the gradient norm as "Grad"
    got = extract("Train Summary | Epoch 3 | Loss=0.1673 | Grad=inf")
    assert got["loss"] == 0.1673 and math.isinf(got["grad_norm"])
    lines = [f"2024-07-26 17:06:38,010 - INFO - Train Summary | Epoch {e} | Loss={v} | Grad={g}"
             for e, v, g in ((1, 0.2242, 9164.2812), (2, 0.1857, 8811.5), (3, 0.1673, "inf"))]
    top = engine_verdict(lines)[0]
    assert top.failure == "nonfinite_loss"


def test_an_aligned_header_keeps_columns_two_spaces_apart_apart() -> None:
    # a fixed-width table whose header prints "loss" and "scale" two or more spaces apart (corpus
    # holdout25 g25d-026): two columns, not the "loss scale" column; "skip skipped_total" one space
    # apart name no column together, so they stay two columns as well
    lines = [" step       loss     scale  skip skipped_total"]
    lines += [f"{s:5d} {2.5 - s / 100:10.3f} {1024.0:9.1f} {0:5d} {0:13d}" for s in range(5, 60, 5)]
    lines.append(f"{60:5d} {'nan':>10} {1024.0:9.1f} {0:5d} {0:13d}")
    top = engine_verdict(lines)[0]
    assert (top.failure, top.step) == ("nonfinite_loss", 60)


def test_a_smoothed_loss_is_the_loss_only_where_no_raw_one_is_printed() -> None:
    assert extract("step 20 | ema_loss 15.4366 | lr 2.0e-03")["loss"] == 15.4366
    assert extract("step=20 loss=2.31 running_loss=2.65")["loss"] == 2.31
    # a table whose only loss column is its EMA (corpus holdout25 g25d-008): the lr raised a
    # thousandfold at step 150, the EMA climbs from 3.8 to 108
    lines = ["  step |   ema_loss |        lr | samples/s | elapsed",
             "--------------------------------------------------------"]
    emas = [16.08, 15.44, 14.97, 14.17, 13.17, 11.9, 10.1, 8.2, 6.5, 5.3, 4.5, 4.1, 3.9, 3.8, 3.78,
            60.2, 92.4, 108.1, 104.9, 101.3]
    lines += [f"{10 * (i + 1):6d} | {v:10.4f} | {2e-3 if i < 15 else 2.0:9.2e} |    4047.6 |    0.2s" for i, v in enumerate(emas)]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.step) == ("loss_spike", 160)
