"""How the loss-scale judgement meets the other numeric signals.

Lines are in the real formats of the corpus cases named in each test (DeepSpeed's
``loss_scaler.py`` OVERFLOW line, apex amp's ``Gradient overflow`` line, tqdm postfixes).
"""

from __future__ import annotations

import pytest

from detectors.correlate import incidents
from detectors.detect import JobState
from detectors.model import Incident
from detectors.parse import default_parser
from detectors.parsers.base import FileState
from tests.helpers import engine_verdict, fed_state

_DS = ("[2025-08-27 10:12:{s:02d},229] [INFO] [loss_scaler.py:184:update_scale] [deepspeed] OVERFLOW! "
       "Rank 0 Skipping step. Attempted loss scale: {a}, reducing to {b}")
_BAR = "Steps:   0%|▏          | {n}/6000 [00:55<4:54:46,  2.96s/it, lr=0, step_loss={loss}]"

# a line of the run between two back-offs (a checkpoint note): the scaler had time to grow back
_BETWEEN = "INFO saving checkpoint to /ckpt/last.pt"


def _run(lines: list[str]) -> list[Incident]:
    return incidents(fed_state(lines, "train.log"))


def test_nan_after_the_scaler_hit_its_floor_is_the_collapse() -> None:
    """corpus num-009: the scale halves 4 → 2 → 1, then the loss is NaN."""
    lines = [_DS.format(s=1, a=4, b=2), _DS.format(s=2, a=2, b=1), _DS.format(s=3, a=1, b=1),
             _BAR.format(n=16, loss="nan"), _BAR.format(n=17, loss="nan")]
    top = _run(lines)[0]
    assert top.failure == "loss_scale_collapse"
    assert any(c["failure"] == "nonfinite_loss" for c in top.collateral)


def test_job_wide_nan_on_the_skipped_steps_of_a_descent_is_the_collapse() -> None:
    """corpus holdout num-010: every bar shows step_loss=nan while DeepSpeed halves the
    scale on every step toward its floor: the NaN is what the scaler skipped."""
    lines: list[str] = []
    for n, (a, b) in enumerate([(32, 16), (16, 8), (8, 4), (4, 2), (2, 1)]):
        lines += [_BAR.format(n=10 + n, loss="nan"), _DS.format(s=n, a=a, b=b)]
    assert _run(lines)[0].failure == "loss_scale_collapse"


def test_nan_from_the_first_line_with_a_scale_never_seen_moving_stays_the_cause() -> None:
    """corpus num-048: 'Loss nan' from the first line and 'Fp16 Grad Scale: 0' throughout:
    nothing shows the scaler's descent, the forward loss itself is NaN."""
    lines = [f"Training: 2023-03-14 09:08:{s:02d},293-Speed 2178.40 samples/sec   Loss nan   LearningRate 0.001000   "
             f"Epoch: 0   Global Step: {step}   Fp16 Grad Scale:  0   Required: 194 hours"
             for s, step in ((43, 20), (47, 30), (52, 40))]
    assert _run(lines)[0].failure in ("nonfinite_loss", "amp_bf16_vs_fp16")


def test_overflows_far_below_the_initial_scale_are_not_warm_up() -> None:
    """corpus num-036: DeepSpeed overflows at scale 32 → 16 → 8 in the first 30 steps of a
    run: ten halvings below DeepSpeed's initial 2^16, so not the scaler calibrating."""
    lines = []
    for i, (a, b) in enumerate([(32, 16), (16, 8)]):
        lines += [f"train | global iter:     {27 + 2 * i}/  5000| tot_loss: 1.5{i} | lr: 8.5000e-07 | scale:  {a}.00",
                  _DS.format(s=i, a=a, b=b)]
    lines.append("train | global iter:     31/  5000| tot_loss: 1.52 | lr: 8.5000e-07 | scale:  8.00")
    found = {i.failure for i in _run(lines)}
    assert "loss_scale_warmup" not in found and "fp16_overflow_skips" in found
    # from DeepSpeed's initial scale down the same few steps are warm-up
    lines = []
    for i, (a, b) in enumerate([(65536, 32768), (32768, 16384)]):
        lines += [f"train | global iter:     {2 + 2 * i}/  5000| tot_loss: 1.5{i} | lr: 8.5000e-07 | scale:  {a}.00",
                  _DS.format(s=i, a=a, b=b)]
    lines.append("train | global iter:     6/  5000| tot_loss: 1.52 | lr: 8.5000e-07 | scale:  16384.00")
    assert {i.failure for i in _run(lines)} == {"loss_scale_warmup"}


def test_recurring_overflows_above_the_scalers_initial_scale_are_mid_run() -> None:
    """apex amp's dynamic scaler starts at 2^16 (the catalog says so): overflows that keep
    coming at 2^17 mean it had grown back over thousands of good steps, so not warm-up. One
    such overflow alone (corpus num-034) is the scaler probing upward, and benign."""
    apex = "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {v}"
    one = _run([apex.format(v=131072.0)])
    assert [i.failure for i in one] == ["loss_scale_warmup"]
    # (each after other lines of the run: the same back-off on the very next line is another
    # process's copy of it, test_backoff_copies)
    many = _run([x for v in (131072.0,) * 5 for x in (apex.format(v=v), _BETWEEN)])
    assert many[0].failure == "fp16_overflow_skips"


def _apex_pair(it: int, scale: float) -> list[str]:
    return [f"Grad overflow on iteration {it}", f"Using dynamic loss scale of {scale}"]


def test_two_line_overflow_reports_are_one_move_with_step_and_scale() -> None:
    """apex fp16_utils prints the step and the new scale on two lines (apex issue 289)."""
    st = JobState(job="t")
    fs = FileState("train.log", year=2026)
    for i, line in enumerate(_apex_pair(8, 8192.0), 1):
        for ev in default_parser().parse_line(line, i, fs):
            st.add(ev)
    assert [(m.step, m.to_scale) for m in st.scale_moves] == [(8, 8192.0)]


def test_overflows_that_resume_on_every_step_are_a_collapse() -> None:
    """The scaler settled after iteration 8, then overflows came back on every iteration
    from 14 and drove the scale from 4096 to 64: the shape of apex issue 289."""
    lines: list[str] = []
    scale = 65536.0
    for it in (0, 1, 2, 8, 14, 15, 16, 17, 18, 19, 20):
        lines += _apex_pair(it, scale)
        scale /= 2
    assert _run(lines)[0].failure == "loss_scale_collapse"
    # calibration: every step from the start, then quiet for good
    lines = []
    scale = 65536.0
    for it in range(0, 7):
        lines += _apex_pair(it, scale)
        scale /= 2
    assert {i.failure for i in _run(lines)} == {"loss_scale_warmup"}


