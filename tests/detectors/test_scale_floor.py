"""Loss-scale collapse read from the scale alone, and the context that makes a scale mean it.

Three classes of real lines, each from several projects (the issue is named on each test):

- an unbroken run of halvings, with no step numbers on the lines (apex's legacy
  ``Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to N``), that falls
  ten or more times and ends at a scale of 8 or less: the scaler went through every scale
  fp16 training works at without one clean window (collapse), unlike a short burst from a
  scale it had settled at (overflow skips) or a start-up descent that stops high (warm-up);
- a logged ``loss_scale`` of exactly 1 from a framework that logs the scale only for fp16
  with a dynamic scaler (fairseq), unlike Megatron's constant ``loss scale: 1.0`` of bf16;
- a Lightning Trainer's device count in Hydra overrides (``trainer.devices=3``), the world
  size that lets the rank absent from every timeout report be named.
"""

from __future__ import annotations

import itertools

import pytest

from detectors.events import EventKind
from detectors.parse import default_parser
from detectors.parsers.base import FileState
from tests.helpers import engine_verdict

_APEX = "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {}"
_DS386 = ("[2020-09-09 01:52:{s:02d},086] [INFO] [stage2.py:1132:step] [deepscale] OVERFLOW! Rank 0 Skipping step. "
          "Attempted loss scale: {a}, reducing to {b}")


def _failures(lines: list[str]) -> list[str]:
    return [i.failure for i in engine_verdict(lines)]


def _halvings(start: float, end: float) -> list[float]:
    out, s = [], start
    while s > end:
        s /= 2
        out.append(s)
    return out


def test_unbroken_apex_run_down_to_two_is_a_collapse() -> None:
    """lucidrains/stylegan2-pytorch#100 (corpus h3-053): fourteen back-to-back halvings,
    16384 → 2.0, a tqdm bar at 22/150000 between them."""
    lines = [_APEX.format(v) for v in (16384.0, 8192.0, 4096.0)]
    lines.append("default<../imgs/>:   0%|          | 22/150000 [00:26<54:04:05,  1.30s/it]")
    lines += [_APEX.format(v) for v in _halvings(4096.0, 2.0)]
    assert _failures(lines)[0] == "loss_scale_collapse"


def test_short_burst_from_a_settled_scale_is_overflow_skips() -> None:
    """NVIDIA/apex#493 (corpus num-033): eight halvings 512 → 2.0 in epoch 15 after clean
    epochs, then validation goes on: a burst, not a collapse."""
    lines = ["Epoch: 14", "Validation loss 7890:  0.148049  ", "Epoch 14 time 30.577 lr 0.001", "Epoch: 15"]
    lines += [_APEX.format(v) for v in _halvings(512.0, 2.0)]
    lines += ["Validation loss 8416:  0.711720  "]
    assert _failures(lines)[0] == "fp16_overflow_skips"


def test_long_start_up_descent_that_stops_high_is_not_a_collapse() -> None:
    """deepspeedai/DeepSpeed#386 and zai-org/CogVideo#233: DeepSpeed's scaler starting at
    2^32 halves on each of its first steps; sixteen halvings down to 65536 are the search."""
    scales = [2.0 ** p for p in range(32, 15, -1)]
    lines = [_DS386.format(s=i, a=int(a), b=int(b)) for i, (a, b) in enumerate(itertools.pairwise(scales))]
    assert "loss_scale_collapse" not in _failures(lines)


def test_long_fall_below_one_stays_a_collapse() -> None:
    """NVIDIA/apex#318 (mobassir94): an apex run halving on and on, far below 1."""
    lines = [_APEX.format(v) for v in _halvings(8.165126103939127e-202 * 2, 9.967194951097568e-206)]
    assert _failures(lines)[0] == "loss_scale_collapse"


_FAIRSEQ_JSON = ('2021-01-05 21:2{m}:49 | INFO | train | {{"epoch": {e}, "train_loss": "{loss}", "train_nll_loss": "11.8", '
                 '"train_num_updates": "{u}", "train_lr": "7.31577e-06", "train_gnorm": "{g}", "train_loss_scale": "{s}", '
                 '"train_wall": "581"}}')


