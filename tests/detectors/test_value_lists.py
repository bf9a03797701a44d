"""A printed list of losses is a series: ``train_losses: [2.3026, 2.2981, ...]``, a Keras
``history.history['loss']`` printed whole, or values joined under a heading that names them
(``Loss values for each step in the epoch:`` then ``12.320100, 12.357852, ...``, a PyTorch forum
post on a pendulum controller whose loss climbs 12.3 → 662). One sample per value, its place among
the lists read so far the step; a list named as held-out or as anything but a loss is not read, nor
is a CSV row (its cells have no space after the comma)."""

from __future__ import annotations

from tests.helpers import engine_events, engine_verdict


def _losses(lines: list[str]) -> list[tuple[int | None, float]]:
    return [(ev.step, ev.data["loss"]) for ev in engine_events(lines) if ev.kind.value == "sample"]


_CLIMB = ", ".join(f"{12.3201 * 1.09 ** i:.6f}" for i in range(48)) + ", "


def test_values_under_a_heading_that_names_them_a_loss() -> None:
    got = _losses(["Epoch 1", "Loss values for each step in the epoch:", _CLIMB])
    assert len(got) == 48 and got[0] == (0, 12.3201) and got[-1][0] == 47
    assert engine_verdict(["Epoch 1", "Loss values for each step in the epoch:", _CLIMB])[0].failure == "loss_spike"


def test_a_keyed_list_and_a_second_list_continues_the_steps() -> None:
    vals = ", ".join(f"{2.3 - 0.01 * i:.4f}" for i in range(10))
    got = _losses([f"train_losses: [{vals}]", f"'loss': [{vals}]"])
    assert [s for s, _ in got] == list(range(20)) and got[0][1] == 2.3


def test_lists_that_are_no_training_loss_are_not_read() -> None:
    vals = ", ".join(f"{0.5 + 0.01 * i:.4f}" for i in range(10))
    assert _losses([f"val_losses: [{vals}]", f"accuracy: [{vals}]", "Learning rates:", vals, vals]) == []
    assert _losses(["step,loss,grad_norm,lr,a,b,c,d", "1,2.5000,0.3000,0.1000,1.0000,2.0000,3.0000,4.0000"]) == [(1, 2.5)]


def test_a_falling_list_is_no_incident() -> None:
    vals = ", ".join(f"{2.3 * 0.97 ** i:.4f}" for i in range(40))
    assert engine_verdict([f"history['loss'] = [{vals}]"]) == []


def test_the_heading_is_found_whatever_the_chunks() -> None:
    from detectors.engine import Engine

    lines = ["Epoch 1", "Loss values for each step in the epoch:", _CLIMB]
    whole = [(ev.step, ev.data["loss"]) for ev in engine_events(lines) if ev.kind.value == "sample"]
    eng = Engine("t")
    fs = eng.open_file("train.log")
    got = []
    for i, line in enumerate(lines, 1):
        got += [(ev.step, ev.data["loss"]) for ev in eng.feed(f"{line}\n".encode(), i, fs) if ev.kind.value == "sample"]
    assert got == whole and len(got) == 48
