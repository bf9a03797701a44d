"""A loss spike that came and went is noted (info), never paged; one the loss does not come
back from stays a warning. And a per-epoch step counter's restart with the loss back where the
previous epoch started is the epoch's high first batches (a sawtooth), not a spike.

Fixtures: a CPU torchrun job of ours printing a fixed-width table row per step (one batch 300x
the loss at step 35, the next step back at its level; round 16's generated set), and a real
per-epoch log pasted in luopeixiang/named_entity_recognition#24.
"""

from __future__ import annotations

from tests.helpers import engine_verdict

# header and rows of a table-like metric log (step, loss, gnorm, lr), rank 0 printing
_TABLE = ['  step       loss     gnorm        lr', '     1     1.0292     1.379   1.0e-02', '     2     1.1983     1.568   1.0e-02', '     3     0.7988     1.229   1.0e-02', '     4     0.8011     1.199   1.0e-02', '     5     0.9049     1.340   1.0e-02', '     6     1.1024     1.675   1.0e-02', '     7     1.0899     1.746   1.0e-02', '     8     0.8033     1.345   1.0e-02', '     9     0.5151     1.052   1.0e-02', '    10     0.5649     1.132   1.0e-02', '    11     0.7195     1.435   1.0e-02', '    12     0.4425     1.195   1.0e-02', '    13     0.4358     1.255   1.0e-02', '    14     0.4428     1.285   1.0e-02', '    15     0.3282     1.224   1.0e-02', '    16     0.3262     1.487   1.0e-02', '    17     0.2030     1.171   1.0e-02', '    18     0.1392     0.810   1.0e-02', '    19     0.0913     0.674   1.0e-02', '    20     0.0964     0.811   1.0e-02', '    21     0.0704     0.640   1.0e-02', '    22     0.1159     1.023   1.0e-02', '    23     0.1247     1.101   1.0e-02', '    24     0.1654     1.413   1.0e-02', '    25     0.1693     1.480   1.0e-02', '    26     0.1126     1.167   1.0e-02', '    27     0.1261     1.274   1.0e-02', '    28     0.0948     1.093   1.0e-02', '    29     0.0674     0.745   1.0e-02', '    30     0.0694     0.802   1.0e-02', '    31     0.0684     0.810   1.0e-02', '    32     0.0458     0.520   1.0e-02', '    33     0.0254     0.386   1.0e-02', '    34     0.0399     0.469   1.0e-02', '    35    12.6500     9.156   1.0e-02', '    36     0.0360     0.447   1.0e-02', '    37     0.0750     0.789   1.0e-02', '    38     0.0947     1.000   1.0e-02', '    39     0.1190     1.073   1.0e-02', '    40     0.1792     1.397   1.0e-02', '    41     0.1276     1.120   1.0e-02', '    42     0.1434     1.020   1.0e-02', '    43     0.1369     1.236   1.0e-02', '    44     0.1614     1.361   1.0e-02', '    45     0.0967     0.962   1.0e-02', '    46     0.0779     0.687   1.0e-02', '    47     0.0898     0.793   1.0e-02', '    48     0.0787     0.731   1.0e-02', '    49     0.0535     0.602   1.0e-02', '    50     0.0537     0.468   1.0e-02', '    51     0.0437     0.481   1.0e-02', '    52     0.0369     0.461   1.0e-02', '    53     0.0544     0.585   1.0e-02', '    54     0.0635     0.565   1.0e-02', '    55     0.0478     0.514   1.0e-02']

