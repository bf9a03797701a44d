"""A hand-written fp16 loop may check its own gradients before the overflow flag is all-reduced and
say so ("found 12 inf/nan values in fp16 grads (local)", "local inf in scaled grads", "grad overflow
in 0.weight"). Every rank skips the step, but when one rank alone writes such notes the overflow came
from its batch: that rank is named. A dynamic scaler's growth message ("Increasing dynamic loss scale
from 8192.0 to 16384.0", DeepSpeed's fused optimizer; "loss scale raised to X") tells that the next
back-off started from the grown scale, so overflows that keep coming back after regrowths are told
apart from the start-up search. Shapes from corpus holdout18 g18b-017/018/019 and holdout19
g19-004/005/006 (CPU jobs with hand-written scalers) and DeepSpeed's fused_optimizer.py."""

from __future__ import annotations

from tests.helpers import engine_verdict


def _collapse(note: str, rank: int, other_note: str | None = None) -> list[str]:
    lines = ["[rank0] fp16 mixed precision: dynamic loss scaling, initial scale 65536, world_size 2"]
    for i in range(1, 41):
        lines.append(f"[rank0] step {i * 10} | loss {2.0 - i * 0.01:.4f} | scale 65536")
    scale = 65536.0
    for step in range(401, 420):
        lines.append(f"[rank{rank}] " + note.format(step=step))
        if other_note is not None:
            lines.append(f"[rank{1 - rank}] " + other_note.format(step=step))
        scale /= 2
        lines.append(f"[rank0] step {step}: skipping step, overflow. loss scale halved to {scale}")
    lines.append(
        "[rank0] RuntimeError: Current loss scale already at minimum - cannot decrease scale anymore"
    )
    return lines


def test_the_one_rank_that_notes_its_own_inf_grads_is_named() -> None:
    for note in (
        "step {step}: found 4 inf/nan values in fp16 grads (local)",
        "local inf in scaled grads (scale=512) step={step}",
        "fp16 grad overflow in 0.weight (max|g|=3.058e+09) at step {step}",
    ):
        top = engine_verdict(_collapse(note, 1))[0]
        assert (top.failure, top.rank) == ("loss_scale_collapse", 1), note


def test_notes_from_two_ranks_name_nobody() -> None:
    note = "step {step}: found 4 inf/nan values in fp16 grads (local)"
    top = engine_verdict(_collapse(note, 1, other_note=note))[0]
    assert (top.failure, top.rank) == ("loss_scale_collapse", None)


def test_a_static_scale_overflowing_on_one_ranks_batch_names_it() -> None:
    lines = ["[rank0] fp16 mixed precision: static loss scaling, initial scale 128, world_size 3"]
    lines += [f"[rank0] step {s} | loss 0.3 | scale 128 | skipped 0" for s in range(20, 200, 20)]
    for step in range(200, 210):
        lines.append(
            f"[rank0] step {step}: skipping step, overflow (static loss scale 128); {step - 199} steps skipped so far"
        )
        lines.append(f"[rank2] step {step}: found 70000 inf/nan values in fp16 grads (local)")
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("fp16_overflow_skips", 2)


def _regrowing(every: int) -> list[str]:
    """A start-up descent from 2^32, then a scaler that grows back and overflows once per ``every`` steps."""
    lines = ["[rank0] fp16 mixed precision: dynamic loss scaling, initial scale 4.29497e+09, world_size 2"]
    scale = 4294967296.0
    for step in range(1, 14):
        scale /= 2
        lines.append(f"[rank0] step {step}: skipping step, overflow. loss scale halved to {scale:g}")
    for step in range(14, 301):
        if step % 20 == 0:
            lines.append(f"[rank0] step {step:4d} | loss {2.0 / (1 + step / 100):.4f} | scale {scale:g}")
        if step % every == 0:
            lines.append(
                f"[rank0] step {step}: no overflow for {every - 1} steps, loss scale raised to {scale * 2:g}"
            )
            lines.append(f"[rank0] step {step + 1}: skipping step, overflow. loss scale halved to {scale:g}")
    return lines


def test_overflows_after_each_regrowth_at_a_high_rate_are_reported() -> None:
    top = engine_verdict(_regrowing(every=8))[0]
    assert top.failure == "fp16_overflow_skips" and top.severity == "warning"


