"""Tiny DDP training job for rankwatch's end-to-end scenarios (gloo, CPU, torchrun).

Every rank prints one context line at start-up and one flushed line per step:

    config: precision=fp16 loss_scaling=true world_size=4 backend=gloo rank=2
    step 7 | loss 0.912345 | grad_norm 1.234567 | loss_scale 65536

``loss`` is the rank's *local* loss; ``grad_norm`` is the norm of the all-reduced
(and, with a GradScaler, unscaled) gradients, so it is the same on every rank;
``loss_scale`` (only with ``--scaler``) is the scaler's scale after ``update()``.

``--style`` picks how these lines are printed (python logging, loguru, rich, JSON,
tqdm, HF-Trainer-like or Lightning-like rank-zero-only logging...; see styles.py); the
numbers are the same in every style.

``--fault`` injects one failure on ``--fault-rank`` at ``--fault-step`` (see
tests/e2e/README.md for what each one looks like in the logs). Data and weights are
seeded, so a run is reproducible up to timing.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
from styles import STYLES, StepRecord  # this folder is on sys.path when run as a script
from torch.distributed.elastic.multiprocessing.errors import record
from torch.nn.parallel import DistributedDataParallel

FAULTS = ("none", "exception", "oom", "sigkill", "nan", "fp16_overflow", "scale_collapse", "hang")
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}
FEATURES, HIDDEN, BATCH = 16, 32, 32


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--precision", choices=("fp32", "fp16", "bf16"), default="fp32")
    p.add_argument("--scaler", action=argparse.BooleanOptionalAction, default=False,
                   help="use torch.amp.GradScaler (fp16 loss scaling)")
    p.add_argument("--init-scale", type=float, default=2.0**16, help="GradScaler init_scale")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--timeout", type=float, default=120.0,
                   help="process-group timeout in seconds (a hang becomes a collective timeout); the "
                        "scenarios that fault pass 10, the others keep this margin so a slow start on "
                        "a busy machine (4 ranks importing torch on 2 cores) never times out")
    p.add_argument("--fault", choices=FAULTS, default="none")
    p.add_argument("--fault-rank", type=int, default=2)
    p.add_argument("--fault-step", type=int, default=6)
    p.add_argument("--style", choices=sorted(STYLES), default="plain", help="logging style")
    p.add_argument("--own-log-dir", default=None,
                   help="write this rank's stdout+stderr (fds 1 and 2) to DIR/node0/rank_<R>.log")
    return p.parse_args(argv)


def redirect_own_output(log_dir: str, rank: int) -> None:
    """Point fds 1 and 2 at DIR/node0/rank_<rank>.log, so C++ messages land there too."""
    path = os.path.join(log_dir, "node0", f"rank_{rank}.log")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    sys.stdout.reconfigure(line_buffering=True)
    sys.stderr.reconfigure(line_buffering=True)


def cuda_oom_message(gpu: int) -> str:
    """The text of the OutOfMemoryError that PyTorch's CUDA caching allocator raises
    (c10/cuda/CUDACachingAllocator.cpp, torch 2.x); this CPU job raises it at the fault
    step, as a rank whose GPU ran out of memory would. GPU index = local rank (one GPU per
    rank, no CUDA_VISIBLE_DEVICES remapping)."""
    return (f"CUDA out of memory. Tried to allocate 2.00 GiB. GPU {gpu} has a total capacity of "
            "79.19 GiB of which 1.06 GiB is free. Including non-PyTorch memory, this process has "
            "78.12 GiB memory in use. Of the allocated memory 75.31 GiB is allocated by PyTorch, "
            "and 1.33 GiB is reserved by PyTorch but unallocated. If reserved but unallocated "
            "memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
            "fragmentation.  See documentation for Memory Management  "
            "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")


def batch(seed: int, rank: int, step: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The same (x, y) for a given (seed, rank, step) on every machine."""
    w_true = torch.linspace(-1.0, 1.0, FEATURES).unsqueeze(1)
    g = torch.Generator().manual_seed(seed * 1_000_003 + rank * 10_007 + step)
    x = torch.randn(BATCH, FEATURES, generator=g)
    y = 0.25 * (x @ w_true) + 0.05 * torch.randn(BATCH, 1, generator=g)
    return x, y