# https://github.com/luopeixiang/named_entity_recognition/issues/24 (BiLSTM-CRF NER, step/total_step per epoch)
_SAWTOOTH = ['保存模型...', 'Epoch 10, Val Loss:4.1249', 'Epoch 11, step/total_step: 5/60 8.33% Loss:5.9976', 'Epoch 11, step/total_step: 10/60 16.67% Loss:3.6216', 'Epoch 11, step/total_step: 15/60 25.00% Loss:2.9838', 'Epoch 11, step/total_step: 20/60 33.33% Loss:1.7743', 'Epoch 11, step/total_step: 25/60 41.67% Loss:2.1327', 'Epoch 11, step/total_step: 30/60 50.00% Loss:1.2837', 'Epoch 11, step/total_step: 35/60 58.33% Loss:1.3841', 'Epoch 11, step/total_step: 40/60 66.67% Loss:1.2403', 'Epoch 11, step/total_step: 45/60 75.00% Loss:1.0821', 'Epoch 11, step/total_step: 50/60 83.33% Loss:0.9138', 'Epoch 11, step/total_step: 55/60 91.67% Loss:0.6943', 'Epoch 11, step/total_step: 60/60 100.00% Loss:0.5065', '保存模型...', 'Epoch 11, Val Loss:4.0510', 'Epoch 12, step/total_step: 5/60 8.33% Loss:5.1469', 'Epoch 12, step/total_step: 10/60 16.67% Loss:3.1716', 'Epoch 12, step/total_step: 15/60 25.00% Loss:2.4593', 'Epoch 12, step/total_step: 20/60 33.33% Loss:1.4299', 'Epoch 12, step/total_step: 25/60 41.67% Loss:1.9214', 'Epoch 12, step/total_step: 30/60 50.00% Loss:1.2415', 'Epoch 12, step/total_step: 35/60 58.33% Loss:1.3120', 'Epoch 12, step/total_step: 40/60 66.67% Loss:1.2194', 'Epoch 12, step/total_step: 45/60 75.00% Loss:0.9205', 'Epoch 12, step/total_step: 50/60 83.33% Loss:0.8615', 'Epoch 12, step/total_']


def _spikes(lines: list[str]) -> list[tuple[str, str]]:
    return [(i.failure, i.severity) for i in engine_verdict(lines) if i.failure == "loss_spike"]


def test_a_spike_the_loss_comes_back_from_at_once_is_info() -> None:
    assert _spikes(_TABLE) == [("loss_spike", "info")]


def test_a_spike_that_stays_is_a_warning() -> None:
    cut = next(i for i, line in enumerate(_TABLE) if line.split()[:1] == ["36"])
    # the same run, every row after the spike at the spiked level
    stays = _TABLE[:cut] + [f"{n:>6}    {12.5 + n / 100:.4f}     9.100   1.0e-02" for n in range(36, 46)]
    assert _spikes(stays) == [("loss_spike", "warning")]


def test_too_few_values_after_the_spike_to_call_it_passed() -> None:
    cut = next(i for i, line in enumerate(_TABLE) if line.split()[:1] == ["38"])
    assert _spikes(_TABLE[:cut]) == [("loss_spike", "warning")]


def test_an_epochs_high_first_batches_are_not_a_spike() -> None:
    assert _spikes(_SAWTOOTH) == [("loss_spike", "info")]


def test_a_step_counter_restart_without_the_same_level_before_is_still_judged() -> None:
    # the previous epoch's start was low: the jump at the new epoch's step 5 is the loss's own
    low = [line.replace("Loss:5.9976", "Loss:0.9976") for line in _SAWTOOTH]
    tail = [line for line in low if not line.startswith("Epoch 12")]
    jump = tail + ["Epoch 12, step/total_step: 5/60 8.33% Loss:9.1469"] + [
        f"Epoch 12, step/total_step: {s}/60 {s / 60:.2%} Loss:{9.0 - s / 100:.4f}" for s in range(10, 45, 5)]
    assert _spikes(jump) == [("loss_spike", "warning")]