def test_a_scale_below_one_beside_a_nan_in_one_table_leaves_the_nan_the_cause() -> None:
    """guided-diffusion (corpus num-064): the table shows lg_loss_scale -16200 above a NaN loss:
    rows of one record say nothing about order, and no overflow line showed a descent."""
    rows = ["-----------------------------", "| lg_loss_scale | -1.62e+04 |", "| loss          | nan       |",
            "| step          | 1.53e+05  |", "-----------------------------"]
    assert _run(rows)[0].failure in ("nonfinite_loss", "amp_bf16_vs_fp16")
    # the same table with a finite loss is the collapse (corpus holdout num-065)
    rows[2] = "| loss          | 5.99e+04  |"
    assert _run(rows)[0].failure == "loss_scale_collapse"


def test_an_unbroken_descent_from_the_initial_scale_is_warm_up_whatever_the_spacing() -> None:
    """DeepSpeed ZeRO-2 from 2^32 (corpus d2-004): eight halvings 0.55–0.8 s apart. Jitter in
    the gaps is no trend; a run down from the initial scale is the scaler searching."""
    line = ("[2020-09-09 01:52:{s}] [INFO] [stage2.py:1132:step] [deepscale] OVERFLOW! Rank 0 Skipping step. "
            "Attempted loss scale: {a}, reducing to {b}")
    stamps = ["29,086", "29,672", "30,401", "31,156", "31,784", "32,335", "33,136", "33,739"]
    lines = [line.format(s=s, a=float(2 ** (32 - i)), b=float(2 ** (31 - i))) for i, s in enumerate(stamps)]
    assert {i.failure for i in _run(lines)} == {"loss_scale_warmup"}
    # thirteen halvings from 2^16 down to 8 are not a search any more
    lines = [line.format(s=f"{10 + i:02d},000", a=float(2 ** (16 - i)), b=float(2 ** (15 - i))) for i in range(13)]
    assert "loss_scale_warmup" not in {i.failure for i in _run(lines)}
    # nor are apex's ten halvings from 2^16 to 64 right after amp.initialize, with no clock at all
    # (corpus holdout18 h18a-017, pix2pixHD under O1)
    apex = "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {v}"
    found = {i.failure for i in _run(["loss_scale            : dynamic"] + [apex.format(v=float(2 ** (15 - i))) for i in range(10)])}
    assert "loss_scale_warmup" not in found and "fp16_overflow_skips" in found
    # six of them (down to 1024) still are the search
    found = {i.failure for i in _run([apex.format(v=float(2 ** (15 - i))) for i in range(6)])}
    assert found == {"loss_scale_warmup"}


_MMENGINE = ("05/18 06:39:{s} - mmengine - INFO - Epoch(train)  [1][  {it}/29572]  lr: 1.0000e-04  time: 0.6741  "
             "grad_norm: {g}  loss: {loss}  loss_cls: 1.0562")


def test_non_finite_grad_norms_in_the_first_steps_with_a_moving_loss_are_calibration() -> None:
    """mmdet DETR under AMP (corpus d2-031): grad_norm nan then inf at iterations 50 and 100
    while the loss falls 52.26 → 50.99: the scaler stepping down, not a NaN in the model."""
    lines = [_MMENGINE.format(s=12, it=50, g="nan", loss=52.2571), _MMENGINE.format(s=45, it=100, g="inf", loss=50.9907)]
    assert {i.severity for i in _run(lines)} <= {"info"}


def test_non_finite_grad_norms_that_are_not_calibration() -> None:
    # after a finite grad norm (ms-swift bf16, corpus num-027): a real non-finite gradient
    lines = [_MMENGINE.format(s=10, it=50, g="6.08", loss=2.09), _MMENGINE.format(s=12, it=100, g="nan", loss=2.08)]
    assert _run(lines)[0].severity == "critical"
    # a loss frozen at one value (HF Trainer's NaN filter repeats the last logged loss)
    lines = [_MMENGINE.format(s=12, it=50, g="nan", loss=1.5), _MMENGINE.format(s=45, it=100, g="nan", loss=1.5)]
    assert _run(lines)[0].severity == "critical"


def test_hf_trainer_dicts_with_nan_grad_norms_are_never_calibration() -> None:
    """corpus d2-040: HF Trainer logs grad_norm nan at steps 10 and 20 with finite losses; its
    NaN filter keeps the logged loss finite, so this is a NaN, not the scaler's first steps."""
    lines = ["{'loss': 1.7018, 'grad_norm': nan, 'learning_rate': 1.35e-06, 'epoch': 0.01}",
             "{'loss': 1.1469, 'grad_norm': nan, 'learning_rate': 2.70e-06, 'epoch': 0.02}"]
    assert _run(lines)[0].severity == "critical"


def test_one_halving_per_thousands_of_steps_is_the_scalers_normal_cycle() -> None:
    """fairseq JSON epoch summaries (corpus d2-037): loss_scale 8 → 4 across 2150 updates."""
    row = ('{{"epoch": {e}, "loss": "{loss}", "num_updates": {u}, "gnorm": "0.27", "loss_scale": "{s}", '
           '"wall": 8285}}')
    lines = [row.format(e=10, loss=3.180, u=21497, s="8.000"), row.format(e=11, loss=3.169, u=23647, s="8.000"),
             row.format(e=12, loss=3.160, u=25797, s="4.000")]
    assert not [i for i in _run(lines) if i.severity != "info"]


def test_an_averaged_scale_moving_is_not_the_scaler_backing_off() -> None:
    """audiocraft/flashy epoch summaries (corpus d2-056) log the epoch's mean grad_scale:
    299499.5 → 267780.1 is not a halving. A scaler backs off by powers of two."""
    row = "Train Summary | Epoch {e} | lr=6.88E-02 | grad_norm=INF | grad_scale={s} | ce={ce} | ppl=1.101"
    lines = [row.format(e=8, s=263192.576, ce=0.096), row.format(e=9, s=299499.520, ce=0.095),
             row.format(e=10, s=267780.096, ce=0.094), row.format(e=11, s=295174.144, ce=0.093)]
    assert not [i for i in _run(lines) if i.severity != "info"]


def test_paddle_scaler_at_zero_without_spaces_after_commas() -> None:
    """PaddleSeg (corpus d2-059): 'Found inf or nan,current scale is: 0.0,decrease to: 0.0*0.5'."""
    assert _run(["Found inf or nan,current scale is: 0.0,decrease to: 0.0*0.5"])[0].failure == "loss_scale_collapse"


def test_an_apex_overflow_line_cut_before_its_scale_still_counts() -> None:
    """corpus d2-068: two apex overflows above its 65536 start, the second line cut in the paste."""
    lines = ["Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 262144.0",
             "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to"]
    assert _run(lines)[0].failure == "fp16_overflow_skips"


