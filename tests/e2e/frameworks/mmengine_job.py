"""A tiny real MMEngine (OpenMMLab) job: ``Runner`` under torchrun (4 CPU ranks, gloo), one fault.

``Runner(launcher="pytorch")`` with an iteration-based ``train_cfg``, ``OptimWrapper`` (SGD,
``clip_grad=dict(max_norm=1.0)``, so the logged ``grad_norm`` is the all-reduced one) and a
``LoggerHook(interval=1)``: rank 0's ``MMLogger`` prints MMEngine's environment and config dump,
then ``12/04 13:40:51 - mmengine - INFO - Iter(train) [ 7/20]  lr: 5.0000e-02  eta: ...  time: ...
data_time: ...  memory: ...  grad_norm: nan  loss: nan`` (the loss averaged over ranks by
``parse_losses``; the other ranks' loggers print errors only). The work dir (MMEngine's own log
file, ``vis_data/``) is scratch, not part of the recorded logs. The fault fires in the model's
forward on one rank at one iteration (from 1), from ``jobkit``.
"""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Any

import torch
from jobkit import (  # a sibling: the job runs as a script from this folder
    BATCH,
    FAULTS,
    Synthetic,
    end_process_group,
    job_parser,
    make_net,
    redirect_own_output,
    step_loss,
)
from mmengine.model import BaseModel
from mmengine.runner import Runner
from torch.distributed.elastic.multiprocessing.errors import record


class Regressor(BaseModel):
    """The shared MLP as an MMEngine model; the fault fires in the k-th training forward."""

    def __init__(self, fault: str, fault_rank: int, fault_step: int) -> None:
        super().__init__()
        self.net, self.fault, self.fault_rank, self.fault_step, self.calls = make_net(), fault, fault_rank, fault_step, 0

    def forward(self, inputs: torch.Tensor, data_samples: Any = None, mode: str = "tensor") -> Any:
        if mode != "loss":
            return self.net(inputs)
        self.calls += 1
        rank = int(os.environ["RANK"])
        at_fault = rank == self.fault_rank and self.calls == self.fault_step
        return {"loss": step_loss(self.net, inputs, data_samples, self.fault, at_fault, int(os.environ["LOCAL_RANK"]))}


def collate(batch: list[tuple[torch.Tensor, torch.Tensor]]) -> dict[str, torch.Tensor]:
    xs, ys = zip(*batch, strict=True)
    return {"inputs": torch.stack(xs), "data_samples": torch.stack(ys)}


@record
def main() -> None:
    args = job_parser(FAULTS).parse_args()
    rank = int(os.environ["RANK"])
    if args.own_log_dir:
        redirect_own_output(args.own_log_dir, rank)
    # MMEngine's own init_dist("pytorch") calls torch.cuda.set_device; on CPU the job starts the
    # group itself (the Runner then skips init_dist) and wraps the model without device_ids
    torch.distributed.init_process_group("gloo", timeout=timedelta(seconds=args.timeout))
    data = Synthetic(BATCH * 4 * args.steps)
    runner = Runner(
        model=Regressor(args.fault, args.fault_rank, args.fault_step),
        work_dir="work_dir",
        train_dataloader={"dataset": data, "batch_size": BATCH, "num_workers": 0,
                          "sampler": {"type": "DefaultSampler", "shuffle": False}, "collate_fn": collate},
        train_cfg={"by_epoch": False, "max_iters": args.steps, "val_interval": args.steps + 1},
        optim_wrapper={"optimizer": {"type": "SGD", "lr": 0.05}, "clip_grad": {"max_norm": 1.0}},
        default_hooks={"logger": {"type": "LoggerHook", "interval": 1},
                       "checkpoint": {"type": "CheckpointHook", "interval": args.steps + 1}},
        log_processor={"by_epoch": False},
        launcher="pytorch",
        cfg={"model_wrapper_cfg": {"type": "MMDistributedDataParallel", "device_ids": None}},
        env_cfg={"dist_cfg": {"backend": "gloo"}},
        randomness={"seed": 0},
    )
    runner.train()
    del runner  # the DDP wrapper must be gone before the group (jobkit.end_process_group)
    end_process_group()


if __name__ == "__main__":
    main()