def test_four_values_back_at_the_level_after_a_one_value_spike_are_enough() -> None:
    """A structlog JSON run logging every 10 steps (corpus holdout33 g33c-018, healthy): rank 1's
    loss 1.52 at step 80 between 0.22 and 0.20, then four more values at its level to the run's
    end. Fewer than four after it are still too few."""
    losses = {10: 15.64, 20: 8.73, 30: 3.73, 40: 1.03, 50: 0.58, 60: 0.39, 70: 0.22, 80: 1.52, 90: 0.20, 100: 0.11,
              110: 0.17, 120: 0.22}
    lines = [f'{{"rank": 1, "step": {s}, "loss": {v}, "nan_count": 0, "event": "train_step", "level": "info"}}'
             for s, v in losses.items()]
    assert _spikes(lines) == [("loss_spike", "info")]
    assert _spikes(lines[:-1]) == [("loss_spike", "warning")]


def _clipped_once(after: float) -> list[str]:
    # an accelerate loop logging every 25 steps with the window's max norm, and its clipping guard's
    # warning at the outlier step (corpus holdout33 g33e-021, healthy)
    losses = [4.3339, 2.9106, 0.8160, 0.1615, 0.0742, 0.0495, 0.0322, 0.0288, 0.0249, 0.0208, 0.0196, 0.0174]
    norms = [1.834, 3.371, 2.739, 1.065, 0.589, 0.568, 0.394, 0.432, 0.373, 0.316, 0.302, 0.331]
    lines = [f"2026-12-08 03:38:24,281 - INFO - train - [RANK 0] step {25 * (i + 1)} | loss {v:.4f} | grad_norm {g}"
             for i, (v, g) in enumerate(zip(losses, norms, strict=True))]
    lines.append("2026-12-08 03:38:26,575 - WARNING - train - [RANK 0] step 312: grad norm 29.27 > max_grad_norm 1.0, "
                 "gradients clipped")
    lines.append("2026-12-08 03:38:26,639 - INFO - train - [RANK 0] step 325 | loss 9.4903 | grad_norm 1.445")
    return lines + [f"2026-12-08 03:38:26,757 - INFO - train - [RANK 0] step {s} | loss {after - s / 1e5:.4f} | grad_norm 0.30"
                    for s in range(350, 501, 25)]


def test_a_clipped_outlier_whose_batch_loss_came_back_at_once_is_a_note() -> None:
    """The outlier batch's own loss (9.49 in the next window) is as far out as its norm; the losses
    after it are back: one bad batch the clipping absorbed. A loss that stays up is no such note."""
    assert [i for i in engine_verdict(_clipped_once(0.0155)) if i.severity in ("warning", "critical")] == []
    assert any(i.severity in ("warning", "critical") for i in engine_verdict(_clipped_once(9.4)))


_STAGE1 = [1.2212, 0.3674, 0.1761, 0.1089, 0.0967, 0.0723, 0.0623, 0.0680, 0.0543, 0.0460]


def _curriculum(stage2: list[float]) -> list[str]:
    # a curriculum that adds six classes at step 251 (corpus holdout33 g33e-019, healthy; g33c-009
    # the divergence it imitates: the loss jumps and then stays up)
    lines = [f"[train] step {25 * (i + 1):4d} ncls=2 loss={v:.4f}" for i, v in enumerate(_STAGE1)]
    lines.append(">>> curriculum switch at step 251: stage 2: all 8 classes")
    return lines + [f"[train] step {275 + 25 * i:4d} ncls=8 loss={v:.4f}" for i, v in enumerate(stage2)]


def test_a_jump_the_loss_then_learns_down_from_at_every_step_is_a_note() -> None:
    relearn = [4.3461, 1.8956, 1.7254, 1.4469, 1.1373, 0.8341, 0.6518, 0.5129, 0.3984, 0.3321, 0.2865, 0.2548, 0.2301,
               0.2252, 0.2105, 0.2033, 0.1821, 0.1734]
    assert _spikes(_curriculum(relearn)) == [("loss_spike", "info")]
    stays = [14.86, 6.72, 4.82, 4.41, 4.67, 4.71, 4.54, 4.52, 4.89, 4.76, 4.80, 4.87]
    assert _spikes(_curriculum(stays)) == [("loss_spike", "warning")]
