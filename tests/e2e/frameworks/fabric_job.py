"""A tiny real Lightning Fabric loop (CPU, 4 DDP processes over gloo) with one injected fault.

Metric lines: ``fabric.print`` (rank 0) and ``fabric.log_dict`` into a ``CSVLogger`` under
``$PL_LOG_DIR/csv`` (rank 0). Launched by torchrun (Fabric sees TorchElastic) or by plain python
(Fabric's own launcher starts the other ranks). ``clip_gradients`` raises on a non-finite norm
unless ``--no-error-nonfinite``. The fault fires on one rank at one step (steps count from 1).
"""

from __future__ import annotations

import gc
import os
from datetime import timedelta

import torch
from jobkit import (  # a sibling: the job runs as a script from this folder
    BATCH,
    FAULTS,
    Synthetic,
    job_parser,
    make_net,
    redirect_own_output,
    step_loss,
)
from lightning.fabric import Fabric
from lightning.fabric.loggers import CSVLogger
from lightning.fabric.strategies import DDPStrategy
from torch.distributed.elastic.multiprocessing.errors import record


@record
def main() -> None:
    p = job_parser(FAULTS)
    p.add_argument("--no-error-nonfinite", action="store_true",
                   help="clip_gradients(error_if_nonfinite=False): train on and log the NaN")
    args = p.parse_args()
    if args.own_log_dir:
        redirect_own_output(args.own_log_dir, int(os.environ.get("RANK", "0")))
    logger = CSVLogger(os.path.join(os.environ.get("PL_LOG_DIR", os.environ.get("TMPDIR", "/tmp")), "csv"),
                       name="fabric", flush_logs_every_n_steps=1)
    strategy = DDPStrategy(process_group_backend="gloo", timeout=timedelta(seconds=args.timeout))
    fabric = Fabric(accelerator="cpu", devices=4, strategy=strategy, loggers=logger)
    fabric.launch()
    fabric.seed_everything(0)
    model = make_net()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    model, opt = fabric.setup(model, opt)
    data = fabric.setup_dataloaders(torch.utils.data.DataLoader(Synthetic(BATCH * 4 * args.steps), batch_size=BATCH))
    rank, local_rank = fabric.global_rank, fabric.local_rank
    fabric.print(f"Training {args.steps} steps on {fabric.world_size} processes")
    for step, (x, y) in enumerate(data, start=1):
        at_fault = rank == args.fault_rank and step == args.fault_step
        loss = step_loss(model, x, y, args.fault, at_fault, local_rank)
        fabric.backward(loss)
        gn = fabric.clip_gradients(model, opt, max_norm=1.0, error_if_nonfinite=not args.no_error_nonfinite)
        opt.step()
        opt.zero_grad()
        fabric.log_dict({"train_loss": loss.item(), "grad_norm": gn.item()}, step=step)
        fabric.print(f"iter {step}: loss {loss.item():.4f}, grad_norm {gn.item():.4f}")
        if step >= args.steps:
            break
    logger.finalize("success")
    fabric.print("done")
    fabric.barrier()
    del model, opt
    gc.collect()
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
