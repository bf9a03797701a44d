"""What the framework jobs (``hf_job.py``, ``pl_job.py``, ``accelerate_job.py``, ``fabric_job.py``, ``ignite_job.py``,
``keras_job.py``, ``ray_job.py``, ``trl_job.py``, ``skorch_job.py``, ``structlog_job.py``, ``hydra_job.py``, ``mmengine_job.py``,
``wandb_job.py``) share besides their framework: run as scripts from this folder, they import it as a sibling module."""

from __future__ import annotations

import argparse
import gc
import os
import signal
import sys
import time

import torch

# The fd redirect and the allocator's OOM text are the generated scenario job's: one copy for
# the generated and the framework jobs (both run as scripts from their own folders).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "scenarios"))
from train import cuda_oom_message as cuda_oom_message  # re-exported to the jobs
from train import redirect_own_output as redirect_own_output

FEATURES, HIDDEN, BATCH = 16, 32, 8
FAULTS = ["none", "nan", "exception", "sigkill", "oom", "hang", "spike"]


def job_parser(faults: list[str]) -> argparse.ArgumentParser:
    """The options every job takes: its length, the fault injected (which, on which rank, at which
    step) and where each rank writes its own output."""
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--fault", default="none", choices=faults)
    p.add_argument("--fault-rank", type=int, default=-1)
    p.add_argument("--fault-step", type=int, default=6)
    p.add_argument("--own-log-dir", default=None, help="each rank dup2s fds 1, 2 to DIR/node0/rank_R.log")
    p.add_argument("--timeout", type=int, default=15, help="process-group timeout in seconds")
    return p


class Synthetic(torch.utils.data.Dataset):  # type: ignore[type-arg]
    """A fixed linear target with a little noise: every job trains on the same numbers."""

    def __init__(self, n: int, seed: int = 0) -> None:
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n, FEATURES, generator=g)
        w = torch.linspace(-1.0, 1.0, FEATURES)
        self.y = 0.25 * (self.x @ w) + 0.05 * torch.randn(n, generator=g)

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.x[i], self.y[i]


def make_net() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(FEATURES, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, 1))


def pre_fault(fault: str, at_fault: bool, local_rank: int, step: int | None = None) -> None:
    """The faults that fire before the forward of the faulty rank's step: hang (never reaches the
    step's all-reduce), exception (naming ``step`` when given), oom (the CUDA allocator's text for
    this rank's GPU), sigkill."""
    if not at_fault:
        return
    if fault == "hang":
        time.sleep(3600)
    if fault == "exception":
        where = f" at step {step}" if step is not None else ""
        raise ValueError(f"corrupt sample in shard 3{where}: expected {FEATURES} features, got 0")
    if fault == "oom":
        raise torch.OutOfMemoryError(cuda_oom_message(local_rank))
    if fault == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)


def step_loss(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, fault: str, at_fault: bool,
              local_rank: int) -> torch.Tensor:
    """One step's forward and MSE loss with the fault injected when ``at_fault``: the ones of
    ``pre_fault``, a NaN in the input, or the rank's gradients x400 (a tensor hook: grad_norm ~100x)."""
    pre_fault(fault, at_fault, local_rank)
    if at_fault and fault == "nan":
        x = x.clone()
        x[0, 0] = float("nan")
    pred = model(x).squeeze(-1)
    if at_fault and fault == "spike":
        pred.register_hook(lambda g: g * 400.0)
    return torch.nn.functional.mse_loss(pred, y)


def end_process_group() -> None:
    """After the caller dropped its trainer and model: collect them, meet, then destroy the group.
    A rank tearing down while a peer's gloo pair still talks to it aborts at exit ('terminate called
    without an active exception'), and DDP's Reducer freeing an already destroyed group deadlocks
    on the GIL, so the DDP wrapper must be gone first."""
    gc.collect()
    if torch.distributed.is_initialized():
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()


# (imported here, not above: the lines above keep the numbers the recorded tracebacks cite,
# tests/e2e/test_golden.py::test_recorded_tracebacks_cite_the_job_kit_as_it_is)
from collections.abc import Iterator  # noqa: E402


def ddp_steps(rank: int, local_rank: int, world: int, steps: int, fault: str, fault_rank: int, fault_step: int,
              lr: float = 0.05) -> Iterator[tuple[int, torch.Tensor, torch.Tensor]]:
    """The plain DDP loop the jobs without a trainer of their own share (structlog, Hydra, wandb):
    SGD on this rank's slice of ``Synthetic``, the grad norm clipped at 1; yields ``(step, loss,
    grad_norm)`` after each optimizer step (from 1), for the job to log in its own way. The fault
    fires on ``fault_rank`` at ``fault_step``. The model lives in the generator: once it is
    exhausted (and collected), ``end_process_group`` may run."""
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(make_net())
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    data = Synthetic(BATCH * world * steps)
    for step in range(1, steps + 1):
        i = (step - 1) * world + rank
        x, y = data.x[i * BATCH:(i + 1) * BATCH], data.y[i * BATCH:(i + 1) * BATCH]
        loss = step_loss(model, x, y, fault, rank == fault_rank and step == fault_step, local_rank)
        loss.backward()
        gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()
        yield step, loss, gn