def test_a_scaler_knocked_back_to_the_same_scale_again_and_again_is_healthy() -> None:
    """apex in a long fine-tune: one or two overflows per loop, always at 65536 or 32768."""
    apex = "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {v}"
    lines = [x for v in (65536.0, 65536.0, 32768.0, 65536.0, 32768.0) for x in (apex.format(v=v), _BETWEEN)]
    assert not [i for i in _run(lines) if i.severity != "info"]
    # overflows stuck at one scale (MindSpore's 'still update') are not the scaler riding its edge
    ms = "overflow, still update, loss scale adjust to 1024.0"
    assert _run([ms] * 4)[0].failure == "fp16_overflow_skips"


def test_a_startup_descent_seen_from_its_middle_is_calibration() -> None:
    """corpus h2-025 (tacotron2's fp16 optimizer prints only the attempted scale): the paste
    starts at 2^23, halves on every step down to 2^16 by iteration 16, then trains cleanly."""
    lines = [f"OVERFLOW! Skipping step. Attempted loss scale: {2.0 ** e}" for e in range(23, 16, -1)]
    lines += ["Train iter       16 loss 49.316841 Grad Norm 10.800460 3.22s/it",
              "OVERFLOW! Skipping step. Attempted loss scale: 65536.0"]
    lines += [f"Train iter       {i} loss {40 - i:.6f} Grad Norm 8.1 3.18s/it" for i in range(18, 25)]
    assert [(i.failure, i.severity) for i in _run(lines)] == [("loss_scale_warmup", "info")]


def test_an_overflow_that_cannot_lower_the_scale_is_the_collapse() -> None:
    """DeepSpeed at its floor (deepspeedai/DeepSpeed#1593, quoted without its logger tag)."""
    top = _run(["OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 1, reducing to 1"])[0]
    assert (top.failure, top.data.get("stuck_at_minimum")) == ("loss_scale_collapse", True)


def test_a_collapse_line_before_the_nan_explains_it_and_the_workers_exit() -> None:
    """k2-fsa recipes (corpus d3-045, d3-044): the scale-is-small warning comes before the NaN
    loss, and mp.spawn's "Process 1 terminated" is that exit, not rank 1's own failure."""
    warn = "2023-03-06 12:41:16,652 WARNING [trainer.py:680] (2/4) Grad scale is small: 0.0"
    nan = ("2023-03-06 12:41:16,653 INFO [trainer.py:694] (2/4) Epoch 1, batch 8500, "
           "train_loss[loss=nan, ArTop10Accuracy=0, over 1266.00 frames. ]")
    top = _run([warn, nan])[0]
    assert top.failure == "loss_scale_collapse" and any(c["failure"] == "nonfinite_loss" for c in top.collateral)
    spawn = ["-- Process 1 terminated with the following error:", "Traceback (most recent call last):",
             '  File "train.py", line 1000, in train_one_epoch', "    raise RuntimeError(",
             "RuntimeError: grad_scale is too small, exiting: 2.3283064365386963e-10"]
    assert [(i.failure, i.rank) for i in _run(spawn) if i.severity == "critical"] == [("loss_scale_collapse", None)]


def test_apex_moves_that_name_only_the_new_scale_start_a_new_run_when_it_grew() -> None:
    """apex prints only "reducing loss scale to X": a move to a higher scale than the last one
    means the scaler grew back in between, so the back-to-back run starts again."""
    from detectors.correlate import _final_run
    from detectors.model import ScaleMove, Source

    def move(i: int, to: float) -> ScaleMove:
        return ScaleMove(None, i, None, Source("a.log", i, ""), None, to)

    assert _final_run([move(1, 16384), move(2, 8192), move(3, 4096)]) == 3
    assert _final_run([move(1, 16384), move(2, 8192), move(3, 65536), move(4, 32768)]) == 2


def _diffusion_table(lg: float, loss: float) -> list[str]:
    # OpenAI's logger (guided-diffusion's dumpkvs), corpus d3-042, values varied
    return ["-" * 28, "| grad_norm     | 1.7      |", f"| lg_loss_scale | {lg:<8} |", f"| loss          | {loss:<8} |",
            "| step          | 1.09e+04 |", "-" * 28]


def test_guided_diffusion_overflows_after_its_scale_had_settled_are_not_warm_up() -> None:
    """corpus d3-042: the tables show lg_loss_scale settled at 17.9 (its start is 20), then three
    'Found NaN, decreased lg_loss_scale' lines: new overflows mid-run, not the search."""
    lines = _diffusion_table(17.9, 0.42) + _diffusion_table(17.9, 0.84) + [
        f"Found NaN, decreased lg_loss_scale to {lg}" for lg in (16.929000000013357, 15.929000000013357, 14.929000000013357)]
    top = _run(lines)[0]
    assert (top.failure, top.severity) == ("fp16_overflow_skips", "warning")
    assert top.data["lowest_scale"] == 2.0 ** 14.929000000013357  # the log2 scale, read as a scale


def test_guided_diffusions_first_halving_from_its_start_is_warm_up() -> None:
    """corpus num-067: one 'Found NaN' from lg 20 (its initial) to 19 at the start."""
    top = _run(["Found NaN, decreased lg_loss_scale to 19.0"])[0]
    assert (top.failure, top.severity) == ("loss_scale_warmup", "info")


def test_deepspeeds_minimum_scale_abort_in_any_case() -> None:
    """corpus holdout5 h5-063: the abort pasted lower-cased (as issue titles and chats show it)."""
    top = _run(["exception: current loss scale already at minimum - cannot decrease scale anymore. exiting run"])[0]
    assert top.failure == "loss_scale_collapse"


def test_a_learned_scale_drifting_down_is_not_a_scaler_backing_off() -> None:
    """open_clip's 'Logit Scale' (a learned temperature, corpus holdout5 h5-023) goes 100.000 →
    99.995 → 99.990: within 1 % of no change, never a halving."""
    line = ("2023-06-29,15:4{m}:40 | INFO | Train Epoch: 0 [ {n:5d}/109468 (3%)] Loss: {loss} (1.023) Data (t): 0.158 "
            "Batch (t): 0.559, 36.0876/s LR: 0.000001 Logit Scale: {s} - V4")
    lines = [line.format(m=m, n=64 + 6400 * m, loss=loss, s=s) for m, (loss, s) in
             enumerate([(1.0672, "100.000"), (0.97884, "99.995"), (0.87522, "99.990"), (0.73911, "99.987"),
                        (0.60426, "99.983"), (0.62116, "99.981")])]
    assert [i for i in _run(lines) if i.severity != "info"] == []


def test_apex_overflow_lines_without_the_scaler_number() -> None:
    """NVIDIA DeepLearningExamples' BERT (corpus holdout2 h2-081): 'Rank 0 :: Gradient overflow.  Skipping
    step, reducing loss scale to 3.6e-12' on every iteration while the loss is NaN: the collapse."""
    lines = []
    for n, s in ((5683, "3.637978807091713e-12"), (5811, "1.8189894035458565e-12"), (5939, "9.094947017729282e-13")):
        lines += [f"Iteration:  51%|█████▏    | {n}/11037 [31:18<28:47,  3.10it/s]Rank 0 :: Gradient overflow.  "
                  f"Skipping step, reducing loss scale to {s}", "Average Loss = nan Step Loss = nan"]
    assert _run(lines)[0].failure == "loss_scale_collapse"


