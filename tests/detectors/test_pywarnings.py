"""A Python warning (``warnings.showwarning``: ``path.py:58: FutureWarning: message``) quotes the
source line it points at on the next line, indented. That line is the program's code, no traceback
frame: a deprecation warning about ``torch.cuda.amp.autocast(args...)`` quoting ``with
autocast(dtype=torch.bfloat16):`` is no bf16 autocast that raised (a healthy committed wandb
output.log, corpus holdout33 h33b-002). The same code line inside a traceback still is."""

from __future__ import annotations

from tests.helpers import engine_verdict

_WARNING = ["/code/train/cllm_trainer.py:58: FutureWarning: `torch.cuda.amp.autocast(args...)` is deprecated. Please use "
            "`torch.amp.autocast('cuda', args...)` instead.", "  with autocast(dtype=torch.bfloat16):"]


def test_the_code_line_a_warning_quotes_is_no_failure() -> None:
    lines = [*_WARNING, "loss ar: 43.79 computed! performing backward pass...", *_WARNING,
             "loss global 17.56 computed! performing backward pass..."]
    assert [i for i in engine_verdict(lines) if i.severity in ("warning", "critical")] == []


def test_the_same_line_in_a_traceback_is_still_read() -> None:
    lines = ["Traceback (most recent call last):", '  File "/code/train/cllm_trainer.py", line 58, in compute_loss',
             "    with autocast(dtype=torch.bfloat16):"]
    assert any(i.failure == "bf16_unsupported_gpu" for i in engine_verdict(lines))
