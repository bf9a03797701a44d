"""Per-rank lines that count iterations within an epoch and carry no global step
(``[2] Epoch 2 [400/1600]  loss: 19785224.0000``, mpirun's ``-prepend-rank`` tag): a rank whose loss
exploded at a point in the epoch where its peers' was still ordinary, the others following one
logged point later, started it; every rank spiking at the same point is the job's. The shape is a
CPU torchrun job with a units bug on one rank (corpus holdout18 g18-067)."""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict


def _job(first_bad: int | None) -> list[str]:
    lines = ["$ torchrun --nproc_per_node=3 train.py"]
    for epoch in range(3):
        for it in (400, 800, 1200, 1600):
            for r in (1, 0, 2):
                loss = 2.0 / (1 + epoch + it / 1600)
                if epoch == 2 and first_bad is not None:
                    if r == first_bad:
                        loss = 1.9e7
                    elif it >= 800:
                        loss = 40.0 + it / 100
                elif epoch == 2 and first_bad is None:
                    loss = 1.9e7
                lines.append(f"[{r}] Epoch {epoch} [{it}/1600]  loss: {loss:.4f}")
    return lines


@pytest.mark.parametrize("bad", [2, 0])
def test_the_rank_that_spiked_first_in_the_epoch_is_named(bad: int) -> None:
    top = engine_verdict(_job(bad))[0]
    assert (top.failure, top.rank) == ("loss_spike", bad), top


def test_every_rank_spiking_at_the_same_point_names_no_rank() -> None:
    verdict = engine_verdict(_job(None))
    assert verdict and verdict[0].failure == "loss_spike" and verdict[0].rank is None, verdict