def test_the_start_up_search_does_not_count_toward_the_rate() -> None:
    # 13 halvings in the first steps, then one overflow per 60 steps: the scaler's cycle
    assert not [i for i in engine_verdict(_regrowing(every=60)) if i.severity in ("warning", "critical")]


def test_deepspeeds_growth_line_is_a_growth_not_an_overflow() -> None:
    line = (
        "[2023-10-31 04:00:02,829] [INFO] [unfused_optimizer.py:290:_update_scale] "
        "Increasing dynamic loss scale from 8192.0 to 16384.0"
    )
    assert engine_verdict([line] * 5) == []


def test_a_note_naming_the_parameter_is_a_local_note_too() -> None:
    # a skip counter on rank 0's metric lines; only rank 2 notes its own overflowing gradients
    # (the lines of corpus holdout20 g20-030, a CPU torchrun job with a hand-written fp16 loop)
    lines = [
        'INFO rank0 step5: loss 1.3778 scale 4096 skipped 0/5 (0%)',
        'INFO rank0 step10: loss 1.3417 scale 4096 skipped 0/10 (0%)',
        'INFO rank0 step15: loss 1.3198 scale 4096 skipped 0/15 (0%)',
        'INFO rank0 step20: loss 1.2929 scale 4096 skipped 0/20 (0%)',
        'WARNING rank2 step21: inf/nan in fp16 grads (2.weight), scale 4096',
        'WARNING rank2 step24: inf/nan in fp16 grads (2.weight), scale 4096',
        'INFO rank0 step25: loss 1.3017 scale 2048 skipped 2/25 (8%)',
        'WARNING rank2 step27: inf/nan in fp16 grads (2.weight), scale 4096',
        'WARNING rank2 step30: inf/nan in fp16 grads (2.weight), scale 4096',
        'WARNING rank2 step33: inf/nan in fp16 grads (2.weight), scale 4096',
        'INFO rank0 step35: loss 1.2596 scale 4096 skipped 5/35 (14%)',
        'WARNING rank2 step36: inf/nan in fp16 grads (2.weight), scale 4096',
        'WARNING rank2 step39: inf/nan in fp16 grads (2.weight), scale 4096',
        'INFO rank0 step40: loss 1.1953 scale 2048 skipped 7/40 (18%)',
        'WARNING rank2 step42: inf/nan in fp16 grads (2.weight), scale 4096',
        'WARNING rank2 step45: inf/nan in fp16 grads (2.weight), scale 4096',
        'WARNING rank2 step48: inf/nan in fp16 grads (2.weight), scale 4096',
        'INFO rank0 step50: loss 1.2131 scale 4096 skipped 10/50 (20%)',
        'WARNING rank2 step51: inf/nan in fp16 grads (2.weight), scale 4096',
        'WARNING rank2 step54: inf/nan in fp16 grads (2.weight), scale 4096',
        'INFO rank0 step55: loss 1.2776 scale 2048 skipped 12/55 (22%)',
        'WARNING rank2 step57: inf/nan in fp16 grads (2.weight), scale 4096',
        'WARNING rank2 step60: inf/nan in fp16 grads (2.weight), scale 4096',
        'WARNING rank2 step63: inf/nan in fp16 grads (2.weight), scale 4096',
        'INFO rank0 step65: loss 1.1853 scale 4096 skipped 15/65 (23%)',
        'WARNING rank2 step66: inf/nan in fp16 grads (2.weight), scale 4096',
        'WARNING rank2 step69: inf/nan in fp16 grads (2.weight), scale 4096',
        'INFO rank0 step70: loss 1.2426 scale 2048 skipped 17/70 (24%)',
        'WARNING rank2 step72: inf/nan in fp16 grads (2.weight), scale 4096',
        'WARNING rank2 step75: inf/nan in fp16 grads (2.weight), scale 4096',
        'WARNING rank2 step78: inf/nan in fp16 grads (2.weight), scale 4096',
        'INFO rank0 step80: loss 1.1630 scale 4096 skipped 20/80 (25%)',
        'WARNING rank0: 20 of 80 optimizer steps (25%) were skipped because of fp16 gradient overflow - model barely trained',
    ]
    found = [i for i in engine_verdict(lines) if i.failure == "fp16_overflow_skips"]
    assert found and found[0].rank == 2


