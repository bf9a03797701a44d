"""Healthy runs whose lines look alarming to a naive reader, as generated CPU jobs print them
(corpus holdout18 g18b: Lightning's progress bar, an accelerate loop, an HF Trainer callback).
None of them may raise a warning: each is a class of lines, not one file."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import engine_verdict

FIXTURES = Path(__file__).parent / "fixtures"


def _alerts(lines: list[str]) -> list[tuple[str, str]]:
    return [(i.failure, i.severity) for i in engine_verdict(lines) if i.severity != "info"]


def test_a_bar_redrawn_with_the_postfix_it_already_showed_is_one_reading() -> None:
    """Lightning refreshes the bar between postfix updates: each step's loss appears twice, and at
    the epoch's end the validation bar redraws the last one many times; the duplicates made the
    per-batch loss look flat until the next normal value read as a break. (The first epoch of a
    healthy Lightning 2.6 ddp run, corpus holdout18 g18b-008.)"""
    lines = (FIXTURES / "lightning_bar_redraws.log").read_text(encoding="utf-8").splitlines()
    assert _alerts(lines) == []


def test_a_held_out_loss_drifting_up_a_little_is_no_divergence() -> None:
    """val_loss 0.131 → 0.237 between epochs of a small run (1.8x, but 0.1 in absolute terms)."""
    lines = [f"Epoch {e}: 100%|██████████| 16/16 [00:00<00:00, 59.54it/s, train_loss_step={t}, train_acc=1.000, "
             f"val_loss={v}, val_acc=0.910, lr=5.00e-02]" for e, (t, v) in
             enumerate([(0.158, 0.195), (0.0412, 0.131), (0.0501, 0.237), (0.41, 0.255), (0.0833, 0.138)])]
    assert _alerts(lines) == []
    # (a held-out loss that leaps by whole units still is one: tests/detectors/test_eval_jumps.py)


def test_a_grad_norm_rising_while_the_loss_drops_is_the_model_learning() -> None:
    """An accelerate loop leaving its plateau: grad_norm 0.05 → 4.1 as micro_loss 0.69 → 0.06."""
    grads = [0.085, 0.137, 0.135, 0.071, 0.274, 0.164, 0.073, 0.121, 0.127, 0.054, 0.129, 0.610, 1.234, 2.384, 4.132]
    losses = [0.6825, 0.7001, 0.6803, 0.7011, 0.7024, 0.6884, 0.7114, 0.6966, 0.6911, 0.6902, 0.6894, 0.6481,
              0.5303, 0.1527, 0.0612]
    lines = [f"12/06/2026 03:18:15 - INFO - __main__ - [RANK 0] epoch {u // 16} update {u} micro_loss {x} grad_norm {g}"
             for u, x, g in zip(range(4, 64, 4), losses, grads, strict=True)]
    assert _alerts(lines) == []
    # the same rise with the loss climbing is an explosion
    climbing = [ln.replace(f"micro_loss {x} ", f"micro_loss {x if i < 11 else 0.7 + i} ")
                for i, (ln, x) in enumerate(zip(lines, losses, strict=True))]
    assert any(f in ("grad_norm_explosion", "loss_spike") for f, _ in _alerts(climbing))


def test_a_count_of_none_is_no_report() -> None:
    """A NaN guard's periodic all-clear ('0 non-finite losses / 0 inf grads'), no NaN detected."""
    ok = "[rank1] nan-guard: 0 non-finite losses / 0 inf grads in the last 20 steps (eval_loss=3.721)"
    assert _alerts([ok, ok.replace("rank1", "rank0")]) == []
    # a number that indexes the speaker is no count: the rank still found a non-finite loss
    assert engine_verdict(["WARNING rank 0 non-finite loss, ending training"])[0].failure == "nonfinite_loss"


def test_every_rank_nan_at_the_same_update_names_no_rank() -> None:
    """HF examples' "%m/%d/%Y %H:%M:%S" timestamps and 'update N' counters: all three ranks log NaN
    at update 16 (the gradients were all-reduced before the line): the initiator is unknown."""
    lines = []
    for u, bad in ((8, False), (12, False), (16, True), (20, True)):
        for r in (2, 0, 1):
            v = "nan" if bad else "0.69"
            lines.append(f"12/06/2026 03:18:{u:02d} - INFO - __main__ - [RANK {r}] epoch 1 update {u} micro_loss {v} "
                         f"grad_norm {v}")
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank, top.step) == ("nonfinite_loss", None, 16)


def test_the_hf_examples_date_format_is_a_logger_prefix() -> None:
    """transformers/accelerate example scripts log with datefmt "%m/%d/%Y %H:%M:%S"."""
    from detectors.prefixes import split_prefixes

    p = split_prefixes("12/06/2026 03:18:00 - INFO - __main__ - [RANK 2] epoch 1 update 16 micro_loss nan")
    assert (p.level, p.rank, p.body) == ("INFO", 2, "epoch 1 update 16 micro_loss nan")
    assert p.time is not None
    # a date alone is no prefix
    assert split_prefixes("12/06/2026 was the day").body == "12/06/2026 was the day"


_WANDB = [
    "2026-12-06 03:19:50,155 [ERROR] (rank 0) run: experiment tracker unavailable, falling back to stdout metrics",
    "Traceback (most recent call last):",
    '  File "/home/user/job/train.py", line 9, in <module>',
    "    import wandb  # optional",
    "ModuleNotFoundError: No module named 'wandb'",
]


