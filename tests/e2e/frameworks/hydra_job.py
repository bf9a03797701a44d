"""A Hydra-configured torchrun DDP loop (4 CPU ranks, gloo) with one injected fault.

``@hydra.main`` composes the job's config (the jobkit options become Hydra overrides:
``fault=nan fault_rank=2 fault_step=7``) and installs Hydra's default job logging, so every rank
logs through ``logging.getLogger(__name__)`` in Hydra's format on stderr:
``[2026-12-04 13:40:51,123][__main__][INFO] - step 7/20 loss=nan grad_norm=nan`` (the rank's local
loss, the all-reduced grad norm; the line does not name its rank, the launcher's layout does).
Hydra's run directory (its own copy of the log, ``.hydra/`` config dumps) is the rank's scratch
``outputs/rank_R``, not part of the recorded logs. The fault fires on one rank at one step (from 1).
"""

from __future__ import annotations

import logging
import os
import sys
from datetime import timedelta

import hydra
import torch
from jobkit import (  # a sibling: the job runs as a script from this folder
    FAULTS,
    ddp_steps,
    end_process_group,
    job_parser,
    redirect_own_output,
)
from omegaconf import DictConfig
from torch.distributed.elastic.multiprocessing.errors import record

log = logging.getLogger(__name__)


@hydra.main(version_base="1.3", config_path=None, config_name=None)
def train(cfg: DictConfig) -> None:
    rank, local_rank = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
    torch.distributed.init_process_group("gloo", timeout=timedelta(seconds=cfg.timeout))
    world = torch.distributed.get_world_size()
    log.info(f"rank {rank}/{world}: backend=gloo steps={cfg.steps} fault={cfg.fault}")
    for step, loss, gn in ddp_steps(rank, local_rank, world, cfg.steps, cfg.fault, cfg.fault_rank, cfg.fault_step, cfg.lr):
        log.info(f"step {step}/{cfg.steps} loss={loss.item():.4f} grad_norm={gn.item():.4f}")
    log.info("training finished")
    end_process_group()


@record
def main() -> None:
    args = job_parser(FAULTS).parse_args()
    rank = int(os.environ["RANK"])
    if args.own_log_dir:
        redirect_own_output(args.own_log_dir, rank)
    # what a user types after the script: Hydra overrides (+key=value adds a key to the empty config;
    # the fault's name is quoted, or Hydra would read 'nan' as a float)
    sys.argv = [sys.argv[0], f"hydra.run.dir=outputs/rank_{rank}", "+lr=0.05", f"+fault='{args.fault}'",
                *(f"+{k}={v}" for k, v in (("steps", args.steps), ("fault_rank", args.fault_rank),
                                           ("fault_step", args.fault_step), ("timeout", args.timeout)))]
    train()


if __name__ == "__main__":
    main()