def test_fairseq_scale_stuck_at_one_is_a_collapse() -> None:
    """facebookresearch/fairseq#2493 (corpus h2-039): fairseq logs ``loss_scale`` only under
    --fp16 (trainer.py: ``if self.args.fp16: metrics.log_scalar("loss_scale", ...)``), its
    scaler starts at 128: a scale of 1 on every summary is seven halvings down and held."""
    lines = [_FAIRSEQ_JSON.format(m=3, e=6, loss="1275.11", u=179, g="1282.1", s="1"),
             "2021-01-05 21:23:49 | INFO | fairseq.trainer | begin training epoch 7",
             _FAIRSEQ_JSON.format(m=5, e=7, loss="1251.74", u=210, g="1423.09", s="1")]
    assert _failures(lines)[0] == "loss_scale_collapse"


def test_fairseq_scale_of_two_is_not_a_collapse() -> None:
    """facebookresearch/fairseq#940: ``loss_scale=2.000`` on every line of a run whose
    loss falls steadily: the scaler riding above its floor, nothing to report."""
    lines = [f"| epoch 001:    {n} / 1891 loss={loss}, nll_loss=10.8, ppl=1886.05, wps=52922, ups=0.5, wpb=104928, "
             f"bsz=5325, num_updates={n - 5}, lr=8.90889e-05, gnorm=1.5, clip=0%, oom=0, loss_scale=2.000, wall=882, "
             "train_wall=756" for n, loss in ((450, "11.521"), (500, "11.346"), (550, "11.186"), (600, "11.039"))]
    assert "loss_scale_collapse" not in _failures(lines)


def test_megatron_constant_scale_of_one_stays_quiet() -> None:
    """Megatron-LLM (corpus dist-033, a bf16 run): ``loss scale: 1.0`` is the constant
    scale of a run without loss scaling, not a scaler at its floor."""
    lines = [f" iteration      {i}/  250000 | consumed samples:       {i * 1024} | elapsed time per iteration (ms): "
             f"126995.3 | learning rate: 1.365E-05 | global batch size:  1024 | lm loss: 2.38264{i % 10}E+00 | "
             "loss scale: 1.0 | grad norm: 0.227 | number of skipped iterations:   0 | number of nan iterations:   0 |"
             for i in range(182, 186)]
    assert _failures(lines) == []


_DS_OPT = "[2023-05-02 10:01:17,212] [INFO] [logging.py:96:log_dist] [Rank 0] Creating fp16 optimizer with {}"


@pytest.mark.parametrize(("optimizer", "collapse"), [("dynamic loss scale", True), ("static loss scale: 1.0", False)])
def test_a_scale_of_one_in_an_fp16_job_is_the_floor_unless_the_scale_is_static(optimizer: str, collapse: bool) -> None:
    """Megatron-DeepSpeed prints DeepSpeed's optimizer line (deepspeed/runtime/engine.py:
    "Creating fp16 optimizer with dynamic loss scale" / "... with static loss scale: {scale}")
    and Megatron's iteration lines: with a dynamic scaler (minimum 1 by default) a scale of
    1.0 on every line is the floor; a static scale of 1 is a setting (preflight's concern)."""
    lines = [_DS_OPT.format(optimizer)]
    lines += [f" iteration      {i}/  250000 | consumed samples:       {i * 1024} | learning rate: 1.365E-05 | "
              f"global batch size:  1024 | lm loss: 2.38264{i % 10}E+00 | loss scale: 1.0 | grad norm: 0.227 | "
              "number of skipped iterations:   0 | number of nan iterations:   0 |" for i in range(182, 186)]
    assert ("loss_scale_collapse" in _failures(lines)) is collapse


def _context(line: str) -> dict[str, object]:
    fs = FileState("train.log", year=2026)
    return {e.data["key"]: e.data["value"] for e in default_parser().parse_line(line, 1, fs)
            if e.kind is EventKind.CONTEXT}


@pytest.mark.parametrize(("source", "line"), [
    ("facebookresearch/fairseq#2493", "2021-01-05 21:23:49 | INFO | fairseq.trainer | begin training epoch 7"),
    ("facebookresearch/fairseq#1895", "2020-03-23 11:41:18 | INFO | fairseq.trainer | NOTE: overflow detected, "
                                      "setting loss scale to: 0.00048828125"),
    ("facebookresearch/fairseq#1895", "2020-03-23 11:39:44 | INFO | train_inner | epoch 003:      5 / 356 loss=9.44, "
                                      "nll_loss=8.44, num_updates=700, gnorm=156.036, loss_scale=0, wall=9877"),
])
def test_fairseq_logger_names_the_framework(source: str, line: str) -> None:
    assert _context(line).get("framework") == "fairseq", source