def _regrowing(every: int, steps: int, msg: str) -> list[str]:
    """A step line every 10 steps, an overflow every ``every`` steps; the scale grows back
    (x4) after each overflow, so every overflow starts from above the previous one's result."""
    lines = []
    for step in range(1, steps + 1):
        if step % every == 0:
            lines.append(msg.format(step=step, a=8192, b=4096))
        if step % 10 == 0:
            lines.append(f"2026-12-06 01:{step:02d}:56,000 rank=0 INFO step {step} loss {3 - step / steps:.3f} scale 4096")
    return lines


def test_a_scaler_that_regrows_and_overflows_on_many_steps_keeps_skipping() -> None:
    """A hand-written GradScaler loop (corpus g16-047) and a DeepSpeed-style scaler with a short
    growth window (corpus g17b-027): the scale climbs back and overflows again every few steps
    for the whole run. Early in the run and at a high scale, but one step in six thrown away."""
    own = ("2026-12-06 01:{step:02d}:55,436 rank=1 WARNING step {step}: found inf/nan in fp16 grads (loss=99.39), "
           "optimizer step skipped, scale {a} -> {b}")
    for msg in (own, _DS.replace("10:12:{s:02d}", "10:{step:02d}:30")):
        found = {i.failure for i in _run(_regrowing(6, 120, msg))}
        assert "fp16_overflow_skips" in found and "loss_scale_warmup" not in found, msg
    # two regrowths are not yet a cycle the run keeps paying for
    found = {i.failure for i in _run(_regrowing(6, 18, own) + _regrowing(100, 100, own)[-1:])}
    assert "fp16_overflow_skips" not in found


def test_loss_scale_back_offs_told_in_words() -> None:
    """MMCV's Fp16OptimizerHook ('Check overflow, downscale loss scale to X') and a loop's own
    'loss scale halved to X': each is a move of the scale, down to a collapse here."""
    mm = "2021-06-02 10:11:{s:02d},123 - mmdet - WARNING - Check overflow, downscale loss scale to {v}"
    words = "WARNING: gradient overflow at step {s}, skipping update; loss scale halved to {v}"
    for fmt in (mm, words):
        lines = [fmt.format(s=s, v=v) for s, v in enumerate((8.0, 4.0, 2.0, 1.0, 0.5))]
        assert _run(lines)[0].failure == "loss_scale_collapse", fmt


def test_a_startup_descent_from_any_initial_scale_is_warm_up() -> None:
    """Hand-written fp16 loops start their scaler where they like (2^24 here, corpus holdout18
    g18-020): six halvings in a row in the first batches, down to 262144, then two lone overflows
    at that level over three epochs. The search, not a problem, however many epochs follow."""
    lines = [f"[fp16] Epoch 0 [{b}/100]: gradient overflow, skipping step; loss scale {2 ** (25 - i)} -> {2 ** (24 - i)}"
             for i, b in enumerate((1, 2, 3, 4, 5, 7), start=1)]
    lines += ["Epoch 0 [25/100] loss=1.9163 scale=262144",
              "[fp16] Epoch 0 [36/100]: gradient overflow, skipping step; loss scale 262144 -> 131072"]
    lines += [f"Epoch {e} [{b}/100] loss={1.2 - 0.1 * e:.4f} scale=131072" for e in range(3) for b in (50, 75, 100)]
    found = {i.failure: i.severity for i in _run(lines)}
    assert found.get("loss_scale_warmup") == "info" and "fp16_overflow_skips" not in found
    # the same descent that does not stop (down to 8) is no search
    lines = [f"[fp16] Epoch 0 [{b}/100]: gradient overflow, skipping step; loss scale {2 ** (25 - b)} -> {2 ** (24 - b)}"
             for b in range(1, 22)]
    assert "loss_scale_warmup" not in {i.failure for i in _run(lines)}


def test_every_ranks_copy_of_a_move_is_one_move() -> None:
    """Three ranks print 'Gradient overflow. Skipping step, loss scale reduced to X' for the same
    synchronised overflow (corpus holdout18 g18-042, unwrapped): five halvings, not fifteen. One
    process printing the same line twice overflowed twice (MindSpore's 'still update' lines)."""
    lines = [f"[03:26:59] WARNING  (r{r}) Epoch 0 [{i}/40] Gradient overflow. Skipping step, loss scale reduced to "
             f"{2 ** (24 - i)}" for i in range(1, 6) for r in (0, 2, 1)]
    lines += [f"[03:27:0{e}] INFO     (r0) Epoch {e} [40/40] loss={1.5 - 0.3 * e:.4f} scale=524288" for e in range(3)]
    found = {i.failure: i for i in _run(lines)}
    assert "fp16_overflow_skips" not in found
    assert found["loss_scale_warmup"].data["overflows"] == 5


def test_overflows_under_a_static_loss_scale_keep_skipping() -> None:
    """A fixed scale (`--loss-scale 262144`) never backs off, so the same overflow comes back and
    every such step is thrown away (corpus holdout18 g18-051, g18b-019). No scale moves: it is not
    a collapse, and a couple of them are not yet a problem."""
    msg = "[fp16] epoch 1 iter {i}: gradient overflow with static loss scale 262144, skipping update ({i} skipped so far)"
    lines = ["epoch 0 iter 50/50 loss 1.5217 skipped_total 0"] + [msg.format(i=i) for i in range(1, 40, 5)]
    top = _run(lines)[0]
    assert (top.failure, top.severity) == ("fp16_overflow_skips", "warning")
    assert not [i for i in _run(lines[:3]) if i.severity != "info"]
    other = "[rank0] 03:19:46 step {i}: skipping step, overflow (static loss scale 128); {n} steps skipped so far"
    assert _run([other.format(i=190 + n, n=n + 1) for n in range(8)])[0].failure == "fp16_overflow_skips"


def _npu_pair(scale: float) -> list[str]:
    # the Ascend NPU build of apex amp prints apex's report as two lines (hiyouga/LLaMA-Factory#3308)
    return ["Gradient overflow. Skipping step", f"Loss scaler reducing loss scale to {scale}"]


def test_npu_apex_two_line_reports_late_in_training_are_overflow_skips() -> None:
    lines = ["{'loss': 2.1043, 'grad_norm': 3.2, 'learning_rate': 5e-05, 'epoch': 4.6}"]
    for s in (512.0, 256.0, 128.0, 64.0, 32.0, 16.0, 8.0):
        lines += _npu_pair(s)
    top = _run(lines)[0]
    assert top.failure in ("fp16_overflow_skips", "loss_scale_collapse") and top.severity in ("warning", "critical")


