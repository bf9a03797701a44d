"""A NaN evaluation loss is a model gone non-finite (its weights, or its fp16 forward), even
when the training loss line shows nothing wrong: HF Trainer's final metrics block and its
trainer_state.json. Real lines from jzhang38/TinyLlama#153 and TencentGameMate/chinese_speech_pretrain#22."""

from __future__ import annotations

from tests.helpers import engine_verdict

_TINYLLAMA = [
    "***** train metrics *****",
    "  epoch                    =        5.0",
    "  train_loss               =     0.0063",
    "  train_runtime            = 2:05:47.06",
    "***** eval metrics *****",
    "  epoch                   =        5.0",
    "  eval_loss               =        nan",
    "  eval_runtime            = 0:00:25.70",
]
_STATE = [
    '      "epoch": 6.33,',
    '      "learning_rate": 3.49e-05,',
    '      "loss": 14.8414,',
    '      "step": 500',
    "    },",
    "    {",
    '      "epoch": 6.33,',
    '      "eval_loss": NaN,',
    '      "eval_runtime": 36.5218,',
]


def test_a_nan_eval_loss_in_the_final_metrics_is_a_nan() -> None:
    assert [i.failure for i in engine_verdict(_TINYLLAMA)][:1] == ["nonfinite_loss"]


def test_a_nan_eval_loss_in_trainer_state_is_a_nan() -> None:
    assert [i.failure for i in engine_verdict(_STATE)][:1] == ["nonfinite_loss"]


def test_a_finite_eval_loss_is_quiet() -> None:
    assert engine_verdict([x.replace("nan", "1.2345") for x in _TINYLLAMA]) == []
