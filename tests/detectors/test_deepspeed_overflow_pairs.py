"""DeepSpeed's fp16 optimizers (``deepspeed/runtime/fp16/fused_optimizer.py``, ``_update_scale``)
log an overflow as two records: ``"\\nGrad overflow on iteration N"`` (the message starts with a
newline, so it lands on the line below the logger's header) and ``Reducing dynamic loss scale from
X to Y``; ``log_dist`` adds ``[Rank 0] Overflow detected. Skipping step. Attempted loss scale: X,
reducing to Y``. The three are one scale move. The shapes are DeepSpeed-Chat's committed step-1
and step-3 training logs (corpus holdout26 h26a-015, h26a-012, gouqi666/deep-speed-chat).

- A start-up search (65536 → 4096 in the first iterations), then the scaler's normal cycle (it
  grows every ``loss_scale_window`` clean iterations and halves on the next overflow), is no
  incident above info.
- The loss window of the first steps is no fp16 instability for skips that were that search: a
  PPO actor loss does not trend down, and the scaler held the weights only while calibrating.
"""

from __future__ import annotations

from tests.helpers import engine_verdict

_HDR = "[2023-04-21 14:53:{sec:02d},262] [INFO] [fused_optimizer.py:{ln}:_update_scale] "


def _overflow(it: int, frm: float, sec: int, ranks: int = 1) -> list[str]:
    out: list[str] = []
    for _ in range(ranks):
        out += [_HDR.format(sec=sec, ln=362), f"Grad overflow on iteration {it}"]
    out += [_HDR.format(sec=sec, ln=363) + f"Reducing dynamic loss scale from {frm:g} to {frm / 2}"] * ranks
    out.append(f"[2023-04-21 14:53:{sec:02d},262] [INFO] [logging.py:96:log_dist] [Rank 0] Overflow detected. "
               f"Skipping step. Attempted loss scale: {frm:g}, reducing to {frm / 2}")
    return out


def _step(step: int, skipped: int, sec: int) -> str:
    return (f"[2023-04-21 14:54:{sec:02d},989] [INFO] [logging.py:96:log_dist] [Rank 0] step={step}, "
            f"skipped={skipped}, lr=[0.0009999565625930518, 0.0009999565625930518], mom=[(0.9, 0.95), (0.9, 0.95)]")


def test_search_then_the_scalers_cycle_is_no_overflow_incident() -> None:
    lines: list[str] = []
    scale = 65536.0
    for it in range(4):  # the start-up search: 65536 -> 4096
        lines += _overflow(it, scale, 2 + it)
        scale /= 2
    skipped = 4
    for step in range(10, 1440, 10):
        lines.append(_step(step, skipped, step % 60))
        if step % 100 == 0:
            lines += [_HDR.format(sec=1, ln=370) + "No Grad overflow for 100 iterations",
                      _HDR.format(sec=1, ln=371) + f"Increasing dynamic loss scale from {scale:g} to {scale * 2}"]
            scale *= 2
            if scale > 65536:
                lines += _overflow(step + 3, scale, 5)
                scale /= 2
                skipped += 1
    verdict = engine_verdict(lines)
    assert not [i.failure for i in verdict if i.severity != "info"], verdict
    assert "loss_scale_warmup" in {i.failure for i in verdict}


def test_an_rl_loss_that_does_not_fall_during_the_search_is_no_fp16_instability() -> None:
    lines = ["[2023-04-21 15:31:44,003] [INFO] [config.py:1018:print]   fp16_enabled ................. True"]
    scale = 65536.0
    acts = [0.38, 0.42, 0.51, 0.48, 0.55, 0.46, 0.42, 0.64, 0.43, 0.51, 0.53, 0.45, 0.55, 0.46, 0.52, 0.60, 0.44]
    for step, act in enumerate(acts):
        lines.append(f"epoch: 0|step: {step}|ppo_ep: 1|act_loss: {act}|cri_loss: {act * 0.7:.4f}|unsuper_loss: 0.0")
        if step % 2 == 0 and step <= 8:  # actor and critic engines each halve on iterations 0..4
            lines += _overflow(step // 2, scale, 10 + step, ranks=4)
            scale /= 2
    verdict = engine_verdict(lines)
    assert not [i.failure for i in verdict if i.severity != "info"], verdict
    assert "loss_scale_warmup" in {i.failure for i in verdict}


def test_overflows_that_keep_coming_mid_run_are_still_reported() -> None:
    lines: list[str] = []
    scale = 65536.0
    skipped = 0
    for step in range(10, 400, 10):
        lines.append(_step(step, skipped, step % 60))
        if step >= 200:  # an overflow every 10 steps, from a scale that had settled
            lines += _overflow(step + 1, scale, 7)
            scale = max(scale / 2, 1.0) if step % 30 else scale
            skipped += 1
    assert {"fp16_overflow_skips", "loss_scale_collapse"} & {i.failure for i in engine_verdict(lines) if i.severity != "info"}
