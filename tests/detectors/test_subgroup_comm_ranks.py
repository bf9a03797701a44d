"""A multi-node Megatron job's NCCL lines: the world communicator's ``comm 0x… rank 8 nranks 64``
ties a process (``host:pid``) to its global rank; its tensor-, pipeline- and data-parallel groups'
``rank 1 nranks 8`` do not (a sub-group's rank). torchrun's ``failed (exitcode: 1) local_rank: 0
(pid: 18894)`` is then that process, global rank 8, not rank 0. The lines are the shape of a
64-GPU Megatron-LM job's node log (corpus holdout26 h26a-006)."""

from __future__ import annotations

from tests.helpers import engine_verdict

_H = "node-0023"


def _lines(world_first: bool) -> list[str]:
    world = [f"{_H}:18894:18894 [0] NCCL INFO comm 0x47ac9f70 rank 8 nranks 64 cudaDev 0 busId 10000 - Init COMPLETE",
             f"{_H}:18898:18898 [4] NCCL INFO comm 0x48b34360 rank 12 nranks 64 cudaDev 4 busId 89000 - Init COMPLETE"]
    sub = [f"{_H}:18894:18894 [0] NCCL INFO comm 0x49d16950 rank 0 nranks 8 cudaDev 0 busId 10000 - Init COMPLETE",
           f"{_H}:18894:18894 [0] NCCL INFO comm 0x4926f760 rank 1 nranks 8 cudaDev 0 busId 10000 - Init COMPLETE",
           f"{_H}:18898:18898 [4] NCCL INFO comm 0x499bf120 rank 4 nranks 8 cudaDev 4 busId 89000 - Init COMPLETE"]
    return [*(world + sub if world_first else sub + world),
            " iteration        1/  500000 | consumed samples:          512 | lm loss: 1.102E+01 |",
            "Traceback (most recent call last):",
            '  File "/workspace/Megatron-LM/megatron/model/transformer.py", line 589, in bias_dropout_add',
            "    out = residual + out",
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 768.00 MiB (GPU 0; 79.35 GiB total "
            "capacity; 52.52 GiB already allocated; 552.12 MiB free; 53.97 GiB reserved in total by PyTorch)",
            "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 18895 closing signal SIGTERM",
            "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 18894) of "
            "binary: /usr/bin/python"]


def test_torchruns_failed_worker_is_the_global_rank_its_world_communicator_said() -> None:
    for world_first in (True, False):
        verdict = engine_verdict(_lines(world_first))
        assert verdict and verdict[0].failure == "cuda_oom", verdict
        assert verdict[0].rank == 8, (world_first, verdict[0])
