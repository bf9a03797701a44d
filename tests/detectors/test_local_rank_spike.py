"""A loss spike on lines tagged only with a local rank (torchrun's ``--tee 3`` prefix
``[default1]:``) names that rank on a one-node job, as a NaN on such lines already did.

Lines in fairseq's progress shape (``epoch 001:     13 / 30 loss=2.183, ppl=4.54, ...``, the
``fairseq_cli.train`` logger), each rank printing its own loss: rank 1's optimizer diverged
at update 17 while ranks 0, 2 and 3 kept training.
"""

from __future__ import annotations

from tests.helpers import engine_verdict

_RANK1 = [2.30, 2.31, 2.29, 2.31, 2.31, 2.29, 2.28, 2.27, 2.28, 2.26, 2.25, 2.22, 2.18, 1.83, 1.78, 1.79,
          3.44, 3.65, 5.99, 8.93, 6.54, 12.28, 10.42, 9.15]


def _line(rank: int, upd: int, loss: float) -> str:
    return (f"[default{rank}]:2026-12-05 16:03:04 | INFO | fairseq_cli.train | epoch 001:     {upd:>2} / 30 "
            f"loss={loss:.3f}, ppl=4.92, wps=38305, ups=18.70, wpb=2048, bsz=32, num_updates={upd}, lr=0.02")


def _job(spiking: int) -> list[str]:
    lines = []
    for rank in (2, 0, 3, 1):
        lines += [_line(rank, u, _RANK1[u - 1] if rank == spiking else 2.3 - 0.003 * u)
                  for u in range(1, len(_RANK1) + 1)]
    return lines


def test_the_spiking_local_rank_is_named() -> None:
    top = engine_verdict(_job(1))[0]
    assert (top.failure, top.rank) == ("loss_spike", 1)


def test_without_rank_tags_no_rank_is_named() -> None:
    lines = [x.split("]:", 1)[1] for x in _job(1) if x.startswith("[default1]")]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("loss_spike", None)
