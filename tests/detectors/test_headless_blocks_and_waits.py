"""Two traceback shapes real pastes have. A rank-tagged traceback pasted without its header (MPI's
``[1,7]<stderr>:  File ...`` lines right below the untagged error the user quoted first) claims that
error for its rank, as a ``Traceback`` header would (torchrec under mpirun, corpus holdout20
h20c-016). A timeout raised out of a torch.distributed collective's wait (torch 1.x gloo's bare
``RuntimeError: Operation timed out!`` from ``all_reduce``'s ``work.wait()``, ESPnet's spawned
workers at an epoch's end, holdout20 h20c-020) is a collective timeout, not a crash of its own."""

from __future__ import annotations

from tests.helpers import engine_verdict

_SITE = "/opt/conda/envs/ptca/lib/python3.8/site-packages"


def test_a_tagged_traceback_without_its_header_claims_the_error_above() -> None:
    lines = ["RuntimeError: Storage size calculation overflowed with sizes=[8410156404468110876]",
             f'[1,7]<stderr>:  File "{_SITE}/torchrec/distributed/train_pipeline.py", line 506, in progress',
             "[1,7]<stderr>:    (losses, output) = cast(Tuple[torch.Tensor, Out], self._model(batch_i))",
             f'[1,7]<stderr>:  File "{_SITE}/torch/nn/modules/module.py", line 1130, in _call_impl',
             "[1,7]<stderr>:    return forward_call(*input, **kwargs)"]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("rank_exception", 7)


def test_an_untagged_error_far_above_the_frames_stays_unclaimed() -> None:
    lines = ["RuntimeError: Storage size calculation overflowed with sizes=[8410156404468110876]",
             *[f"noise line {i}" for i in range(12)],
             f'[1,7]<stderr>:  File "{_SITE}/torchrec/distributed/train_pipeline.py", line 506, in progress']
    assert engine_verdict(lines)[0].rank is None


def _worker(name: str, message: str, fn: str = "all_reduce") -> list[str]:
    return [f"Process {name}:", "Traceback (most recent call last):",
            '  File "/espnet/espnet2/train/trainer.py", line 384, in train_one_epoch',
            "    torch.distributed.all_reduce(iterator_stop, ReduceOp.SUM)",
            f'  File "/miniconda/envs/espnet/lib/python3.7/site-packages/torch/distributed/distributed_c10d.py", line 911, in {fn}',
            "    work.wait()", f"RuntimeError: {message}"]


def test_a_timeout_out_of_a_collectives_wait_is_a_collective_timeout() -> None:
    top = engine_verdict(_worker("SpawnProcess-4", "Operation timed out!") + _worker("SpawnProcess-2", "Operation timed out!"))[0]
    assert top.failure == "collective_timeout"


def test_another_error_out_of_a_collective_stays_an_exception() -> None:
    top = engine_verdict(_worker("SpawnProcess-4", "Tensors must be CUDA and dense"))[0]
    assert top.failure != "collective_timeout"
