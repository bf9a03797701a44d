"""A per-epoch iteration counter orders one epoch's metric lines across ranks.

MMEngine's epoch-based loop prints ``Epoch(train)  [1][ 500/2931]`` (real line: open-mmlab
mmdetection, corpus holdout3 h3-027); DeiT/MAE print ``Epoch: [0]  [  560/21947]``. The second
counter restarts every epoch, so it is no step, but within one epoch it says which line came
first. torchrun's ``--tee 3`` flushes each rank's block whenever it likes, so the file order
is not the job's: here rank 0's block, already NaN at iteration 10, is printed before rank 1's,
whose own loss went NaN at iteration 9 (the grad norm is all-reduced, so every rank shows it).
"""

from __future__ import annotations

from tests.helpers import engine_verdict

_FMT = ("[default{r}]:12/05 16:03:05 - mmengine - INFO - Epoch(train) [1][{i:>3}/20]  lr: 5.0000e-02  "
        "eta: 0:00:06  time: 0.0051  data_time: 0.0011  memory: 0  loss: {loss}  grad_norm: {gn}")


def _block(rank: int, bad_loss_from: int, bad_grad_from: int = 9, last: int = 12) -> list[str]:
    return [_FMT.format(r=rank, i=i, loss="nan" if i >= bad_loss_from else f"2.{290 - i:03d}",
                        gn="nan" if i >= bad_grad_from else "0.2641") for i in range(1, last + 1)]


def _job(first_bad: dict[int, int]) -> list[str]:
    lines = ["[default0]:12/05 16:03:05 - mmengine - INFO - world_size=4 backend=gloo"]
    for rank in (0, 2, 3, 1):  # the order torchrun happened to flush them
        lines += _block(rank, first_bad.get(rank, 10))
    return lines


def test_the_rank_whose_loss_went_nan_first_in_the_epoch_is_named() -> None:
    top = engine_verdict(_job({1: 9}))[0]
    assert (top.failure, top.rank) == ("nonfinite_loss", 1)


def test_two_ranks_nan_at_the_same_iteration_name_no_rank() -> None:
    top = engine_verdict(_job({1: 9, 3: 9}))[0]
    assert (top.failure, top.rank) == ("nonfinite_loss", None)


def test_the_deit_counter_orders_lines_too() -> None:
    lines = []
    for rank, bad in ((0, 40), (1, 30)):
        lines += [f"[default{rank}]:Epoch: [0]  [{i:>4}/1251]  eta: 0:10:00  lr: 0.000100  "
                  f"loss: {'nan' if i >= bad else '6.9000'} (6.9000)  time: 0.4000  data: 0.0100"
                  for i in range(10, 60, 10)]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("nonfinite_loss", 1)
