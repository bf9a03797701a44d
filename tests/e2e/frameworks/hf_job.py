"""A tiny real ``transformers.Trainer`` job (CPU, gloo DDP) with one injected fault.

Launched by torchrun (4 ranks). Every metric line is the Trainer's own output: the log
dicts that ``ProgressCallback`` (tqdm on) or ``PrinterCallback`` (``disable_tqdm=True``)
print on rank 0, loss averaged over ranks (and over the steps since the last log),
``logging_steps=1`` unless ``--logging-steps``. The fault fires inside the
model's forward on one rank at one optimizer step (steps count from 1, as the Trainer's
``global_step`` after the step).
"""

from __future__ import annotations

import argparse
import os
from datetime import timedelta

import jobkit
import torch
from jobkit import (  # a sibling: the job runs as a script from this folder
    FAULTS,
    end_process_group,
    job_parser,
    pre_fault,
    redirect_own_output,
)
from torch.distributed.elastic.multiprocessing.errors import record
from transformers import PretrainedConfig, PreTrainedModel, Trainer, TrainingArguments

FEATURES, HIDDEN, BATCH = 16, 32, 8


def parse_args() -> argparse.Namespace:
    p = job_parser(FAULTS)
    p.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "fp16"])
    p.add_argument("--tqdm", action="store_true", help="keep the Trainer's tqdm bar on")
    p.add_argument("--logging-steps", type=int, default=1)
    p.add_argument("--no-nan-filter", action="store_true", help="logging_nan_inf_filter=False")
    p.add_argument("--out", default=os.environ.get("TMPDIR", "/tmp") + "/hf_out")
    return p.parse_args()


class TinyConfig(PretrainedConfig):
    model_type = "rankwatch_tiny_mlp"

    def __init__(self, features: int = FEATURES, hidden: int = HIDDEN, **kwargs: object) -> None:
        self.features = features
        self.hidden = hidden
        super().__init__(**kwargs)


class TinyMLP(PreTrainedModel):
    config_class = TinyConfig

    def __init__(self, config: TinyConfig, fault: str = "none", fault_step: int = 0,
                 faulty: bool = False) -> None:
        super().__init__(config)
        self.net = torch.nn.Sequential(torch.nn.Linear(config.features, config.hidden), torch.nn.ReLU(),
                                       torch.nn.Linear(config.hidden, 1))
        self.fault, self.fault_step, self.faulty = fault, fault_step, faulty
        self.calls = 0
        self.post_init()

    def _init_weights(self, module: torch.nn.Module) -> None:
        pass  # keep torch's default init, seeded

    def forward(self, x: torch.Tensor, labels: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
        at_fault = False
        if self.training:
            self.calls += 1  # one forward per optimizer step (no accumulation)
            at_fault = self.faulty and self.calls == self.fault_step
        pre_fault(self.fault, at_fault, int(os.environ.get("LOCAL_RANK", "0")), step=self.calls)
        if at_fault and self.fault == "nan":
            x = x.clone()
            x[0, 0] = float("nan")
        pred = self.net(x).squeeze(-1)
        if at_fault and self.fault == "spike":
            pred.register_hook(lambda g: g * 400.0)  # this rank's gradients x400: grad_norm ~100x
        out = {"logits": pred}
        if labels is not None:
            out["loss"] = torch.nn.functional.mse_loss(pred.float(), labels.float())
        return out


class Synthetic(jobkit.Synthetic):
    """The shared data, as the dicts the Trainer feeds the model."""

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:  # type: ignore[override]
        return {"x": self.x[i], "labels": self.y[i]}


@record
def main() -> None:
    args = parse_args()
    rank = int(os.environ.get("RANK", "0"))
    if args.own_log_dir:
        redirect_own_output(args.own_log_dir, rank)
    if "WORLD_SIZE" in os.environ:
        # with use_cpu=True, TrainingArguments does not pass ddp_timeout on to the process
        # group (only its GPU path does): start the group here, with the timeout
        torch.distributed.init_process_group("gloo", timeout=timedelta(seconds=args.timeout))
    torch.manual_seed(0)
    model = TinyMLP(TinyConfig(), fault=args.fault, fault_step=args.fault_step,
                    faulty=rank == args.fault_rank)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    targs = TrainingArguments(
        output_dir=args.out, max_steps=args.steps, per_device_train_batch_size=BATCH,
        learning_rate=0.05, logging_steps=args.logging_steps, report_to=[], save_strategy="no",
        logging_nan_inf_filter=not args.no_nan_filter,
        disable_tqdm=not args.tqdm, use_cpu=True, ddp_backend="gloo", ddp_timeout=args.timeout,
        bf16=args.precision == "bf16", fp16=args.precision == "fp16", seed=0,
        dataloader_num_workers=0,
    )
    trainer = Trainer(model=model, args=targs, train_dataset=Synthetic(BATCH * world * args.steps))
    trainer.train()
    del trainer, model  # the DDP wrapper goes before the group (jobkit.end_process_group)
    end_process_group()


if __name__ == "__main__":
    main()