@pytest.mark.parametrize(("source", "line", "world"), [
    ("IGNF/myria3d#123", "Error executing job with overrides: ['task.task_name=test', 'trainer.num_nodes=1', "
                         "'trainer.accelerator=gpu', 'trainer.devices=3']", 3),
    ("Lightning docs: devices per node times num_nodes", "python train.py trainer.devices=4 trainer.num_nodes=2", 8),
    ("a device list names no count", "python train.py 'trainer.devices=[0,1]' trainer.precision=bf16-mixed", None),
    ("'auto' names no count", "'trainer.devices=auto' 'trainer.num_nodes=1'", None),
])
def test_lightning_devices_override_is_the_world_size(source: str, line: str, world: int | None) -> None:
    assert _context(line).get("world_size") == world, source


def test_rank_absent_from_the_timeouts_of_a_three_device_lightning_job_hangs() -> None:
    """IGNF/myria3d#123 (corpus h3-086): ranks 1 and 2 time out on ALLREDUCE SeqNum=3 in a
    trainer.devices=3 job; rank 0 never reports: it is the one the others waited for."""
    wd = ("[E ProcessGroupNCCL.cpp:475] [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=3, "
          "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800008 milliseconds before timing out.")
    lines = [wd.format(r=1), wd.format(r=2),
             "Error executing job with overrides: ['task.task_name=test', 'trainer.num_nodes=1', "
             "'trainer.accelerator=gpu', 'trainer.devices=3']"]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("rank_hang", 0)


# insightface's arcface_torch: the fp16 grad scale as a metric column, halved once from 131072 (the
# scaler had grown past its 65536 start) deep into training (deepinsight/insightface#2043)
_ARCFACE = ("Training: 2023-07-11 07:{m:02d}:{s:02d},490-Speed 1110.54 samples/sec   Loss 10.{l}   LearningRate 0.000750   "
            "Epoch: 8   Global Step: {step}   Fp16 Grad Scale: {scale}   Required: 332 hours")