@record
def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    rank = int(os.environ.get("RANK", "0"))
    if args.own_log_dir:
        redirect_own_output(args.own_log_dir, rank)
    if args.scaler and args.precision != "fp16":
        raise SystemExit("--scaler needs --precision fp16")

    dist.init_process_group("gloo", timeout=timedelta(seconds=args.timeout))
    rank, world = dist.get_rank(), dist.get_world_size()
    reporter = STYLES[args.style](rank, world)
    reporter.config(f"config: precision={args.precision} loss_scaling={str(args.scaler).lower()} "
                    f"world_size={world} backend=gloo rank={rank}")

    torch.manual_seed(args.seed)
    model = DistributedDataParallel(torch.nn.Sequential(
        torch.nn.Linear(FEATURES, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    scaler = torch.amp.GradScaler("cpu", init_scale=args.init_scale) if args.scaler else None
    autocast_dtype = DTYPES.get(args.precision)
    faulty = rank == args.fault_rank

    for step in range(1, args.steps + 1):
        at_fault = faulty and step == args.fault_step
        if at_fault and args.fault == "hang":
            time.sleep(3600)  # never reaches this step's all-reduce; peers time out
        if at_fault and args.fault == "exception":
            raise ValueError(f"corrupt sample in shard 3 at step {step}: "
                             f"expected {FEATURES} features, got 0")
        if at_fault and args.fault == "oom":
            raise torch.OutOfMemoryError(cuda_oom_message(int(os.environ.get("LOCAL_RANK", rank))))
        if at_fault and args.fault == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)

        x, y = batch(args.seed, rank, step)
        if at_fault and args.fault == "nan":
            x[0, 0] = float("nan")
        if at_fault and args.fault == "fp16_overflow":
            x = x * 1e6  # fp16 activations exceed 65504 -> inf

        with torch.autocast("cpu", dtype=autocast_dtype or torch.bfloat16,
                            enabled=autocast_dtype is not None):
            out = model(x)
        loss = torch.nn.functional.mse_loss(out.float(), y)

        backward_loss = loss
        if faulty and args.fault == "scale_collapse" and step >= args.fault_step:
            backward_loss = loss * 1e30  # gradients overflow fp16 at any loss scale

        opt.zero_grad(set_to_none=True)
        if scaler is not None:
            scaler.scale(backward_loss).backward()
            scaler.unscale_(opt)
        else:
            backward_loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        if scaler is not None:
            scaler.step(opt)
            scaler.update()
        else:
            opt.step()

        rec = StepRecord(step, args.steps, loss.item(), grad_norm.item(),
                         scaler.get_scale() if scaler is not None else None, args.lr)
        mean_loss = None
        if (value := reporter.contribution(rec)) is not None:  # rank-zero-only styles: reduced
            reduced = torch.tensor([value])
            dist.all_reduce(reduced)
            mean_loss = reduced.item() / world
        reporter.step(rec, mean_loss)

    reporter.end()
    del model, opt, scaler  # DDP's Reducer holds the gloo group: free it first (see _LEAVING)
    gc.collect()
    dist.barrier()
    dist.destroy_process_group()


# _LEAVING: while the DDP model lives, destroy_process_group only drops the registry's reference
# to the gloo group; the group then dies in interpreter finalisation, where its threads abort now
# and then ("terminate called without an active exception", exit -6, no Python frame; see
# pytorch/pytorch#190489). So the model goes first, then every rank meets and leaves together.
# (gc is imported here, not above, so that the lines above keep their numbers: the hang
# recordings' tracebacks cite the barrier as line 175)
import gc  # noqa: E402

if __name__ == "__main__":
    main()