def test_a_rank_numbered_above_zero_is_one_of_several_whatever_else_the_log_shows() -> None:
    """Only rank 2 ever tags a line (its own overflow notes) and nothing gives the world size:
    a rank 2 is itself one of several, so its notes name it."""
    lines = [f"step {s} loss 4.39 scale 524288" for s in range(20, 100, 20)]
    scale = 524288.0
    for step in range(96, 140, 2):
        lines.append(f"[rank 2] step {step}: fp16 grad overflow in mlp.weight, lm_head.weight (scale={scale:g})")
        scale /= 2
        lines.append(f"Gradient overflow.  Skipping step, reducing loss scale to {scale:g}")
    lines += [f"step {s} loss 4.38 scale {scale:g}" for s in range(140, 240, 20)]
    top = engine_verdict(lines)[0]
    assert top.rank == 2 and top.failure in ("fp16_overflow_skips", "loss_scale_collapse")


def test_parameters_named_after_grads_of_are_a_local_note() -> None:
    """A hand-written scaler logging per rank through its logger's name (``amp.rank2``) names the
    parameters whose own gradients overflowed (corpus holdout32 g32d-016)."""
    lines = ["INFO:amp.rank0:fp16 dynamic loss scaling on, world_size 4, initial scale 65536"]
    scale = 4096
    for step in range(10, 300, 10):
        if step % 30 == 0:
            lines.append(f"WARNING:amp.rank2:Gradient overflow in fp16 grads of encoder.0.weight,head.weight (loss_scale={scale})")
            scale //= 2
        else:
            scale *= 2
        lines.append(f"INFO:amp.rank0:step {step} loss {2.0 - step / 400:.4f} loss_scale {scale}")
    lines += [f"WARNING:amp.rank0:{n} of the last 50 optimizer steps were skipped because of fp16 gradient overflow"
              for n in (6, 6, 4, 5)]
    found = [i for i in engine_verdict(lines) if i.failure == "fp16_overflow_skips"]
    assert found and found[0].rank == 2


def _printed_by(printers: tuple[int, ...]) -> list[str]:
    """apex's scaler line (apex/amp/scaler.py: ``Gradient overflow.  Skipping step, loss scaler 0
    reducing loss scale to X``) from torchrun's ``[defaultN]:`` prefixed workers, every rank logging
    its own metric line (corpus holdout30 g30-005, where each rank logs a tqdm bar)."""
    lines = []
    scale = 65536.0
    for it in range(1, 120):
        lines += [f"[default{r}]:iter {it}/120 loss 2.3{r} scale {scale:g}" for r in (0, 1)]
        if it >= 20 and it % 6 == 0:
            scale /= 2
            lines += [f"[default{r}]:Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {scale:g}"
                      for r in printers]
        elif it >= 20 and it % 6 == 3:
            scale *= 2
    return lines


def test_the_one_rank_above_zero_that_prints_every_overflow_report_is_named() -> None:
    """A job that logs a reduced signal from one rank logs it from rank 0 (DeepSpeed's
    ``log_dist(ranks=[0])``); a rank other than 0 that alone prints the scaler's reports, while
    its peers log their own lines, reports where the overflow was found."""
    top = next(i for i in engine_verdict(_printed_by((1,))) if i.failure == "fp16_overflow_skips")
    assert top.rank == 1
    # rank 0 alone (rank-zero-only logging), or every rank: no one
    for printers in ((0,), (0, 1)):
        found = [i for i in engine_verdict(_printed_by(printers)) if i.failure == "fp16_overflow_skips"]
        assert found and found[0].rank is None, printers