def test_npu_apex_two_line_reports_at_the_start_are_warm_up() -> None:
    # the same scaler searching down from 2**16 in the first steps, then training on
    lines: list[str] = []
    for s in (32768.0, 16384.0, 8192.0):
        lines += _npu_pair(s)
    lines += [f"{{'loss': {2.5 - i / 10:.4f}, 'learning_rate': 5e-05, 'epoch': {i / 10:.2f}}}" for i in range(1, 9)]
    assert all(i.severity == "info" for i in _run(lines))
    assert any(i.failure == "loss_scale_warmup" for i in _run(lines))


def test_a_loops_own_abort_below_its_minimum_scale_is_the_collapse() -> None:
    # every step after step 30 overflows and halves the scale to 0.5; each rank's guard raises
    lines = [f"rank{r} step={s} grad overflow -> skipped, loss_scale {2.0 ** (47 - s):g} -> {2.0 ** (46 - s):g}"
             for s in range(31, 48) for r in (0, 1)]
    for r in (1, 0):
        lines += [f"[rank{r}]: Traceback (most recent call last):",
                  f'[rank{r}]:   File "/home/user/proj/train.py", line 28, in <module>',
                  f"[rank{r}]: RuntimeError: loss scale 0.5 fell below min_loss_scale=1; every step since the overflow "
                  "began was skipped. Aborting."]
    top = _run(lines)[0]
    assert (top.failure, top.severity) == ("loss_scale_collapse", "critical")


_ZERO3 = ("[2021-05-26 04:56:{t:02d},854] [INFO] [stage3.py:2708:_overflow_clean_up] [deepscale] OVERFLOW! Rank 0 "
          "Skipping step. Attempted loss scale: {s}, reducing to {s}")


def test_a_deepspeed_config_dump_and_one_skip_at_the_initial_scale_are_no_collapse() -> None:
    """DeepSpeed's config dump asks for dynamic scaling with '"loss_scale": 0' (a setting, not
    a scale of 0), and ZeRO-3's first overflow at its initial scale 2^8 keeps the scale (its
    hysteresis): a healthy one-step run (huggingface/transformers' DeepSpeed benchmarks' shape)."""
    lines = ['    "fp16": {', '        "enabled": true, ', '        "loss_scale": 0, ',
             '        "loss_scale_window": 1000, ', '        "initial_scale_power": 8, ', '        "min_loss_scale": 1', "    }, ",
             _ZERO3.format(s=256, t=4),
             "{'train_runtime': 273.0128, 'train_samples_per_second': 3.663, 'epoch': 1.0}"]
    assert [i.failure for i in _run(lines) if i.severity in ("warning", "critical")] == []


def test_one_scale_kept_skip_after_skip_is_skipped_steps() -> None:
    # the same "reducing to 128" again and again with no descent before it: a static loss scale
    # (DeepSpeed's LossScaler never moves, and prints the same line) or a floor set at 128 (the
    # report names both); each report is a step thrown away, not a scaler that fell to its floor
    lines = [_ZERO3.format(s=128, t=t) for t in range(6)]
    top = _run(lines)[0]
    assert top.failure == "fp16_overflow_skips" and top.severity == "warning"
    assert top.data["static_scale"] == 128.0


def test_a_descent_that_ends_kept_at_one_scale_is_the_floor() -> None:
    # the scaler came down to 128 and then kept it skip after skip: its floor (min_loss_scale 128)
    lines = [_ZERO3.format(s=1024, t=0).replace("reducing to 1024", "reducing to 512"),
             _ZERO3.format(s=512, t=1).replace("reducing to 512", "reducing to 256"),
             _ZERO3.format(s=256, t=2).replace("reducing to 256", "reducing to 128")]
    lines += [_ZERO3.format(s=128, t=t) for t in range(3, 9)]
    top = _run(lines)[0]
    assert top.failure == "loss_scale_collapse" and top.severity == "critical"


def _fairseq_inner(update: int, loss: float, scale: int) -> str:
    return ('2021-03-08 12:31:36 | INFO | train_inner | {"epoch": 1, "update": 0.0, "loss": "' + f"{loss:.3f}"
            + '", "ppl": "91120.8", "num_updates": "' + str(update) + '", "lr": "2e-05", "gnorm": "20.751", "loss_scale": "'
            + str(scale) + '"}')


def test_overflows_in_the_first_updates_from_a_small_initial_scale_then_clean_are_warm_up() -> None:
    """fairseq's FSDP example with ``--fp16-init-scale 4``: two overflows after the first two
    updates take the scale 4 → 2 → 1, then eight clean updates (fairseq's floor is 1e-4, not 1)."""
    note = "2021-03-08 12:33:12 | INFO | fairseq.trainer | NOTE: gradient overflow detected, ignoring gradient, setting loss scale to: {s}"
    lines = [_fairseq_inner(1, 16.475, 4), _fairseq_inner(2, 16.446, 4), note.format(s=2.0), note.format(s=1.0)]
    lines += [_fairseq_inner(u, v, 1) for u, v in zip(range(3, 11), (25.2, 18.1, 23.7, 20.4, 19.0, 18.3, 18.3, 17.6), strict=True)]
    assert [i.failure for i in _run(lines) if i.severity in ("warning", "critical")] == []
    # the same two overflows and a third much later are no start-up search
    late = [*lines, note.format(s=0.5), _fairseq_inner(11, 17.4, 1)]
    assert any(i.severity in ("warning", "critical") for i in _run(late))


def test_a_bare_scale_with_nothing_of_the_loss_beside_it_is_no_loss_scale() -> None:
    # a quantization-aware training switch logging its quantizer's scale (a committed run log's line)
    lines = [f"step:{s}/20000 train_loss:{2.1 - s / 10000:.4f} train_time:{s * 100}ms" for s in range(5000, 5230, 10)]
    lines += ["late_qat:enabled step:5227 scale:0.1499"]
    lines += [f"step:{s}/20000 train_loss:{1.6:.4f} train_time:{s * 100}ms" for s in range(5230, 5300, 10)]
    assert [i.failure for i in _run(lines) if i.severity in ("warning", "critical")] == []
    # the same value on a scaler's line is one
    assert any(i.failure == "loss_scale_collapse" for i in _run([*lines, "step:5300 amp scale:0.1499 loss:1.6"]))


