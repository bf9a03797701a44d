"""A StopIteration that ends a traceback was not caught: the rank died of it.

A data iterator that runs dry inside the training step (Megatron's ``get_batch_on_this_tp_rank``
calling ``next(data_iterator)``, DataLoader's ``__next__`` doing ``raise StopIteration``) ends
the rank's traceback with a bare ``StopIteration`` line, no message and no "Error" in its name.
It is an uncaught exception like any other; the word alone elsewhere (a log message, an
iterator a library catches) is not. When several ranks die of the same bare exception, the job's
data ran out everywhere: no rank started it. Shapes: Megatron-LM under torchrun and srun
(``[rank36]:`` tags, corpus h27a-002), torch 2.7's DataLoader frames.
"""

from __future__ import annotations

from tests.helpers import engine_verdict


def _died(rank: int) -> list[str]:
    p = f"[rank{rank}]: "
    return [
        f"{p}Traceback (most recent call last):",
        f'{p}  File "/workspace/Megatron-LM/megatron/training/utils.py", line 537, in get_batch_on_this_tp_rank',
        f"{p}    data = next(data_iterator)",
        f'{p}  File "/usr/local/lib/python3.12/dist-packages/torch/utils/data/dataloader.py", line 1471, in _next_data',
        f"{p}    raise StopIteration",
        f"{p}StopIteration",
    ]


def test_a_traceback_ending_in_stopiteration_is_the_ranks_crash() -> None:
    top = engine_verdict([" iteration      120/  5000 | lm loss: 2.31 |", *_died(3)])[0]
    assert (top.failure, top.rank) == ("rank_exception", 3)


def test_every_rank_out_of_data_names_no_rank() -> None:
    top = engine_verdict([*_died(2), *_died(6)])[0]
    assert (top.failure, top.rank) == ("rank_exception", None)


def test_the_word_alone_is_no_crash() -> None:
    lines = ["[rank0]: INFO epoch 3 done; loader raised StopIteration, restarting the sampler",
             "[rank0]: StopIteration"]
    assert not [i for i in engine_verdict(lines) if i.severity == "critical"]