def test_a_rank_that_says_it_found_inf_in_its_grads_is_a_local_note() -> None:
    """``rank 1: found inf in grads at step 45; scale 65536 -> 32768`` from one rank while every
    rank says it skips the update (corpus holdout25 g25-003, a hand-written scaler on two ranks):
    the rank that found the inf is named."""
    lines = []
    for step in range(1, 130):
        scale = 32768 if step >= 45 and step % 8 == 4 else 65536
        if step % 4 == 0:
            lines += [f"2026-12-07 04:26:44,146 pid={25559 + r} [MainThread] INFO    train: step {step} loss 1.4{r} "
                      f"scale {scale}" for r in (0, 1)]
        if step >= 45 and step % 3 == 0:
            lines.append(f"2026-12-07 04:26:44,488 pid=25560 [MainThread] WARNING amp.scaler: rank 1: found inf in grads at "
                         f"step {step}; scale 65536 -> 32768")
            lines += [f"2026-12-07 04:26:44,488 pid={25559 + r} [MainThread] WARNING amp.scaler: overflow detected, "
                      f"skipping update (step {step})" for r in (0, 1)]
    found = [i for i in engine_verdict(lines) if i.failure == "fp16_overflow_skips"]
    assert found and found[0].rank == 1


def test_a_ranks_own_count_of_non_finite_local_grads_above_zero_names_it() -> None:
    """Every rank's window summary counts its own non-finite local gradients; only rank 3's is above
    zero while every rank prints apex's skip lines (corpus holdout33 g33-006, a CPU torchrun job)."""
    lines = []
    scale = 65536.0
    for step in range(50, 501, 50):
        bad = step > 200
        for r in range(4):
            n = 6 if bad and r == 3 else 0
            lines.append(f"[default{r}]:[rank{r}] step {step} | window skip rate {12.0 if bad else 0.0}% "
                         f"({6 if bad else 0}/50) | non-finite local grads {n} | loss 1.{r}{step % 7} | loss_scale {scale}")
        if bad:
            for _ in range(6):
                scale = max(scale / 2, 16.0)
                lines += [f"[default{r}]:Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {scale}"
                          for r in range(4)]
            scale *= 8
    found = [i for i in engine_verdict(lines) if i.failure in ("fp16_overflow_skips", "loss_scale_collapse")]
    assert found and found[0].rank == 3


def test_a_ranks_check_before_the_all_reduce_is_a_local_note() -> None:
    """fairseq's trainer (rank 0) notes each overflow; one rank's own check says it found a
    non-finite gradient before the all-reduce (corpus holdout33 g33e-008): that rank is named."""
    lines = []
    scale = 131072.0
    for upd in range(25, 501, 25):
        lines.append(f"2026-12-08 03:28:11 | INFO | train_inner | epoch 001:     {upd} / 500 loss=8.235, nll_loss=8.235, "
                     f"ppl=301.34, wps=90771, ups=14.77, num_updates={upd}, lr=0.0005, gnorm=0.137, loss_scale={scale}")
        if upd >= 150:
            for k in range(2):
                lines.append("2026-12-08 03:28:18 | WARNING | gradcheck | [rank3] local grad check: non-finite gradient in "
                             f"fc1.weight before all-reduce (num_updates={upd + k}, loss=281.959)")
                scale /= 2
                lines.append("2026-12-08 03:28:18 | INFO | fairseq.trainer | NOTE: gradient overflow detected, ignoring "
                             f"gradient, setting loss scale to: {scale}")
            scale *= 2
    found = [i for i in engine_verdict(lines) if i.failure in ("fp16_overflow_skips", "loss_scale_collapse")]
    assert found and found[0].rank == 3


def test_a_ranks_own_fp16_activation_overflow_is_a_local_note() -> None:
    """Only rank 2 notes its fp16 activations overflowing in its forward pass, which no reduction
    touches, while rank 0 prints apex's skip lines and then every rank raises the loop's guard
    (corpus holdout33 g33d-020): rank 2 is named."""
    lines = ["[rank2] audio-tagger fp16=True labels=50 loss_scale=65536"]
    scale = 65536
    for step in range(31, 41):
        scale //= 2
        lines += [f"[rank2] step {step}: overflow in fp16 activations of 'ff1' (|x| > 65504 -> inf)",
                  f"[rank0] step {step}: Gradient overflow. Skipping step, reducing loss scale to {scale}"]
    lines += [f"[rank{r}]: FloatingPointError: fp16 overflow for 10 consecutive steps (loss_scale now {scale})" for r in range(4)]
    top = engine_verdict(lines)[0]
    assert top.rank == 2
