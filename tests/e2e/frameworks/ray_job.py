"""A tiny real Ray Train job: ``TorchTrainer`` with 4 CPU workers (gloo DDP) and one injected fault.

Launched by plain python: the script starts a local Ray instance and Ray starts the four
``RayTrainWorker`` actors, whose output Ray's log monitor forwards to the driver's console with a
``(RayTrainWorker pid=N)`` prefix (identical lines from several workers deduplicated, as Ray does
by default). Every worker prints its own local loss and the all-reduced grad norm after each step
and calls ``ray.train.report`` with them; the driver prints the result's last metrics. Ray Train's
own failure handling (``FailureConfig(max_failures=0)``) reports a failed worker group. The fault
fires on one world rank at one step (steps count from 1).
"""

from __future__ import annotations

import os
import tempfile
from datetime import datetime

import ray
import ray.train
import torch
from jobkit import BATCH, FAULTS, Synthetic, job_parser, make_net, step_loss  # a sibling module
from ray.train import FailureConfig, RunConfig, ScalingConfig
from ray.train.torch import TorchConfig, TorchTrainer, prepare_model

WORKERS = 4


def train_loop(config: dict[str, object]) -> None:
    ctx = ray.train.get_context()
    rank, local_rank = ctx.get_world_rank(), ctx.get_local_rank()
    torch.manual_seed(0)
    model = prepare_model(make_net())  # DDP over the gloo group Ray Train started
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    steps, fault = int(str(config["steps"])), str(config["fault"])
    data = Synthetic(BATCH * WORKERS * steps)
    for step in range(1, steps + 1):
        i = (step - 1) * WORKERS + rank
        x, y = data.x[i * BATCH:(i + 1) * BATCH], data.y[i * BATCH:(i + 1) * BATCH]
        at_fault = rank == config["fault_rank"] and step == config["fault_step"]
        loss = step_loss(model, x, y, fault, at_fault, local_rank)
        loss.backward()
        gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()
        print(f"rank {rank} step {step}: loss {loss.item():.4f} grad_norm {gn.item():.4f}", flush=True)
        ray.train.report({"step": step, "loss": loss.item(), "grad_norm": gn.item()})


def main() -> None:
    args = job_parser(FAULTS).parse_args()
    scratch = os.environ.get("TMPDIR", tempfile.gettempdir())
    # the workers unpickle train_loop, which names jobkit: the raylet (and so every worker) inherits this
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.dirname(os.path.abspath(__file__)),
                                                              os.environ.get("PYTHONPATH")]))
    ray.init(num_cpus=WORKERS + 1, include_dashboard=False, _temp_dir=os.path.join(scratch, "ray"))
    trainer = TorchTrainer(
        train_loop,
        train_loop_config={"steps": args.steps, "fault": args.fault, "fault_rank": args.fault_rank,
                           "fault_step": args.fault_step},
        scaling_config=ScalingConfig(num_workers=WORKERS, use_gpu=False, resources_per_worker={"CPU": 1}),
        torch_config=TorchConfig(backend="gloo", timeout_s=args.timeout),
        run_config=RunConfig(name=f"rankwatch_{datetime.now():%H%M%S}", storage_path=os.path.join(scratch, "results"),
                             failure_config=FailureConfig(max_failures=0)),
    )
    result = trainer.fit()
    print(f"Training finished: {result.metrics}", flush=True)
    ray.shutdown()


if __name__ == "__main__":
    main()
