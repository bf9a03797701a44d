"""A plain torchrun DDP loop (4 CPU ranks, gloo) that logs through real structlog, with one injected fault.

Every rank logs each step with ``structlog`` configured as a service would: ISO timestamps,
the level, the rank bound to the logger, logfmt output (``LogfmtRenderer``) on stdout:
``timestamp=2026-12-03T19:40:51.123456Z level=info event=train_step rank=2 step=7 loss=nan
grad_norm=nan``; ``loss`` is the rank's local loss, ``grad_norm`` the all-reduced one. The
fault fires on one rank at one step (steps count from 1), from ``jobkit``.
"""

from __future__ import annotations

import os
from datetime import timedelta

import structlog
import torch
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
    structlog.configure(processors=[
        structlog.processors.TimeStamper(fmt="iso"), structlog.processors.add_log_level,
        structlog.processors.LogfmtRenderer(key_order=["timestamp", "level", "event", "rank"])])
    log = structlog.get_logger().bind(rank=rank)
    torch.distributed.init_process_group("gloo", timeout=timedelta(seconds=args.timeout))
    world = torch.distributed.get_world_size()
    log.info("start", world_size=world, backend="gloo", steps=args.steps)
    for step, loss, gn in ddp_steps(rank, local_rank, world, args.steps, args.fault, args.fault_rank, args.fault_step):
        log.info("train_step", step=step, loss=round(loss.item(), 4), grad_norm=round(gn.item(), 4))
    log.info("done")
    end_process_group()


if __name__ == "__main__":
    main()
