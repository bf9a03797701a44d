"""A loss printed under its initial after a progress counter ("L: 0.0058").

Two print shapes, from their projects' train.py:

- FaceBoxes.PyTorch and the SSD-lineage face detectors that keep its print (L the localisation
  loss, C the confidence loss, some forks add T, their total): ``'Epoch:{}/{} || Epochiter: {}/{}
  || Iter: {}/{} || L: {:.4f} C: {:.4f} || LR: {:.8f} || Batchtime: {:.4f} s || ETA: {}'``
  (the rows below in the shape of the corpus's holdout18 h18a-011 FaceBoxes log);
- SparK's ImageNet fine-tuning (keyu-tian/SparK downstream_imagenet/main.py): ``f'[ep{ep}
  it{it:3d}/{iters_train}]    L: {loss:.4f}    Acc: {acc:.2f}    lr: {min_lr:.1e}~{max_lr:.1e}
  Remain: {remain_time}'`` (the rows below in the shape of the corpus's dev d3-027 log).
"""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict, fed_state, fed_whole_and_chunked


def _facebox(it: int, loc: float, conf: float) -> str:
    return (f"2020-06-01 23:31:35,613:INFO:Epoch:1/300 || Epochiter: {it}/403 || Iter: {it}/120900 || "
            f"L: {loc:.4f} C: {conf:.4f} || LR: 0.00100000 || Batchtime: 0.4644 s || ETA: 15:35:48")


def _spark(ep: int, it: int, loss: float, acc: float) -> str:
    return (f"[12-06 03:56:55] (nstream_imagenet/main.py, line 174)=> [ep{ep} it{it:3d}/313]    L: {loss:.4f}    "
            f"Acc: {acc:.2f}    lr: 2.6e-03~3.2e-02    Remain: 0:01:56")


# the first iterations of a FaceBoxes run: both parts falling, the confidence loss fast
_FACEBOX_START = [_facebox(i, 5.17 - 0.08 * i, 20.4 - 1.2 * i) for i in range(1, 13)]
# a SparK fine-tune a few epochs in: the loss small and steady
_SPARK_STEADY = [_spark(ep, it, 0.0058 + 0.0003 * (k % 3), 13.0 - 0.1 * k)
                 for k, (ep, it) in enumerate((ep, it) for ep in (4, 5, 6) for it in (3, 156, 312))]


def _samples(lines: list[str]) -> list[tuple[int | None, float | None, float]]:
    st = fed_state(lines)
    return [(s.step, s.data.get("epoch"), s.data["loss"]) for rs in st.ranks.values() for s in rs.samples]


def test_the_parts_add_up_to_the_loss_and_the_iteration_is_the_step() -> None:
    assert _samples([_facebox(5, 4.3865, 8.5862)]) == [(5, 1.0, pytest.approx(12.9727))]


def test_a_printed_total_is_the_loss() -> None:
    line = "Epoch:3/300 || Images: 96/12880 || L: 2.1034 C: 3.0123 T: 7.2191|| LR: 0.00100000"
    assert _samples([line]) == [(None, 3.0, 7.2191)]


def test_the_loss_alone_after_a_bracketed_counter() -> None:
    assert _samples([_spark(6, 156, 0.0058, 13.28)]) == [(None, 6.0, 0.0058)]


@pytest.mark.parametrize("line", [
    "[ep6 it156/313]    L: 2048    Acc: 13.28",  # a whole number: a length, not a loss
    "packing stats L: 0.5813 C: 0.1200",  # no progress counter on the line
    "[ep6 it156/313]    LL: 0.0058    Acc: 13.28",  # another key that ends in L
])
def test_not_read_as_a_loss(line: str) -> None:
    # (beside a line that is read: only that one gives a sample)
    assert _samples([line, _spark(6, 312, 0.0065, 11.0)]) == [(None, 6.0, 0.0065)]


def test_a_falling_start_is_read_and_raises_nothing() -> None:
    assert len(_samples(_FACEBOX_START)) == len(_FACEBOX_START)
    assert len(_samples(_SPARK_STEADY)) == len(_SPARK_STEADY)
    assert not [i for i in engine_verdict(_FACEBOX_START) if i.severity in ("warning", "critical")]
    assert not [i for i in engine_verdict(_SPARK_STEADY) if i.severity in ("warning", "critical")]


def test_a_loss_two_hundred_times_its_level_is_a_spike() -> None:
    # SparK's epoch 7 (dev d3-027): L from 0.0065 to 1.7164 at the epoch's end, accuracy to zero
    lines = [*_SPARK_STEADY, _spark(7, 3, 0.0065, 10.94), _spark(7, 156, 0.0086, 1.56), _spark(7, 312, 1.7164, 0.0),
             _spark(8, 3, 1.6271, 1.56)]
    found = [i for i in engine_verdict(lines) if i.severity in ("warning", "critical")]
    assert found and found[0].failure == "loss_spike"


def test_a_nan_part_is_a_nan_loss() -> None:
    found = engine_verdict([*_FACEBOX_START, _facebox(13, float("nan"), 4.1)])
    assert found and found[0].failure == "nonfinite_loss"


@pytest.mark.parametrize("size", [1, 2, 5])
def test_any_chunking_gives_the_same_verdict(size: int) -> None:
    lines = [*_SPARK_STEADY, _spark(7, 3, 0.0065, 10.94), _spark(7, 312, 1.7164, 0.0), _spark(8, 3, 1.6271, 1.56)]
    whole, live = fed_whole_and_chunked(lines, size)
    assert [(i.failure, i.rank, i.step) for i in whole.verdict()] == [(i.failure, i.rank, i.step) for i in live.verdict()]
    assert [i.failure for i in whole.verdict()][:1] == ["loss_spike"]