def test_a_traceback_the_program_logged_and_went_on_from_is_a_note() -> None:
    """logger.exception() of an optional import (corpus holdout18 g18-026): every epoch follows."""
    epochs = [f"2026-12-06 03:19:52,241 [INFO] (rank 0) run: Epoch {e} [1600/1600] loss={0.7 - 0.03 * e:.4f} acc=0.6"
              for e in range(4)]
    lines = _WANDB + [ln.replace("rank 0", "rank 1") for ln in _WANDB] + epochs
    assert _alerts(lines) == []
    # the same traceback, then the launcher reporting the worker failed: a crash
    exit_line = ("E1206 03:19:53.000000 1234 torch/distributed/elastic/multiprocessing/api.py:869] failed "
                 "(exitcode: 1) local_rank: 0 (pid: 4321) of binary: /usr/bin/python3")
    assert ("rank_exception", "critical") in _alerts(_WANDB + epochs[:1] + [exit_line])
    # or with too few lines after it to say it went on
    assert ("rank_exception", "critical") in _alerts(_WANDB + epochs[:1])


def test_a_job_the_user_interrupted_is_no_crash() -> None:
    """Ctrl-C on an mp.spawn job (corpus holdout18 g18-058): the parent's traceback ends in a bare
    ``KeyboardInterrupt``. Not an unfinished traceback, not a rank's exception."""
    lines = [
        "2026-12-06 03:35:37,303 | INFO    | rank=0 | Epoch 0 [75/100] loss 1.0858",
        "Traceback (most recent call last):",
        '  File "/home/user/job/train.py", line 29, in <module>',
        "    mp.spawn(worker, args=(4,), nprocs=4, join=True)",
        '  File "/usr/lib/python3.11/selectors.py", line 415, in select',
        "    fd_event_list = self._selector.poll(timeout)",
        "KeyboardInterrupt",
    ]
    assert _alerts(lines) == []
    # a KeyboardInterrupt quoted in a message is no interruption
    assert _alerts(["2026-12-06 03:35:37,303 | INFO | rank=0 | catching KeyboardInterrupt to save a checkpoint"]) == []


def test_a_network_error_of_the_programs_own_that_it_retried_is_a_note() -> None:
    """A checkpoint upload's ``ConnectionResetError`` logged by ``logger.exception`` on rank 2 and
    retried: the reset came through the program's own frames (no collective's lost peer), and two
    lines of rank 2's own after it show the process went on."""
    up = [
        "[rank2] 2026-12-07 01:00:20,012 ERROR   ckpt.upload  upload of step_120 failed (attempt 1)",
        "[rank2]: Traceback (most recent call last):",
        '[rank2]:   File "/home/user/job/train.py", line 20, in upload',
        '[rank2]:     raise ConnectionResetError(104, "Connection reset by peer")',
        "[rank2]: ConnectionResetError: [Errno 104] Connection reset by peer",
        "[rank2] 2026-12-07 01:00:20,965 INFO    ckpt.upload  uploaded ckpt step_120 (attempt 2)",
    ]
    steps = [f"[rank2] 2026-12-07 01:00:2{i},654 INFO    train        step {s} loss {1.6 - s / 10000:.4f}"
             for i, s in enumerate((60, 120))]
    after = [f"[rank2] 2026-12-07 01:00:2{i},654 INFO    train        step {s} loss 1.57" for i, s in ((5, 180), (6, 240))]
    assert _alerts(steps + up + after) == []
    # with nothing of rank 2 after it, the process may have died of it
    assert ("rank_exception", "critical") in _alerts(steps + up)



def test_nccls_service_thread_closing_at_a_clean_exit_is_no_failure() -> None:
    # ALCF Polaris DDP benchmark (corpus holdout25 h25b-009): the run prints its total time, then
    # every process's NCCL service thread sees its local peers go and the communicators abort
    lines = [f"Epoch 0, round {i}: {3400 + i:.1f} images/s" for i in range(10)] + ["Total time: 41.24"]
    for node, base in (("x3207c0s25b0n0", 3784612), ("x3207c0s25b1n0", 3802101)):
        for lr in range(4):
            rank = lr + (4 if node.endswith("b1n0") else 0)
            lines += [f"{node}:{base + lr}:{base + 100 + lr} [{lr}] NCCL INFO [Service thread] Connection closed by localRank {lr}",
                      f"{node}:{base + lr}:{base + 2500 + lr} [0] NCCL INFO comm 0x56533cb89f50 rank {rank} nranks 8 "
                      f"cudaDev {lr} busId 7000 - Abort COMPLETE"]
    assert [i for i in engine_verdict(lines) if i.severity in ("critical", "warning")] == []


def test_tensorflows_allocator_probe_the_run_trained_past_is_a_note() -> None:
    # TF's CUDA driver wrapper logs the first reservation it could not make, then goes on with a
    # smaller one (corpus holdout25 h25b-021: CosmoFlow under Horovod on Summit, two runs pasted)
    probe = ("2020-01-01 23:{m}:43.465983: E tensorflow/stream_executor/cuda/cuda_driver.cc:828] failed to allocate "
             "14.57G (15648413952 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory")
    epochs = [f"64/64 - 30s - loss: {1.29 - 0.05 * i:.4f} - mean_absolute_error: 0.9014" for i in range(12)]
    run = [probe.format(m=15), *epochs, "2020-01-01 23:16:42,182 INFO All done!"]
    assert [i for i in engine_verdict(run) if i.severity in ("critical", "warning")] == []
    again = [*run, probe.format(m=17), *epochs[:5], "2020-01-01 23:18:28,599 INFO All done!"]
    assert [i for i in engine_verdict(again) if i.severity in ("critical", "warning")] == []
    # the probe and then two lines only: nothing says the run went on from it
    assert engine_verdict([probe.format(m=15), *epochs[:2]])[0].failure == "cuda_oom"
