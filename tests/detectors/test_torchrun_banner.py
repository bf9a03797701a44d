"""torchrun prints ``Setting OMP_NUM_THREADS environment variable for each process to be 1 in
default`` only when it starts more than one process on the node (torch/distributed/run.py:
``nproc_per_node > 1``). Under it, metric lines that only rank 0 prints are rank-zero-only
logging: a spike in them names no rank. mmcv's ``UserWarning`` with the same words (about
dataloader workers) says nothing of the kind. The shape is a CPU torchrun job logging its
validation loss from rank 0 only (corpus holdout26 g26-014)."""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict

_BANNER = [
    "W1207 07:02:43.738000 18022 torch/distributed/run.py:874] *****************************************",
    "W1207 07:02:43.738000 18022 torch/distributed/run.py:874] Setting OMP_NUM_THREADS environment variable for each "
    "process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal "
    "performance in your application as needed.",
    "W1207 07:02:43.738000 18022 torch/distributed/run.py:874] *****************************************",
]
_MMCV = ["/opt/conda/lib/python3.8/site-packages/mmcv/utils/setup_env.py:32: UserWarning: Setting OMP_NUM_THREADS "
         "environment variable for each process to be 1 in default, to avoid your system being overloaded, please "
         "further tune the variable for optimal performance in your application as needed."]


def _epochs() -> list[str]:
    vals = [1.3621, 1.1654, 0.9364, 0.6999, 201.667, 252.7609, 100.9419, 193.0487, 77.3246]
    return [f"2026-12-07 07:02:59,269 - INFO - cnn.trainer - [RANK 0] epoch {e}/9 done: val_loss={v:.4f} val_acc=0.4 lr=0.1"
            for e, v in enumerate(vals, 1)]


def test_rank_zero_only_lines_under_torchruns_banner_name_no_rank() -> None:
    verdict = engine_verdict(_BANNER + _epochs())
    assert verdict and verdict[0].failure == "loss_spike" and verdict[0].rank is None, verdict


@pytest.mark.parametrize("head", [[], _MMCV], ids=["no-banner", "mmcv-warning"])
def test_without_torchruns_banner_the_lines_rank_stands(head: list[str]) -> None:
    verdict = engine_verdict(head + _epochs())
    assert verdict and verdict[0].failure == "loss_spike" and verdict[0].rank == 0, verdict
