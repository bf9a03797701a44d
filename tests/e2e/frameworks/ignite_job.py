"""A tiny real PyTorch-Ignite job (CPU, 4 processes over gloo) with one injected fault.

``Engine`` + ``ProgressBar`` (rank 0) + ``RunningAverage`` + ``setup_logger`` (rank 0 logs) +
``TerminateOnNan`` (stops only the rank whose output is non-finite). Launched by torchrun, or with
``--spawn`` by plain python (``idist.Parallel(nproc_per_node=4)`` spawns the ranks, one console).
The fault fires on one rank at one iteration (steps count from 1).
"""

from __future__ import annotations

import argparse
from datetime import timedelta
from typing import Any

import ignite.distributed as idist
import torch
from ignite.contrib.handlers import ProgressBar
from ignite.engine import Engine, Events
from ignite.handlers import TerminateOnNan
from ignite.metrics import RunningAverage
from ignite.utils import setup_logger
from jobkit import (  # a sibling: the job runs as a script from this folder
    BATCH,
    FAULTS,
    Synthetic,
    job_parser,
    make_net,
    redirect_own_output,
    step_loss,
)


def training(local_rank: int, args: argparse.Namespace) -> None:
    rank = idist.get_rank()
    if args.own_log_dir:
        redirect_own_output(args.own_log_dir, rank)
    logger = setup_logger("trainer", distributed_rank=rank)
    torch.manual_seed(0)
    model = idist.auto_model(make_net())
    opt = idist.auto_optim(torch.optim.SGD(model.parameters(), lr=0.05))
    data = idist.auto_dataloader(Synthetic(BATCH * 4 * args.steps), batch_size=BATCH * idist.get_world_size(),
                                 shuffle=False)

    def step_fn(engine: Engine, batch: tuple[torch.Tensor, torch.Tensor]) -> float:
        step = engine.state.iteration
        x, y = batch
        at_fault = rank == args.fault_rank and step == args.fault_step
        model.train()
        loss = step_loss(model, x, y, args.fault, at_fault, idist.get_local_rank())
        opt.zero_grad()
        loss.backward()
        gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        engine.state.grad_norm = gn.item()  # type: ignore[attr-defined]
        return loss.item()

    trainer = Engine(step_fn)
    trainer.logger = setup_logger("ignite.engine.Engine", distributed_rank=rank)
    RunningAverage(output_transform=lambda out: out).attach(trainer, "loss")
    trainer.add_event_handler(Events.ITERATION_COMPLETED, TerminateOnNan())
    if rank == 0:
        ProgressBar(persist=True).attach(trainer, metric_names=["loss"])

    @trainer.on(Events.ITERATION_COMPLETED)
    def log(engine: Engine) -> None:
        state: Any = engine.state
        logger.info(f"Iteration {state.iteration}: running loss {state.metrics['loss']:.4f}, "
                    f"grad_norm {state.grad_norm:.4f}")

    trainer.run(data, max_epochs=1, epoch_length=args.steps)
    idist.barrier()


def main() -> None:
    p = job_parser(FAULTS)
    p.add_argument("--spawn", action="store_true", help="Parallel(nproc_per_node=4): ignite starts the ranks")
    args = p.parse_args()
    if args.spawn:
        with idist.Parallel(backend="gloo", nproc_per_node=4, timeout=timedelta(seconds=args.timeout)) as parallel:
            parallel.run(training, args)
        return
    # torchrun-launched: Parallel(backend=...) would call idist.initialize without the timeout
    # (it forwards it only to spawn), so a hang would never time out; initialize here.
    idist.initialize("gloo", timeout=timedelta(seconds=args.timeout))
    try:
        training(idist.get_local_rank(), args)
    finally:
        idist.finalize()


if __name__ == "__main__":
    main()