def _arcface(scales: list[int]) -> list[str]:
    return [_ARCFACE.format(m=26 + i // 3, s=(i * 18) % 60, l=5839 - 20 * i, step=182890 + 10 * i, scale=sc)
            for i, sc in enumerate(scales)]


def test_one_halving_in_a_scale_column_is_the_scaler_s_cycle() -> None:
    assert engine_verdict(_arcface([131072, 65536, 65536, 65536, 65536, 65536, 65536])) == []


def test_halvings_again_and_again_in_a_scale_column_are_reported() -> None:
    # the same column falling three times (values changed): overflows keep coming
    inc = engine_verdict(_arcface([131072, 65536, 32768, 32768, 16384, 16384, 8192]))
    assert [i.failure for i in inc if i.severity in ("warning", "critical")][:1] != []


def test_a_framework_s_own_overflow_message_mid_run_is_reported() -> None:
    # fairseq's NOTE line deep into fine-tuning (corpus num-030, facebookresearch/fairseq): one message
    lines = ["2020-08-01 12:39:16 | INFO | fairseq.trainer | NOTE: overflow detected, setting loss scale to: 1024.0",
             "2020-08-01 12:39:39 | INFO | train_inner | epoch 001:   3615 / 6547 loss=0.439, nll_loss=0.001, "
             "accuracy=87.9, wps=82565, ups=2.66, wpb=31075.5, bsz=64, num_updates=3600, lr=9e-06, gnorm=3.952, "
             "loss_scale=1399"]
    assert [i.failure for i in engine_verdict(lines)][:1] == ["fp16_overflow_skips"]


def test_a_skip_that_keeps_a_high_scale_is_hysteresis_not_a_floor() -> None:
    # bigscience-workshop/bigscience tr8b-104B chronicles (corpus holdout22 h22a-016): DeepSpeed of
    # 2022 printed its hysteresis step as "reducing to" the same scale, 2^20, then halved on every
    # step to 2^15: overflows the run pays for, far above any floor
    def ovf(t: str, a: str, b: str) -> str:
        return (f"[2022-01-19 {t},305] [INFO] [stage_1_and_2.py:1644:step] [deepscale] OVERFLOW! Rank 0 Skipping step. "
                f"Attempted loss scale: {a}, reducing to {b}")
    def it(n: int, scale: str) -> str:
        return (f" iteration    {n}/  159576 | consumed samples:      8126688 | elapsed time per iteration (ms): 423042.3 "
                f"| learning rate: 5.948E-05 | global batch size:  2048 | lm loss: 4.365822E+00 | loss scale: {scale} |")
    lines = [it(17060, "1048576.0"), it(17061, "1048576.0"), ovf("13:09:13", "1048576.0", "1048576.0"),
             it(17062, "1048576.0"), ovf("13:16:17", "1048576.0", "524288.0"), it(17063, "524288.0"),
             ovf("13:23:19", "524288.0", "262144.0"), it(17064, "262144.0"), ovf("13:30:23", "262144.0", "131072.0"),
             it(17065, "131072.0"), it(17066, "131072.0"), ovf("13:44:28", "131072.0", "65536.0"), it(17067, "65536.0"),
             ovf("13:51:30", "65536.0", "32768.0"), it(17068, "32768.0")]
    assert engine_verdict(lines)[0].failure == "fp16_overflow_skips"
    # the same words at a scale of 1 are a scaler at its floor
    assert engine_verdict([ovf("13:09:13", "1.0", "1.0"), ovf("13:16:17", "1.0", "1.0")])[0].failure == "loss_scale_collapse"


# fairseq's wav2vec 2.0 fine-tuning log committed with its example (corpus holdout24 h24a-012): nine
# start-up overflows take the scale from its initial 128 to 0.25, under fairseq's usual working
# range, then the scale grows back (8 in every later summary) with one isolated overflow hours on
_FAIRSEQ_NOTE = "[2020-12-19 17:{m:02d}:{s:02d},190][fairseq.trainer][INFO] - NOTE: overflow detected, setting loss scale to: {v}"
_FAIRSEQ_INNER = ('[2020-12-19 {h:02d}:{m:02d}:20,233][train_inner][INFO] - {{"epoch": {e}, "update": {e}.2, "loss": "{loss}", '
                  '"nll_loss": "18.66", "num_updates": "{u}", "lr": "1.0425e-06", "gnorm": "569.865", "loss_scale": "{sc}", '
                  '"train_wall": "1139", "wall": "1195"}}')


def _w2v2(regrows: bool) -> list[str]:
    lines = [_FAIRSEQ_NOTE.format(m=32, s=6 * i, v=128 / 2 ** (i + 1)) for i in range(9)]
    for e in range(1, 30):
        sc = "8" if regrows and e >= 5 else "0.25"
        lines.append(_FAIRSEQ_INNER.format(h=17 + e // 6, m=(e * 10) % 60, e=e, loss=f"{850 - 25 * e:.3f}", u=100 * e, sc=sc))
        if regrows and e == 15:
            lines.append(_FAIRSEQ_NOTE.format(m=50, s=1, v=4.0))
    return lines


def test_a_start_up_descent_below_the_floor_that_climbed_far_back_is_warm_up() -> None:
    found = engine_verdict(_w2v2(regrows=True))
    assert [i for i in found if i.severity in ("critical", "warning")] == []
    assert [i.failure for i in found] == ["loss_scale_warmup"]


def test_the_same_descent_that_stays_below_the_floor_is_a_collapse() -> None:
    assert engine_verdict(_w2v2(regrows=False))[0].failure == "loss_scale_collapse"


@pytest.mark.parametrize("message", [
    "FloatingPointError: DynamicScale: loss scale is already at its minimum (1.0) and gradients still overflow at step 85",
    "FloatingPointError: ScaleKeeper: loss scale pinned at min_scale=1 for 8 consecutive overflowing steps; gradients "
    "are not finite at any scale",
])
def test_a_hand_written_scalers_abort_at_its_minimum_is_the_collapse(message: str) -> None:
    # CPU torchrun jobs with their own fp16 scalers (corpus holdout24 g24d-012, g24c-011): every rank
    # raises the scaler's own abort after a run of skipped steps at scale 1
    lines = [f"step {s}: non-finite fp16 grads, update skipped (at_min), loss_scale=1" for s in range(78, 86)]
    for r in (0, 1, 2):
        lines += [f"[rank{r}]: Traceback (most recent call last):", f'[rank{r}]:   File "/home/user/job/train.py", line 88, in <module>',
                  f"[rank{r}]:     scaler.update(found_inf)", f"[rank{r}]: {message}"]
    assert engine_verdict(lines)[0].failure == "loss_scale_collapse"
