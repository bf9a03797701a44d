"""A DDP job (gloo, CPU, torchrun) where one rank blocks *outside* the collective.

Used by the live-stacks tests (tests/e2e/test_stacks_live.py) and to record the
``py-spy dump`` fixtures of tests/detectors/fixtures/stacks/. Every rank prints the same
lines as train.py (``config: ...``, ``step N | loss ... | grad_norm ...``).

Batches come from a prefetching thread through a ``queue.Queue`` (a data loader in
miniature). ``--fault`` on ``--fault-rank`` at ``--fault-step``:

- ``queue``: that rank's producer stops (a hung loader worker); its main thread blocks in
  ``Queue.get`` while the others wait in DDP's gradient all-reduce;
- ``lock``: a "checkpoint writer" thread of that rank holds a lock forever; the main
  thread blocks acquiring it;
- ``extra_collective``: that rank enters a barrier on a side group the others never enter;
- ``none`` with ``--step-sleep S``: a healthy but slow job, every rank sleeping in the
  same storage read each step.

The process-group timeout (``--timeout``, default 120 s) is long on purpose: the tests
must name the rank from stacks long before any rank times out.
"""

from __future__ import annotations

import argparse
import queue
import threading
import time
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from train import FEATURES, HIDDEN, batch

FAULTS = ("none", "queue", "lock", "extra_collective")


class Prefetcher:
    """Batches produced by a background thread into a bounded queue."""

    def __init__(self, seed: int, rank: int, steps: int, stop_after: int | None, sleep: float) -> None:
        self.queue: queue.Queue[tuple[torch.Tensor, torch.Tensor]] = queue.Queue(maxsize=2)
        self.args = (seed, rank, steps, stop_after, sleep)
        threading.Thread(target=self._produce, name="prefetch", daemon=True).start()

    def _produce(self) -> None:
        seed, rank, steps, stop_after, sleep = self.args
        for step in range(1, steps + 1):
            if stop_after is not None and step > stop_after:
                threading.Event().wait()  # a hung worker: never produces again
            if sleep:
                read_shard(sleep)
            self.queue.put(batch(seed, rank, step))

    def __next__(self) -> tuple[torch.Tensor, torch.Tensor]:
        return self.queue.get()


def read_shard(seconds: float) -> None:
    time.sleep(seconds)  # slow storage, the same on every rank


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--timeout", type=float, default=120.0)
    p.add_argument("--fault", choices=FAULTS, default="none")
    p.add_argument("--fault-rank", type=int, default=2)
    p.add_argument("--fault-step", type=int, default=4)
    p.add_argument("--step-sleep", type=float, default=0.0)
    p.add_argument("--step-delay", type=float, default=0.05, help="pause between steps (keeps logs small)")
    p.add_argument("--tag", default="", help="ignored; lets a test find its own processes by command line")
    args = p.parse_args()

    dist.init_process_group("gloo", timeout=timedelta(seconds=args.timeout))
    rank, world = dist.get_rank(), dist.get_world_size()
    side = dist.new_group(backend="gloo")  # created on every rank, used by the faulty one only
    print(f"config: precision=fp32 loss_scaling=false world_size={world} backend=gloo rank={rank}", flush=True)
    torch.manual_seed(1234)
    model = DistributedDataParallel(torch.nn.Sequential(
        torch.nn.Linear(FEATURES, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    faulty = rank == args.fault_rank
    stop_after = args.fault_step - 1 if faulty and args.fault == "queue" else None
    loader = Prefetcher(1234, rank, args.steps, stop_after, args.step_sleep)
    ckpt_lock = threading.Lock()
    if faulty and args.fault == "lock":
        def writer() -> None:
            with ckpt_lock:
                threading.Event().wait()  # a checkpoint write to a hung filesystem

        threading.Thread(target=writer, name="ckpt-writer", daemon=True).start()

    for step in range(1, args.steps + 1):
        x, y = next(loader)
        at_fault = faulty and step == args.fault_step
        if at_fault and args.fault == "lock":
            with ckpt_lock:
                pass
        if at_fault and args.fault == "extra_collective":
            dist.barrier(group=side)
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        opt.step()
        print(f"step {step} | loss {loss.item():.6f} | grad_norm {grad_norm.item():.6f}", flush=True)
        time.sleep(args.step_delay)
    import gc  # (here: the lines above keep the numbers recorded stacks cite)

    del model, opt  # DDP's Reducer holds the group: freed at exit it aborts now and then (train.py)
    gc.collect()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