def test_a_descent_from_the_initial_scale_the_run_announced_is_warm_up() -> None:
    """A scaler printing apex's words but started at 2^24 ("initial loss scale 16777216.0"):
    seven halvings before the first metric line are its search, not overflows above apex's 2^16."""
    lines = ["Using fp16 mixed precision, initial loss scale 16777216.0"]
    lines += [f"Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {2.0 ** e}" for e in range(23, 16, -1)]
    lines += [f"step {s} train_loss {0.9 - s / 1000:.4f} loss_scale 131072.0" for s in range(40, 300, 20)]
    found = {i.failure: i.severity for i in _run(lines)}
    assert found.get("loss_scale_warmup") == "info" and "fp16_overflow_skips" not in found
    # without the run's word the first metric line's step tells: at step 40 no scaler had grown from
    # apex's 2^16 to 2^23 (its window is 2000 steps), so the run started higher and this is its search
    found = {i.failure: i.severity for i in _run(lines[1:])}
    assert found.get("loss_scale_warmup") == "info" and "fp16_overflow_skips" not in found
    # at step 40000 it may have: overflows from above 2^16 there are mid-run
    late = lines[1:8] + [f"step {s} train_loss {0.9 - s / 100000:.4f} loss_scale 131072.0" for s in range(40000, 40300, 20)]
    found = {i.failure: i.severity for i in _run(late)}
    assert "loss_scale_warmup" not in found


_DS_LINE = "[2026-12-07 00:33:41,{ms:03d}] [INFO] [train.py:42:<module>] step={s}, skipped={k}, lr=[0.001], loss_scale={sc}, loss={l}"
_DS_SKIP = ("[2026-12-07 00:33:41,{ms:03d}] [INFO] [train.py:22:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. "
            "Attempted loss scale: {a}, reducing to {b}")


