"""A metric printed with the counter it was taken at between its key and its value:
``Average loss at step  2000 :  4.37`` (TensorFlow's word2vec tutorial, ``print('Average loss at
step ', step, ': ', average_loss)``, copied into countless scripts), ``Minibatch loss at step
500: 1.234`` (the TensorFlow course's notMNIST loop, ``"Minibatch loss at step %d: %f"``), and
a script's ``print(f"loss at batch {i} = {loss}")`` of a loss tensor (SROIE 2019 task 3,
zzzDavid/ICDAR-2019-SROIE#3). The counter is the step (an epoch when it says epoch); the scan's
noise rule lets such a line through though no number stands right after its key."""

from __future__ import annotations

from detectors.parsers import fastfields, fields
from tests.helpers import engine_events, top_verdict


def _samples(lines: list[str]) -> list[tuple[int | None, float | None, float | None]]:
    return [(ev.step, ev.data.get("epoch"), ev.data.get("loss")) for ev in engine_events(lines) if ev.kind.value == "sample"]


def test_the_counter_between_key_and_value_is_the_step() -> None:
    assert _samples(["Average loss at step  2000 :  4.372", "Minibatch loss at step 500: 1.234000",
                     "loss at batch 5 = tensor(17.4767, device='cuda:0', grad_fn=<AddBackward0>)",
                     "Loss at epoch 3: 0.25"]) == [(2000, None, 4.372), (500, None, 1.234), (5, None, 17.4767), (None, 3.0, 0.25)]


def test_the_fast_extraction_agrees() -> None:
    for line in ["Average loss at step  2000 :  4.372", "loss at batch 5 = tensor(17.4767, device='cuda:0')",
                 "Minibatch loss at step 500: 1.234000", "val loss at epoch 2: nan", "lr at step 10: 0.1"]:
        assert fastfields.extract_records(line) == fields.extract_records(line)


def test_other_metrics_at_a_counter_are_no_loss() -> None:
    assert _samples(["Minibatch accuracy at step 500: 87.5%", "Validation accuracy at epoch 3: 0.91"]) == []


def test_a_series_of_them_is_judged() -> None:
    # ICDAR-2019-SROIE#3: the loss falls from 40.9 to 6.67 by batch 30, then jumps to 13-22
    vals = [40.9543, 17.4767, 13.3273, 9.6717, 8.3257, 7.6806, 6.6727, 13.3525, 8.8457, 17.4122, 9.8704, 22.0715]
    lines = [f"loss at batch {5 * i} = tensor({v:.4f}, device='cuda:0', grad_fn=<AddBackward0>)" for i, v in enumerate(vals)]
    assert top_verdict(lines)[0] == "loss_spike"
