"""A tiny real ``lightning.Trainer`` job (CPU, 4 DDP processes over gloo) with one injected fault.

Metric lines are Lightning's own: ``self.log(..., prog_bar=True)`` in the progress bar
(Lightning's default, RichProgressBar when rich is installed, or ``--bar tqdm``)
on rank 0 only (the rank's own value, or with ``--sync-dist`` the mean over ranks), or with ``--csv`` no bar and a
``CSVLogger`` writing ``metrics.csv`` under ``$PL_LOG_DIR/csv`` plus Lightning's Python logging.
Launched by torchrun (Lightning sees TorchElastic), or with ``--strategy ddp`` / ``ddp_spawn``
by plain ``python`` (Lightning starts the other ranks). The fault fires in ``training_step`` on
one rank at one optimizer step (steps count from 1).
"""

from __future__ import annotations

import argparse
import logging
import os
from datetime import timedelta

import lightning as L
import torch
from jobkit import (  # a sibling: the job runs as a script from this folder
    BATCH,
    FAULTS,
    FEATURES,
    HIDDEN,
    Synthetic,
    end_process_group,
    job_parser,
    pre_fault,
    redirect_own_output,
)
from lightning.pytorch.callbacks import TQDMProgressBar
from lightning.pytorch.loggers import CSVLogger
from lightning.pytorch.strategies import DDPStrategy
from lightning.pytorch.utilities import grad_norm
from torch.distributed.elastic.multiprocessing.errors import record


def parse_args() -> argparse.Namespace:
    p = job_parser([*FAULTS, "overflow"])
    p.add_argument("--precision", default="32-true")
    p.add_argument("--strategy", default="ddp", choices=["ddp", "ddp_spawn"])
    p.add_argument("--bar", default="default", choices=["default", "tqdm"],
                   help="default: Lightning's choice (RichProgressBar when rich is installed)")
    p.add_argument("--sync-dist", action="store_true", help="self.log(..., sync_dist=True): the mean over ranks")
    p.add_argument("--csv", action="store_true", help="CSVLogger, no progress bar, Python logging INFO")
    return p.parse_args()


class Tiny(L.LightningModule):
    def __init__(self, fault: str, fault_rank: int, fault_step: int, sync_dist: bool = False) -> None:
        super().__init__()
        self.sync_dist = sync_dist
        self.net = torch.nn.Sequential(torch.nn.Linear(FEATURES, HIDDEN), torch.nn.ReLU(),
                                       torch.nn.Linear(HIDDEN, 1))
        self.fault, self.fault_rank, self.fault_step = fault, fault_rank, fault_step

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        x, y = batch
        step = self.global_step + 1
        at_fault = self.global_rank == self.fault_rank and step == self.fault_step
        pre_fault(self.fault, at_fault, self.local_rank, step=step)
        if at_fault and self.fault == "nan":
            x = x.clone()
            x[0, 0] = float("nan")
        if at_fault and self.fault == "overflow":
            x = x * 1e6  # fp16 activations exceed 65504 -> inf
        pred = self.net(x.to(self.dtype)).squeeze(-1)
        if at_fault and self.fault == "spike":
            pred.register_hook(lambda g: g * 400.0)  # this rank's gradients x400: grad_norm ~100x
        loss = torch.nn.functional.mse_loss(pred.float(), y.float())
        self.log("train_loss", loss, prog_bar=True, sync_dist=self.sync_dist)
        return loss

    def on_before_optimizer_step(self, optimizer: torch.optim.Optimizer) -> None:
        norms = grad_norm(self, norm_type=2)
        self.log("grad_norm", norms["grad_2.0_norm_total"], prog_bar=True)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.05)


@record
def main() -> None:
    args = parse_args()
    if args.own_log_dir:
        redirect_own_output(args.own_log_dir, int(os.environ.get("RANK", "0")))
    if args.csv:
        logging.basicConfig(level=logging.INFO,
                            format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    L.seed_everything(0)
    scratch = os.environ.get("TMPDIR", "/tmp")
    logger: CSVLogger | bool = (CSVLogger(os.path.join(os.environ.get("PL_LOG_DIR", scratch), "csv"),
                                          name="tiny") if args.csv else False)
    strategy = DDPStrategy(process_group_backend="gloo", timeout=timedelta(seconds=args.timeout),
                           start_method="spawn" if args.strategy == "ddp_spawn" else "popen")
    trainer = L.Trainer(accelerator="cpu", devices=4, strategy=strategy, precision=args.precision,
                        max_steps=args.steps, log_every_n_steps=1, logger=logger,
                        enable_progress_bar=not args.csv,
                        enable_checkpointing=False, gradient_clip_val=1.0, default_root_dir=scratch,
                        callbacks=[TQDMProgressBar()] if args.bar == "tqdm" else None)
    data = torch.utils.data.DataLoader(Synthetic(BATCH * 4 * args.steps), batch_size=BATCH)
    trainer.fit(Tiny(args.fault, args.fault_rank, args.fault_step, args.sync_dist), data)
    del trainer  # the DDP wrapper goes before the group (jobkit.end_process_group)
    end_process_group()


if __name__ == "__main__":
    main()