def test_a_mid_run_streak_the_scaler_grew_back_from_is_overflow_skips() -> None:
    """A loop that adds its loss and scale to DeepSpeed's step line: eleven halvings mid-run
    (32768 → 16), then the loss is back and the scale grows again: skips, no collapse."""
    lines = [_DS_LINE.format(ms=s, s=s, k=0, sc=32768.0, l=f"{0.9 - s / 1000:.5f}") for s in range(20, 140, 20)]
    lines += [_DS_SKIP.format(ms=140 + i, a=2.0 ** (15 - i), b=2.0 ** (14 - i)) for i in range(11)]
    lines += [_DS_LINE.format(ms=160, s=160, k=11, sc=16.0, l="42021.44141")]
    lines += [_DS_LINE.format(ms=s // 2, s=s, k=11, sc=16.0 if s < 260 else 32.0, l="0.8") for s in range(180, 300, 20)]
    found = {i.failure: i.severity for i in _run(lines)}
    assert "loss_scale_collapse" not in found
    # the same streak with the scale left at 16 and no line after it: the scaler's floor
    found = {i.failure: i.severity for i in _run(lines[:-6])}
    assert found.get("loss_scale_collapse") == "critical"


def test_a_nan_loss_on_the_line_where_the_logged_scale_dropped_is_the_skipped_step() -> None:
    """mmcv's logger: the interval whose step overflowed logs the halved ``grad_scale`` beside a
    NaN ``total_loss``, the next ones a finite loss: the scaler skipped that step. With the scale
    already at 4 and halving to 1, that is the scale collapsing, not a NaN in the model."""
    line = ("2024-12-22 18:{m:02d}:07,560 Epoch[1/20][{it}/30477] eta: 9 days, 18:59:37, time: 140.169, lr: 5.000e-05, "
            "grad_scale: {gs:.3f}, total_loss: {loss}")
    rows = [(4.0, "0.179"), (4.0, "0.174"), (4.0, "0.166"), (2.0, "nan"), (2.0, "0.180"), (2.0, "0.185"), (1.0, "nan"),
            (1.0, "0.184")]
    lines = [line.format(m=i, it=6000 + 100 * i, gs=gs, loss=loss) for i, (gs, loss) in enumerate(rows)]
    top = _run(lines)[0]
    assert top.failure == "loss_scale_collapse"


def test_a_streak_mid_run_from_a_scale_the_scaler_had_grown_to_is_overflow_skips() -> None:
    # a hand-written scaler (corpus holdout24 g24d-011): the scale logged 1024 at step 10, grew over
    # clean windows to 8192, then halved eight times in a row mid-run while only rank 1's own notes
    # said its gradients overflowed
    lines = ["{'step': 10, 'loss': 20.5284, 'loss_scale': 1024.0, 'skipped_total': 0}",
             "[scaler] 15 clean steps, scale grown to 2048",
             "{'step': 20, 'loss': 16.1741, 'loss_scale': 2048.0, 'skipped_total': 0}",
             "[scaler] 15 clean steps, scale grown to 4096",
             "{'step': 30, 'loss': 5.1609, 'loss_scale': 4096.0, 'skipped_total': 0}",
             "{'step': 40, 'loss': 3.3165, 'loss_scale': 4096.0, 'skipped_total': 0}",
             "[scaler] 15 clean steps, scale grown to 8192"]
    scale = 8192
    for _ in range(8):
        lines += ["[scaler][rank1] fp16 overflow in 4/4 grad tensors (first idx 0)",
                  f"[scaler] overflow: skipping update, scale halved {scale} -> {scale // 2}"]
        scale //= 2
    lines += [f"{{'step': {s}, 'loss': 0.{s}, 'loss_scale': 32.0, 'skipped_total': 8}}" for s in range(60, 130, 10)]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("fp16_overflow_skips", 1)


def test_a_streak_that_begins_after_several_calm_loss_lines_is_not_warm_up() -> None:
    # the word-language-model example's rows (pytorch/examples word_language_model/main.py) under
    # apex's O2 scaler (apex/amp/scaler.py's message), the streak only after six logged intervals
    # with no overflow at all (corpus holdout24 g24c-012)
    row = "| epoch   1 |   {b:3d}/  240 batches | lr 0.00050 | ms/batch  41.63 | loss  5.{l} | ppl   210.26"
    lines = ["Selected optimization level O2:  FP16 training with FP32 batchnorm and FP32 master weights.",
             "loss_scale             : dynamic"]
    lines += [row.format(b=b, l=30 + b % 7) for b in range(20, 140, 20)]
    lines += [f"Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {2.0 ** e}"
              for e in range(15, 6, -1)]
    lines += [row.format(b=b, l=30 + b % 7) for b in range(140, 260, 20)]
    found = {i.failure for i in engine_verdict(lines)}
    assert "fp16_overflow_skips" in found and "loss_scale_warmup" not in found
    # the same descent before the first logged interval is the scaler calibrating
    calm = lines[2:8]
    found = {i.failure for i in engine_verdict(lines[:2] + lines[8:17] + calm + lines[17:])}
    assert "loss_scale_warmup" in found and "fp16_overflow_skips" not in found


def test_one_ranks_local_overflow_notes_through_the_longest_streak_name_it() -> None:
    # a structured-log scaler (corpus holdout24 g24c-006): early single overflows come from ranks 1,
    # 2 and 3, then a mid-run streak of halvings comes only with rank 2's own notes
    lines = [f"ts=02:13:59 rank={r} world=4 event=init dtype=fp16 init_scale=65536" for r in range(4)]
    scale = 65536
    for step in (5, 30, 55):
        lines += [f"ts=02:14:01 rank={(step // 25) % 3 + 1} step={step} event=grad_overflow_local dtype=fp16 loss_scale={scale}",
                  f"scaler: overflow, step {step} skipped, scale halved {scale} -> {scale // 2}"]
        lines += [f"ts=02:14:01 rank={r} step={step + 5} loss=0.9{r} loss_scale={scale // 2} skipped_total=1" for r in range(4)]
        lines += [f"scaler: 20 clean steps, scale grown to {scale}"]
    for step in range(96, 106):
        lines += [f"ts=02:14:04 rank=2 step={step} event=grad_overflow_local dtype=fp16 loss_scale={scale}",
                  f"scaler: overflow, step {step} skipped, scale halved {scale} -> {scale // 2}"]
        scale //= 2
    lines += [f"ts=02:14:05 rank={r} step={s} loss=0.8{r} loss_scale={scale}" for s in range(110, 160, 10) for r in range(4)]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("fp16_overflow_skips", 2)


@pytest.mark.parametrize("note", ["scaler: overflow (local grads inf/nan), skipping step, scale halved to 8192",
                                  "rank=1 step=143 event=grad_overflow_local dtype=fp16 loss_scale=16384"])
def test_local_overflow_notes_in_other_words(note: str) -> None:
    # a hand-written scaler beside the other rank's "overflow (remote rank overflow)" (corpus
    # holdout23 g23d-013) and a structured log's event name (holdout24 g24c-006)
    evs = default_parser().parse_line(f"[rank1] {note}", 1, FileState("train.log"))
    assert any(e.data.get("local_overflow") for e in evs)


def test_one_window_of_inf_grad_norms_after_calm_steps_is_overflow_not_calibration() -> None:
    # loguru lines of a loop under a static fp16 scale (corpus holdout25 g25-012): eleven clean
    # steps, then every step's grad norm inf while the loss stays finite, then finite again
    row = "2026-12-07 04:35:{s:02d}.431 | INFO     | __main__:<module>:36 - step {n} loss {loss} grad_norm {g}"
    calm = [row.format(s=n % 60, n=n, loss=f"2.3{n % 7}", g=f"0.1{n % 9}") for n in range(5, 60, 5)]
    bad = [row.format(s=n % 60, n=n, loss=f"2.5{n % 7}", g="inf") for n in range(60, 96)]
    after = [row.format(s=n % 60, n=n, loss=f"2.4{n % 7}", g=f"0.2{n % 9}") for n in range(100, 160, 5)]
    found = {i.failure for i in engine_verdict([*calm, *bad, *after])}
    assert "fp16_overflow_skips" in found and "loss_scale_warmup" not in found
    # the same window in the first steps is the scaler finding its scale
    first = [row.format(s=n % 60, n=n, loss=f"2.5{n % 7}", g="inf") for n in range(1, 5)]
    found = {i.failure for i in engine_verdict([*first, *calm, *after])}
    assert "fp16_overflow_skips" not in found


def test_back_offs_to_the_same_scale_every_few_steps_keep_skipping() -> None:
    # apex's back-off names only its new scale: "reducing loss scale to 512.0" again and again means
    # it grew back to 1024 in between; one in five steps over 160 steps is overflow skips (corpus
    # holdout25 g25b-023), not the scaler riding its edge once per growth window
    apex = "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {s}"
    lines: list[str] = []
    for step in range(1, 161):
        if step % 5 == 2:
            lines.append(apex.format(s=256.0 if step == 2 else 512.0))
        if step % 20 == 0:
            lines.append(f"step={step} loss={1.8 - step / 1000:.4f} scale=512.0")
    found = {i.failure: i.severity for i in engine_verdict(lines)}
    assert found.get("fp16_overflow_skips") == "warning"


def _short_bouncing_run(cycles: int) -> list[str]:
    """An 80-step run, a CSV row per step, and apex's back-off (verbatim words, NVIDIA/apex#834)
    every third step from step 33, ``cycles`` times; the scale grows back to 512 in between."""
    apex = "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 256.0"
    lines = ["step,loss,loss_scale,overflow,skipped_total"]
    overs = {33 + 3 * k for k in range(cycles)}
    for step in range(1, 81):
        if step in overs:
            lines.append(apex)
        scale = 256.0 if step in overs or step - 1 in overs else 512.0
        lines.append(f"{step},{1.05 - step / 2000:.5f},{scale},{int(step in overs)},{sum(s <= step for s in overs)}")
    return lines


def test_many_regrowth_cycles_in_a_short_run_keep_skipping() -> None:
    # fifteen cycles of growing back and overflowing again over the last 45 steps of an 80-step run
    # (a Fabric loop of ours, corpus holdout28 g28b-023): no framework's scaler grows back within a
    # few steps (its window is 1000-2000), so the count of cycles is the evidence, whatever the span
    found = {i.failure: i.severity for i in engine_verdict(_short_bouncing_run(15))}
    assert found.get("fp16_overflow_skips") == "warning"
    # seven cycles in so short a span are not yet a rate
    assert "fp16_overflow_skips" not in {i.failure for i in engine_verdict(_short_bouncing_run(7))}


def _hf_steps(first: int, every: int, n: int, grad: str = "inf", loss: str | None = None) -> list[str]:
    """HF Trainer's log dicts behind a step column, as text-generation-webui's LoRA trainer prints
    them (corpus holdout23 h23g-017, verbatim shape); a loss that wobbles unless ``loss`` is given."""
    return [f"Step: {first + k * every:6d} {{'loss': {loss or f'{2.44 + (k * 37 % 11 - 5) / 100:.4f}'}, "
            f"'grad_norm': {grad}, 'learning_rate': {8e-06 * (k + 1)}, 'epoch': {(first + k * every) / 228}}}"
            for k in range(n)]


def test_a_grad_norm_inf_on_every_step_from_the_start_with_a_moving_loss_is_overflow_skips() -> None:
    # no update with inf gradients was applied (it would make the next loss non-finite): the fp16
    # gradients (or their fp16 norm) overflow on every step and the run learns nothing
    found = {i.failure: i.severity for i in engine_verdict(_hf_steps(3, 4, 40))}
    assert found.get("fp16_overflow_skips") == "warning" and "nonfinite_loss" not in found


def test_a_grad_norm_inf_that_is_not_every_step_from_the_start() -> None:
    # finite norms first, then inf on every step (a coefficient blown up mid-run: fp32's norm
    # overflows and clipping zeroes the update, corpus holdout24 g24d-027): a NaN-class failure
    finite = [ln.replace("'grad_norm': inf", "'grad_norm': 0.41") for ln in _hf_steps(3, 4, 10)]
    later = _hf_steps(43, 4, 30)
    assert engine_verdict(finite + later)[0].failure == "nonfinite_loss"
    # an excerpt from mid-run (its first line the 51st logging point): whether the norm was ever
    # finite is not shown (corpus holdout19 h19c-011, mmengine's grad_norm: nan from iteration 510)
    assert engine_verdict(_hf_steps(510, 10, 30))[0].failure == "nonfinite_loss"
    # a loss that repeats one value: HF Trainer's NaN filter writing for a NaN model
    assert engine_verdict(_hf_steps(3, 4, 30, loss="2.4395"))[0].failure == "nonfinite_loss"


def test_a_descent_from_a_configured_high_start_in_the_first_steps_is_warm_up() -> None:
    # a table row per step printed before its back-off message, the row already showing the new
    # scale, apex's words (NVIDIA/apex#834) from a scaler configured to start at 2^24 (a CPU job of
    # ours, corpus holdout29 g29-005): six halvings in steps 1-12, then 150 clean steps
    apex = "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {s}"
    lines = ["  step      loss        scale  skipped      ms", "-" * 46]
    scale = 2.0 ** 24
    for step in [1, 2, 3, 4, 5, 10, 12, *range(20, 170, 10)]:
        over = step <= 5 or step == 12
        if over:
            scale /= 2
        lines.append(f"{step:6d}    {2.3 - step / 1000:.4f}  {scale:11.1f}  {'True' if over else 'False':>7}    12.0")
        if over:
            lines.append(apex.format(s=scale))
    assert [i for i in engine_verdict(lines) if i.severity in ("warning", "critical")] == []


def test_a_descent_before_a_runs_first_epoch_summary_is_warm_up_wherever_it_started() -> None:
    # a Lightning job's own scaler in apex's words (NVIDIA/apex#834), configured to start at 2^20,
    # logging only an epoch summary (a CPU job of ours, corpus holdout29 g29b-019): the descent comes
    # before the run's first metric line, which is still epoch 0, so it is the start-up search
    apex = "[epoch {e} batch {b}] Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {s}"
    lines = [apex.format(e=0, b=b, s=2.0 ** (19 - b)) for b in range(7)]
    lines += [apex.format(e=0, b=17, s=4096.0), "epoch 0 done: loss=572.6083 scale=4096",
              apex.format(e=1, b=14, s=2048.0), "epoch 1 done: loss=413.5601 scale=2048",
              "epoch 2 done: loss=290.0781 scale=2048", "epoch 3 done: loss=198.9341 scale=2048"]
    assert [i for i in engine_verdict(lines) if i.severity in ("warning", "critical")] == []


def test_summaries_of_skipped_steps_after_the_first_window_are_overflow_skips() -> None:
    # a loop's windowed summary (corpus holdout25 g25d-013): a clean first window, then a third of
    # every later window skipped
    row = "2026-12-07 05:00:1{i},644 | INFO | trainer.rank0 | steps {a}-{b}: loss_avg=1.39{i}, skipped {k} of the last 50 steps"
    skipped = [0, 17, 9, 16, 16, 16]
    lines = [row.format(i=i, a=50 * i + 1, b=50 * (i + 1), k=k) for i, k in enumerate(skipped)]
    found = {i.failure: i.severity for i in engine_verdict(lines)}
    assert found.get("fp16_overflow_skips") == "warning"
    # only the first window skipped (the scaler's start-up search): nothing to report
    quiet = [row.format(i=i, a=50 * i + 1, b=50 * (i + 1), k=k) for i, k in enumerate([12, 0, 1, 0, 0, 0])]
    assert [i for i in engine_verdict(quiet) if i.severity != "info"] == []


def test_a_runs_closing_tally_of_skipped_steps_overrides_a_scale_column_read_as_warm_up() -> None:
    # a fixed-width table (step, loss, scale, skip, skipped_total) whose header aligns "loss" and
    # "scale" two spaces apart, and the run's closing tally (corpus holdout25 g25d-026)
    lines = [" step       loss     scale  skip skipped_total"]
    lines += [f"{s:5d} {20.0 - s / 20:10.3f} {2.0 ** (9 + (s // 10) % 3):9.1f} {s % 2:5d} {s // 4:13d}"
              for s in range(5, 305, 5)]
    lines.append("WARNING: 68/300 optimizer steps skipped because of fp16 gradient overflow (23%)")
    found = {i.failure: i.severity for i in engine_verdict(lines)}
    assert found.get("fp16_overflow_skips") == "warning"
    assert "loss_scale_warmup" not in found


def test_a_windowed_tally_of_skipped_steps_past_the_first_window_is_persistent_skips() -> None:
    # rank 0's warning every 50 steps (corpus holdout32 g32d-016), the scale swinging 128-512 after
    # its start-up search: "N of the last 50 optimizer steps were skipped" is a rate per window
    lines = [f"WARNING:amp.rank2:Gradient overflow in fp16 grads of head.weight (loss_scale={2 ** (12 - i)})" for i in range(5)]
    for step, skipped, scale in ((50, 6, 512), (100, 6, 128), (150, 3, 256), (200, 4, 512), (250, 5, 256), (300, 4, 512)):
        lines += [f"INFO:amp.rank0:step {step} loss {3 - step / 150:.4f} loss_scale {scale}",
                  f"WARNING:amp.rank0:{skipped} of the last 50 optimizer steps were skipped because of fp16 gradient overflow"]
    found = {i.failure: i.severity for i in engine_verdict(lines)}
    assert found.get("fp16_overflow_skips") == "warning"


def test_a_log2_scalers_collapse_names_the_rank_whose_own_notes_run_through_its_final_descent() -> None:
    # glog lines of a loop that keeps log2 of its scale (corpus holdout25 g25d-016): early
    # overflows noted by ranks 0-2, then only rank 2's local grads overflow, down to 2^-36
    glog = "W1207 05:00:4{d}.939280 1398946767 train.py:24] rank {r}: fp16 overflow in local grads at step {s} (log2_scale={lg})"
    skip = "I1207 05:00:4{d}.994774 1396893261 train.py:29] step {s}: overflow on {n} rank(s), skipping step, log2_scale -> {lg}"
    lines = [glog.format(d=2, r=r, s=1, lg=16) for r in (2, 1)] + [skip.format(d=2, s=1, n=2, lg=15)]
    lines += [glog.format(d=2, r=0, s=2, lg=15), skip.format(d=2, s=2, n=1, lg=14)]
    metric = "I1207 05:00:4{d}.1 1396893261 train.py:36] step {s} loss 0.{v} log2_scale {lg}"
    lines += [metric.format(d=3, s=20, v=29, lg=14), metric.format(d=3, s=40, v=24, lg=17)]
    for r, s in ((0, 57), (1, 67)):  # the scale had grown back to 2^17: two single overflows
        lines += [glog.format(d=4, r=r, s=s, lg=17), skip.format(d=4, s=s, n=1, lg=16)]
    lg = 16
    for s in range(83, 240, 3):
        lines += [glog.format(d=5, r=2, s=s, lg=lg), skip.format(d=5, s=s, n=1, lg=lg - 1)]
        if s % 30 == 23:
            lines.append(metric.format(d=6, s=s + 1, v=20, lg=lg - 1))
        lg -= 1
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("loss_scale_collapse", 2)
