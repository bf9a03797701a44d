"""A torchrun DDP loop (4 CPU ranks, gloo) that logs only to Weights & Biases, offline, with one fault.

Rank 0 calls ``wandb.init(mode="offline")`` and ``wandb.log({"loss": ..., "grad_norm": ...},
step=step)`` every step (its local loss, the all-reduced grad norm); the job prints nothing of its
own. What reaches the console is wandb's: ``wandb: Tracking run with wandb version ...`` at the
start and, when the run finishes (normally, or from wandb's exit hook after an exception), its
``Run history:`` (a sparkline per metric) and ``Run summary:`` (the last value per metric:
``wandb:      loss nan``). The run directory is scratch, not part of the recorded logs. The fault
fires on one rank at one step (from 1), from ``jobkit``.
"""

from __future__ import annotations

import os
from datetime import timedelta

import torch
import wandb
from jobkit import (  # a sibling: the job runs as a script from this folder
    FAULTS,
    ddp_steps,
    end_process_group,
    job_parser,
    redirect_own_output,
)
from torch.distributed.elastic.multiprocessing.errors import record


@record
def main() -> None:
    args = job_parser(FAULTS).parse_args()
    rank, local_rank = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
    if args.own_log_dir:
        redirect_own_output(args.own_log_dir, rank)
    torch.distributed.init_process_group("gloo", timeout=timedelta(seconds=args.timeout))
    world = torch.distributed.get_world_size()
    run = wandb.init(mode="offline", project="rankwatch-fw", dir=".",
                     config={"lr": 0.05, "steps": args.steps, "world_size": world}) if rank == 0 else None
    for step, loss, gn in ddp_steps(rank, local_rank, world, args.steps, args.fault, args.fault_rank, args.fault_step):
        if run is not None:
            run.log({"loss": loss.item(), "grad_norm": gn.item()}, step=step)
    if run is not None:
        run.finish()
    end_process_group()


if __name__ == "__main__":
    main()
