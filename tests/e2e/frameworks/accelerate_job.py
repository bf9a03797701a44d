"""A tiny real accelerate custom loop (CPU, 4 processes over gloo) with one injected fault.

Launched by torchrun or by ``accelerate launch --multi_gpu`` (``ACCELERATE_USE_CPU``). Metric
lines: ``accelerate.logging.get_logger`` with ``main_process_only=False`` for every rank's local
loss next to the ``accelerator.gather``ed list (``[RANK N]`` prefixed), the rank-0 mean loss and
``clip_grad_norm_`` result, ``accelerator.print``, and a tqdm bar with ``set_postfix(loss=...)``
on the main process. The fault fires on one rank at one step (steps count from 1).
"""

from __future__ import annotations

import gc
import logging
import os
from datetime import timedelta

import torch
from accelerate import Accelerator, InitProcessGroupKwargs
from accelerate.logging import get_logger
from jobkit import (  # a sibling: the job runs as a script from this folder
    BATCH,
    FAULTS,
    Synthetic,
    job_parser,
    make_net,
    redirect_own_output,
    step_loss,
)
from torch.distributed.elastic.multiprocessing.errors import record
from tqdm.auto import tqdm

logger = get_logger(__name__)


@record
def main() -> None:
    args = job_parser(FAULTS).parse_args()
    if args.own_log_dir:
        redirect_own_output(args.own_log_dir, int(os.environ.get("RANK", "0")))
    logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                        datefmt="%m/%d/%Y %H:%M:%S", level=logging.INFO)
    accelerator = Accelerator(cpu=True, log_with=None, kwargs_handlers=[
        InitProcessGroupKwargs(backend="gloo", timeout=timedelta(seconds=args.timeout))])
    logger.info(accelerator.state, main_process_only=False)
    torch.manual_seed(0)
    model = make_net()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    data = torch.utils.data.DataLoader(Synthetic(BATCH * 4 * args.steps), batch_size=BATCH)
    model, opt, data = accelerator.prepare(model, opt, data)
    rank, local_rank = accelerator.process_index, accelerator.local_process_index
    bar = tqdm(range(args.steps), disable=not accelerator.is_local_main_process)
    accelerator.print(f"***** Running training: {args.steps} steps, {accelerator.num_processes} processes *****")
    for step, (x, y) in enumerate(data, start=1):
        at_fault = rank == args.fault_rank and step == args.fault_step
        loss = step_loss(model, x, y, args.fault, at_fault, local_rank)
        accelerator.backward(loss)
        gn = accelerator.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()
        losses = accelerator.gather(loss.detach().reshape(1))
        logger.info(f"step {step}: local loss {loss.item():.4f}, gathered losses {losses.tolist()}",
                    main_process_only=False)
        logger.info(f"step {step}: mean loss {losses.mean().item():.4f} grad_norm {gn.item():.4f}")
        bar.set_postfix(loss=losses.mean().item())
        bar.update(1)
        if step >= args.steps:
            break
    bar.close()
    accelerator.print("training done")
    accelerator.wait_for_everyone()
    del model, opt, data
    gc.collect()
    accelerator.end_training()
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
