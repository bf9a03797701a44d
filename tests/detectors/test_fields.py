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

NAN = math.nan

# (source, line, expected subset of the extracted fields)
LINES = [
    ("issue #12: python logging with a logger prefix and pipes",
     "2026-12-02 13:15:05,079 [rank0] INFO train: step 6 | loss 1.08 | grad_norm nan | loss_scale 1.0",
     {"step": 6, "loss": 1.08, "grad_norm": NAN, "loss_scale": 1.0}),
    ("issue #12: space-separated key value", "INFO train: rank 1 step 13 loss nan", {"step": 13, "loss": NAN}),
    ("issue #12: JSON with a bare NaN and an a/b counter",
     '{"loss": NaN, "grad_norm": 3.2, "global_step/max_steps": "8280/11043"}', {"loss": NAN, "step": 8280}),
    ("issue #12: lightning fabric / litgpt (corpus num-062)", "iter 1152 step 144: loss 11.4630, iter time: 1260.82ms",
     {"step": 1152, "loss": 11.463}),
    ("fairseq k=v progress (corpus num-041)",
     "| epoch 001:    370 / 614 loss=10.093, nll_loss=10.093, ppl=1092.29, wps=1334, ups=3.0, wpb=439, bsz=18, "
     "num_updates=371, lr=0.05, gnorm=0.788, clip=100%, oom=0",
     {"loss": 10.093, "step": 371, "grad_norm": 0.788, "lr": 0.05}),
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


def test_reduced_views_are_global() -> None:
    """HF dicts and fairseq summaries are the logging rank's view of the job: never local."""
    assert _samples("{'loss': 2.1, 'grad_norm': nan, 'epoch': 0.1}")[0].data["scope"] == "global"
    assert _samples("| epoch 027 | loss 6.343 | num_updates 10198 | loss_scale 0.000 |")[0].data["scope"] == "global"
    assert _samples("step 3 loss nan")[0].data["scope"] == "local"


def test_json_lines_with_a_rank_field_are_that_ranks() -> None:
    (ev,) = _samples('{"time": "2026-12-02T13:15:05Z", "level": "INFO", "rank": 2, "step": 6, "loss": NaN}')
    assert ev.rank == 2 and ev.data["scope"] == "local" and ev.step == 6
