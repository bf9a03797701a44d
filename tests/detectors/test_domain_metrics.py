"""Metrics named the way a model's own community logs them (corpus holdout32 g32b, CPU ``torchrun``
2.13 jobs of several domains).

- A VAE's evidence lower bound, ``elbo=-39.85 recon=39.73 kl=0.12``: the ELBO is maximised in place
  of the log-likelihood, so its negative is the loss; an ELBO running away to ``-1.5e19`` is the
  loss exploding (g32b-003; Pyro's and most VAE loops' ``elbo``; ``neg_elbo`` is the loss as it is).
- The PyTorch DCGAN example's line (pytorch/examples ``dcgan/main.py``, the DCGAN tutorial):
  ``[0/4][12/20]\\tLoss_D: 1.1237\\tLoss_G: 0.8496\\tD(x): 0.5937\\tD(G(z)): 0.4418 / 0.4331``:
  ``[epoch/epochs][batch/batches]`` is the position; ``Loss_D`` and ``Loss_G`` are the two
  losses, read as parts of the loss (g32b-002).
"""

from __future__ import annotations

from detectors.model import EventKind
from detectors.parsers.fields import extract_records
from tests.helpers import engine_events, engine_verdict


def test_the_negative_elbo_is_the_loss() -> None:
    assert extract_records("epoch 0 step 4: elbo=-39.0224 recon=38.9124 kl=0.1100") == [
        {"epoch": 0.0, "step": 4.0, "loss": 39.0224}]
    assert extract_records("step 4 neg_elbo 39.02") == [{"step": 4.0, "loss": 39.02}]


def test_one_ranks_elbo_running_away_names_it() -> None:
    lines = []
    for step in range(0, 40, 4):
        for r in (2, 0, 1):
            elbo = -39.0 + step / 10 if r != 2 or step < 16 else -39.0 * 10 ** ((step - 12) // 4)
            lines.append(f"[rank {r}] epoch {step // 8} step {step}: elbo={elbo:.4f} recon={-elbo - 0.12:.4f} kl=0.1200")
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("loss_spike", 2)


def _dcgan(rank: int, epoch: int, i: int, d: float, g: float) -> str:
    return f"[rank{rank}] [{epoch}/4][{i}/20]\tLoss_D: {d:.4f}\tLoss_G: {g:.4f}\tD(x): 0.5937\tD(G(z)): 0.4418 / 0.4331"


def test_the_dcgan_examples_line_is_a_sample_at_its_epoch_and_batch() -> None:
    (ev,) = [e for e in engine_events([_dcgan(1, 2, 12, 1.1237, 0.8496)]) if e.kind is EventKind.SAMPLE]
    assert (ev.rank, ev.data["epoch"], ev.data["epoch_iter"], round(ev.data["loss"], 4)) == (1, 2.0, 12.0, 1.9733)


def test_one_ranks_generator_loss_running_away_names_it() -> None:
    lines = [_dcgan(r, e, i, 0.5 + (i % 3) / 10, 1.3 if r != 1 or e < 2 else (38.7 if i == 0 else 100.0))
             for e in range(4) for i in range(0, 20, 5) for r in (0, 1, 2)]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("loss_spike", 1)


def test_a_key_with_how_it_was_averaged_is_that_metric() -> None:
    # "loss(avg50)": a 50-step running mean (corpus holdout32 g32-007); an averaging qualifier only
    line = "2026-12-08 00:40:36 | train | step    50/1000 | loss(avg50)    2.2671 | lr 5.00e-03 | 10723 samples/s"
    assert extract_records(line) == [{"step": 50.0, "loss": 2.2671, "lr": 0.005}]
    assert extract_records("step 5 loss (ema) 0.41") == [{"step": 5.0, "loss": 0.41}]
    assert extract_records("step 5 loss(val) 0.41") == [{"step": 5.0}]
    (ev,) = [e for e in engine_events([line]) if e.kind is EventKind.SAMPLE and "loss" in e.data]
    assert (ev.step, ev.data["loss"]) == (50, 2.2671)


def test_a_regression_models_error_at_a_step_is_its_loss() -> None:
    # "it  380  mse 9.31" with no other loss on the line (corpus holdout32 g32-022): a training line;
    # the same measure on an evaluation's line stays the held-out loss
    (ev,) = [e for e in engine_events(["it  380  mse 9.31027"]) if e.kind is EventKind.SAMPLE]
    assert (ev.step, ev.data) == (380, {"loss": 9.31027, "scope": "local"})
    (ev,) = [e for e in engine_events(["Epoch 3 validation: msle nan"]) if e.kind is EventKind.SAMPLE and "perf" not in e.data]
    assert "loss" not in ev.data and "eval_loss" in ev.data


def test_a_growing_oscillation_of_the_error_is_a_spike() -> None:
    lines = [f"it {i:4d}  mse {0.012 + (i % 7) / 1000:.5f}" for i in range(5, 300, 5)]
    lines += [f"it {i:4d}  mse {(0.17 * 3 ** k) if i % 40 == 0 else 0.02:.5f}" for k, i in enumerate(range(300, 460, 5))]
    top = engine_verdict(lines)[0]
    assert top.failure == "loss_spike"
