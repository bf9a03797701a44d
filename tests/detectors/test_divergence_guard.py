"""A training loop's own divergence guard stopping the run.

Hand-written loops raise when the loss passes a threshold they set (``RuntimeError: Training
diverged: loss 6.052e+06 exceeds divergence threshold 1e6``, a CPU torchrun job whose learning
rate was raised x1000 mid-run, corpus holdout19 g19-018); Lightning's EarlyStopping with a
``divergence_threshold`` says ``Divergence threshold reached: train_loss = 12.5 > 10.0``. The
divergence is the failure; the traceback and the launcher's exits are how the run stopped.
"""

from __future__ import annotations

from tests.helpers import engine_verdict


def _guard(rank: int) -> list[str]:
    return [f"[rank{rank}]: Traceback (most recent call last):",
            f'[rank{rank}]:   File "/home/user/job/train.py", line 27, in <module>',
            f'[rank{rank}]:     raise RuntimeError(f"Training diverged: loss {{l.item():.3e}} exceeds divergence threshold")',
            f"[rank{rank}]: RuntimeError: Training diverged: loss 6.052e+06 exceeds divergence threshold 1e6 at global step 64"]


_EXIT = ("E1206 05:22:51.351000 30600 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: 1) "
         "local_rank: 1 (pid: 31108) of binary: /opt/venv/bin/python3.11")


def test_the_guard_that_stopped_the_run_is_the_divergence() -> None:
    lines = [*(f"Epoch 2/3 - {i}/40 - loss: {v} - grad_norm: 3.1 - lr: 1.0e+00" for i, v in ((18, "14.2"), (20, "15.1"),
                                                                                              (24, "6052292.0000"))),
             *_guard(1), *_guard(0), _EXIT]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.severity, top.rank) == ("loss_spike", "critical", None)


def test_lightnings_divergence_threshold_is_a_spike() -> None:
    top = engine_verdict(["Divergence threshold reached: train_loss = 12.5 > 10.0. Signaling Trainer to stop."])[0]
    assert top.failure == "loss_spike"


def test_an_exception_the_guards_caller_raised_on_the_way_out_is_part_of_the_stop() -> None:
    # the Tacotron-2 family: the guard raises, its caller's handler then fails itself
    lines = ["Step   67456 [1.078 sec/step, loss=6.73029, avg_loss=6.65925]",
             "Exiting due to exception: Loss exploded",
             "Traceback (most recent call last):", '  File "/home/user/wavenet_vocoder/train.py", line 313, in train',
             "    raise Exception('Loss exploded')", "Exception: Loss exploded",
             "Traceback (most recent call last):", '  File "train.py", line 85, in train',
             "    raise ('Error occured while training Wavenet, Exiting!')",
             "TypeError: exceptions must derive from BaseException"]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.severity) == ("loss_spike", "critical")
