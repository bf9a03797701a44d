"""Record real HF Trainer, Lightning, accelerate, Fabric, Ignite (4 CPU ranks, gloo) and Keras
(one process) jobs as golden cases.

Run from the repository root with a SEPARATE virtualenv that has the frameworks (the
project's own venv does not need them; the golden tests read the recorded logs):

    /path/to/fwvenv/bin/python -m tests.e2e.frameworks.record                 # all JOBS
    /path/to/fwvenv/bin/python -m tests.e2e.frameworks.record hang-hftrainer  # names containing it
    /path/to/fwvenv/bin/python -m tests.e2e.frameworks.record --out /tmp/cases nan-pltrainer

A case is ``<fault>-<framework>-<layout>`` (framework ``hftrainer``, ``pltrainer``,
``accelerate``, ``fabric``, ``ignite``, ``keras``, ``raytrain``, ``trl``, ``skorch``, ``structlogfmt`` (a
torchrun loop logging through real structlog; not ``structlog``, the generated style's name), ``hydra``,
``mmengine`` or ``wandb``, with a
``_variant`` suffix where a job differs).
Layouts: ``logdir``, ``console``, ``perrank`` (torchrun, as ``generate.torchrun_command``),
``acclaunch`` (``accelerate launch --multi_gpu``), ``spawn`` / ``pllaunch`` (plain python: the
framework starts the ranks); a Keras job is one plain-python process whatever its layout says.
Its expected.json comes from ``JOBS`` (how the fault was injected),
never from rankwatch; ``checks.py`` proves the fault shows in the recorded logs.
This module imports neither torch nor the frameworks: the jobs run in child processes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from ..generate import replace_in_files, torchrun_command
from .checks import ONE_PROCESS, check_case

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
GOLDEN = HERE.parent / "golden"
NEUTRAL = "/home/user/job"
NPROC = 4
RUN_TIMEOUT_S = 300  # a Ray Train job takes ~2 min on 2 shared cores
# the distributions each job's notes name with their versions
PACKAGES = {"hf_job.py": ("transformers", "accelerate"), "pl_job.py": ("lightning",),
            "accelerate_job.py": ("accelerate",), "fabric_job.py": ("lightning",),
            "ignite_job.py": ("pytorch-ignite",), "keras_job.py": ("keras",), "ray_job.py": ("ray",), "skorch_job.py": ("skorch",),
            "structlog_job.py": ("structlog",), "hydra_job.py": ("hydra-core",), "mmengine_job.py": ("mmengine",),
            "wandb_job.py": ("wandb",),
            "trl_job.py": ("trl", "transformers", "accelerate", "datasets")}


@dataclass(frozen=True)
class Job:
    name: str  # <fault>-<fw>-<layout>
    script: str  # hf_job.py | pl_job.py | ... | keras_job.py | ray_job.py | trl_job.py | skorch_job.py
    args: tuple[str, ...]
    failure: str | None
    initiator: int | None
    collateral: tuple[int, ...]
    notes: str

    @property
    def fault(self) -> str:
        """The injected fault: the name's first part (``healthy_*`` for none)."""
        return self.name.split("-")[0]

    @property
    def framework(self) -> str:
        return self.name.split("-")[1]

    @property
    def layout(self) -> str:
        return self.name.rsplit("-", 1)[1]

    def arg(self, flag: str) -> int | None:
        return int(self.args[self.args.index(flag) + 1]) if flag in self.args else None


def others(r: int) -> tuple[int, ...]:
    return tuple(i for i in range(NPROC) if i != r)


def fault(kind: str, rank: int, step: int) -> tuple[str, ...]:
    return ("--fault", kind, "--fault-rank", str(rank), "--fault-step", str(step))


RANKZERO = ("Only rank 0 prints metrics, reduced over ranks, so the logs cannot tell which rank "
            "went non-finite: the expected initiator is null.")
RZ = " Metrics are logged on rank 0 only (or reduced), so the logs cannot tell the NaN's rank: null."
HANG_UNSEEN = (
    "rank 3 sleeps before step 6's all-reduce; 15 s timeout. setup_logger logs on rank 0 only and the merged spawn "
    "console tags nothing; torch.multiprocessing.spawn reports only 'Process 0' (a peer) timing out and SIGTERMs "
    "three pids: nothing in the logs names rank 3 or shows which rank stopped, so the truth is the corpus "
    "convention for a hang whose culprit the logs cannot show: collective_timeout, rank null (first recorded as "
    "rank_hang, null).")
RAY = ("--steps", "12")  # a Ray Train job spends ~90 s starting Ray on 2 cores: 12 steps are enough
JOBS = [
    # ---- HF Trainer
    Job("healthy_fp32-hftrainer-logdir", "hf_job.py", ("--tqdm",), None, None, (),
        "HF Trainer, fp32, tqdm bar on, 20 clean steps."),
    Job("healthy_bf16-hftrainer-console", "hf_job.py", ("--precision", "bf16"), None, None, (),
        "HF Trainer, bf16=True (CPU autocast), disable_tqdm=True (PrinterCallback), 20 clean steps."),
    Job("nan-hftrainer-logdir", "hf_job.py", ("--tqdm", *fault("nan", 2, 7)), "nonfinite_loss", None, others(2),
        "HF Trainer, NaN in rank 2's input at step 7 (NaN filter on: the logged loss hides it, grad_norm nan). "
        + RANKZERO),
    Job("nan-hftrainer-perrank", "hf_job.py", fault("nan", 1, 5), "nonfinite_loss", None, others(1),
        "HF Trainer, disable_tqdm=True, NaN in rank 1's input at step 5. " + RANKZERO),
    Job("exception-hftrainer-console", "hf_job.py", fault("exception", 2, 6), "rank_exception", 2, others(2),
        "HF Trainer, rank 2 raises ValueError in forward at step 6."),
    Job("sigkill-hftrainer-perrank", "hf_job.py", ("--tqdm", *fault("sigkill", 3, 5)), "rank_killed", 3, others(3),
        "HF Trainer, rank 3 SIGKILLs itself in forward at step 5."),
    Job("oom-hftrainer-logdir", "hf_job.py", fault("oom", 1, 6), "cuda_oom", 1, others(1),
        "HF Trainer, rank 1 raises torch.OutOfMemoryError with the CUDA caching allocator's text at step 6."),
    Job("hang-hftrainer-console", "hf_job.py", ("--tqdm", *fault("hang", 2, 6)), "rank_hang", 2, others(2),
        "HF Trainer, ddp_timeout=15; rank 2 sleeps before step 6's all-reduce, peers time out."),
    Job("spike-hftrainer-perrank", "hf_job.py", fault("spike", 3, 12), "grad_norm_explosion", None, others(3),
        "HF Trainer, rank 3's gradients x400 at step 12 (a tensor hook): the all-reduced grad_norm jumps ~100x, "
        "clipped (max_grad_norm=1.0), training stays finite. Only rank 0 logs the reduced grad_norm: null."),
    Job("nan-hftrainer_nofilter-console", "hf_job.py", ("--tqdm", "--no-nan-filter", *fault("nan", 3, 8)),
        "nonfinite_loss", None, others(3),
        "HF Trainer, logging_nan_inf_filter=False (the logged loss shows 'nan'), NaN in rank 3's input at step 8. "
        + RANKZERO),
    Job("nan-hftrainer_every5-perrank", "hf_job.py", ("--logging-steps", "5", *fault("nan", 1, 7)),
        "nonfinite_loss", None, others(1),
        "HF Trainer, logging_steps=5 (each dict averages 5 steps), NaN in rank 1's input at step 7. " + RANKZERO),
    Job("hang-hftrainer-perrank", "hf_job.py", fault("hang", 1, 6), "rank_hang", 1, others(1),
        "HF Trainer, disable_tqdm=True, 15 s group timeout; rank 1 sleeps before step 6's all-reduce."),
    # ---- Lightning (torchrun-launched unless the layout says otherwise)
    Job("healthy_fp32-pltrainer-logdir", "pl_job.py", (), None, None, (),
        "Lightning, fp32, TQDM progress bar, 20 clean steps."),
    Job("healthy_bf16-pltrainer-console", "pl_job.py", ("--bar", "tqdm", "--precision", "bf16-mixed"), None, None, (),
        "Lightning, precision=bf16-mixed, TQDM bar, 20 clean steps."),
    Job("nan-pltrainer-perrank", "pl_job.py", ("--bar", "tqdm", *fault("nan", 2, 7)), "nonfinite_loss", None, others(2),
        "Lightning, NaN in rank 2's input at step 7; self.log(prog_bar=True) on rank 0 shows rank 0's values. "
        + RANKZERO),
    Job("nan-pltrainer_csv-logdir", "pl_job.py", ("--csv", *fault("nan", 1, 6)), "nonfinite_loss", None, others(1),
        "Lightning, enable_progress_bar=False, CSVLogger under logs/csv, Python logging at INFO; "
        "NaN in rank 1's input at step 6. " + RANKZERO),
    Job("exception-pltrainer-console", "pl_job.py", ("--bar", "tqdm", *fault("exception", 1, 6)), "rank_exception", 1, others(1),
        "Lightning, rank 1 raises ValueError in training_step at step 6."),
    Job("sigkill-pltrainer-logdir", "pl_job.py", fault("sigkill", 2, 5), "rank_killed", 2, others(2),
        "Lightning, rank 2 SIGKILLs itself in training_step at step 5."),
    Job("oom-pltrainer-perrank", "pl_job.py", fault("oom", 3, 6), "cuda_oom", 3, others(3),
        "Lightning, rank 3 raises torch.OutOfMemoryError with the CUDA caching allocator's text at step 6."),
    Job("hang-pltrainer-logdir", "pl_job.py", ("--bar", "tqdm", *fault("hang", 3, 6)), "rank_hang", 3, others(3),
        "Lightning, DDPStrategy(timeout=15 s); rank 3 sleeps before step 6's all-reduce, peers time out."),
    Job("spike-pltrainer-console", "pl_job.py", ("--bar", "tqdm", *fault("spike", 1, 12)), "grad_norm_explosion", None, others(1),
        "Lightning, rank 1's gradients x400 at step 12: the all-reduced grad_norm (logged with "
        "lightning.pytorch.utilities.grad_norm) jumps ~100x, clipped at 1.0, finite. Rank-0 logging: null."),
    Job("fp16_overflow-pltrainer-perrank", "pl_job.py", ("--precision", "16-true", *fault("overflow", 2, 6)),
        "nonfinite_loss", None, others(2),
        "Lightning precision=16-true (fp16 weights, no GradScaler); rank 2's inputs x1e6 at step 6 overflow fp16. "
        "Lightning prints nothing about the precision and the Rich bar (not a terminal) shows only its final "
        "frame, train_loss nan on rank 0: the logs show a non-finite loss of unknown rank, not fp16."),
    Job("hang-pltrainer-console", "pl_job.py", fault("hang", 2, 6), "rank_hang", 2, others(2),
        "Lightning, Rich bar (final frame only), 15 s group timeout; rank 2 sleeps before step 6's all-reduce."),
    Job("nan-pltrainer_sync-logdir", "pl_job.py", ("--bar", "tqdm", "--sync-dist", *fault("nan", 1, 6)),
        "nonfinite_loss", None, others(1),
        "Lightning, self.log(sync_dist=True): the bar shows the mean loss over ranks; NaN in rank 1's input at "
        "step 6. " + RANKZERO),
    Job("exception-pltrainer-spawn", "pl_job.py", ("--strategy", "ddp_spawn", *fault("exception", 2, 6)),
        "rank_exception", 2, others(2),
        "Lightning strategy=ddp_spawn, launched with plain python (no torchrun), one console; rank 2 raises "
        "ValueError at step 6."),
    Job("sigkill-pltrainer-pllaunch", "pl_job.py", ("--bar", "tqdm", "--strategy", "ddp", *fault("sigkill", 1, 5)),
        "rank_killed", 1, others(1),
        "Lightning strategy=ddp with Lightning's own subprocess launcher (plain python, one console); rank 1 "
        "SIGKILLs itself at step 5."),
    Job("nan-pltrainer-pllaunch", "pl_job.py", ("--strategy", "ddp", *fault("nan", 3, 7)),
        "nonfinite_loss", None, others(3),
        "Lightning strategy=ddp, own subprocess launcher, one console; NaN in rank 3's input at step 7. " + RANKZERO),
    # ---- accelerate 1.16 (custom loop; recorded by issue #12's fresh2 check)
    Job("healthy-accelerate-acclaunch", "accelerate_job.py", (), None, None, (),
        "accelerate launch --multi_gpu --cpu, 20 clean steps."),
    Job("healthy-accelerate-logdir", "accelerate_job.py", (), None, None, (),
        "accelerate loop under torchrun, 20 clean steps."),
    Job("nan-accelerate-logdir", "accelerate_job.py", fault("nan", 2, 7), "nonfinite_loss", 2, others(2),
        "NaN in rank 2's input at step 7; every rank logs its local loss (main_process_only=False) and the "
        "gathered list."),
    Job("exception-accelerate-perrank", "accelerate_job.py", fault("exception", 1, 6), "rank_exception", 1, others(1),
        "rank 1 raises ValueError at step 6."),
    Job("sigkill-accelerate-acclaunch", "accelerate_job.py", fault("sigkill", 3, 5), "rank_killed", 3, others(3),
        "accelerate launch; rank 3 SIGKILLs itself at step 5."),
    Job("oom-accelerate-console", "accelerate_job.py", fault("oom", 2, 6), "cuda_oom", 2, others(2),
        "rank 2 raises torch.OutOfMemoryError (CUDA allocator text, GPU 2) at step 6."),
    Job("hang-accelerate-perrank", "accelerate_job.py", fault("hang", 1, 6), "rank_hang", 1, others(1),
        "rank 1 sleeps before step 6's all-reduce; 15 s gloo timeout."),
    Job("spike-accelerate-console", "accelerate_job.py", fault("spike", 3, 12), "grad_norm_explosion", None, others(3),
        "rank 3's gradients x400 at step 12 (hook); the all-reduced grad_norm (logged on rank 0 only) jumps, "
        "clipped, finite. The per-rank local losses do not show it (the spike is in the gradient): null."),
    # ---- Lightning Fabric 2.6.6
    Job("healthy-fabric-logdir", "fabric_job.py", (), None, None, (), "Fabric under torchrun, 20 clean steps."),
    Job("nan-fabric-console", "fabric_job.py", fault("nan", 1, 6), "nonfinite_loss", None, others(1),
        "NaN in rank 1's input at step 6; fabric.print / CSVLogger on rank 0." + RZ + " What the logs show: "
        "Fabric's clip_gradients uses error_if_nonfinite=True, so at step 6 EVERY rank raises RuntimeError 'The "
        "total norm of order 2.0 for gradients from `parameters` is non-finite' (the all-reduced gradients are NaN "
        "everywhere) before anything is logged; no rank is distinguishable, the cause is a non-finite gradient: "
        "nonfinite_loss, null."),
    Job("exception-fabric-perrank", "fabric_job.py", fault("exception", 3, 6), "rank_exception", 3, others(3),
        "rank 3 raises ValueError at step 6."),
    Job("sigkill-fabric-spawn", "fabric_job.py", fault("sigkill", 2, 5), "rank_killed", 2, others(2),
        "plain python, Fabric's own subprocess launcher, one console; rank 2 SIGKILLs itself at step 5."),
    Job("hang-fabric-logdir", "fabric_job.py", fault("hang", 2, 6), "rank_hang", 2, others(2),
        "rank 2 sleeps before step 6's all-reduce; 15 s timeout."),
    Job("oom-fabric-console", "fabric_job.py", fault("oom", 1, 6), "cuda_oom", 1, others(1),
        "rank 1 raises torch.OutOfMemoryError (GPU 1) at step 6."),
    Job("spike-fabric-perrank", "fabric_job.py", fault("spike", 1, 12), "grad_norm_explosion", None, others(1),
        "rank 1's gradients x400 at step 12; grad_norm logged on rank 0 only." + RZ),
    Job("nan-fabric_noerr-logdir", "fabric_job.py", ("--no-error-nonfinite", *fault("nan", 2, 7)), "nonfinite_loss",
        None, others(2),
        "clip_gradients(error_if_nonfinite=False): training goes on; NaN in rank 2's input at step 7; "
        "fabric.print / CSVLogger (logs/csv) on rank 0 show rank 0's own loss (nan from step 8) and grad_norm nan "
        "at 7." + RZ),
    Job("healthy-fabric-spawn", "fabric_job.py", (), None, None, (),
        "plain python, Fabric's own launcher, 20 clean steps."),
    # ---- PyTorch-Ignite 0.5.5
    Job("healthy-ignite-spawn", "ignite_job.py", ("--spawn",), None, None, (),
        "idist.Parallel(nproc_per_node=4), 20 clean steps."),
    Job("nan-ignite-spawn", "ignite_job.py", ("--spawn", *fault("nan", 2, 7)), "nonfinite_loss", None, others(2),
        "NaN in rank 2's input at step 7; rank 0's RunningAverage (all-reduced) logs 'running loss nan' at 7; "
        "TerminateOnNan stops rank 2 only (its warning is untagged in the merged spawn console), so ranks 0, 1, 3 "
        "time out (15 s) in step 8's all-reduce; torch.multiprocessing.spawn reports only 'Process 1' timing out. "
        "Nothing in the logs ties the NaN to rank 2: nonfinite_loss, null."),
    Job("exception-ignite-spawn", "ignite_job.py", ("--spawn", *fault("exception", 1, 6)), "rank_exception", 1,
        others(1), "rank 1 raises ValueError in the process_function at step 6."),
    Job("hang-ignite-spawn", "ignite_job.py", ("--spawn", *fault("hang", 3, 6)), "collective_timeout", None,
        others(3), HANG_UNSEEN),
    Job("sigkill-ignite-logdir", "ignite_job.py", fault("sigkill", 3, 5), "rank_killed", 3, others(3),
        "torchrun-launched Parallel(backend=gloo); rank 3 SIGKILLs itself at step 5."),
    Job("oom-ignite-perrank", "ignite_job.py", fault("oom", 2, 6), "cuda_oom", 2, others(2),
        "torchrun-launched; rank 2 raises torch.OutOfMemoryError (GPU 2) at step 6."),
    Job("nan-ignite-console", "ignite_job.py", fault("nan", 1, 6), "nonfinite_loss", 1, others(1),
        "torchrun --tee 3; NaN in rank 1's input at step 6; TerminateOnNan warning on rank 1 ([default1]: tag). "
        "Then rank 1 has left the loop (TerminateOnNan), so every rank's next collective times out after 15 s "
        "(gloo 'Timed out waiting 15000ms' on all four ranks): the timeouts are a consequence of the NaN."),
    Job("hang-ignite-console", "ignite_job.py", fault("hang", 2, 6), "rank_hang", 2, others(2),
        "torchrun --tee 3; rank 2 sleeps before step 6's all-reduce; 15 s timeout; rank 2 prints nothing."),
    # ---- Keras 3.15 (torch backend), one plain-python process: no rank to name
    Job("healthy-keras-console", "keras_job.py", (), None, None, (), "Keras 3 torch backend, verbose=1, 20 clean steps."),
    Job("healthy_v2-keras-console", "keras_job.py", ("--verbose", "2"), None, None, (), "verbose=2, 20 clean steps."),
    Job("nan-keras-console", "keras_job.py", ("--fault", "nan", "--fault-step", "7"), "nonfinite_loss", None, (),
        "NaN input at train step 7; TerminateOnNaN stops training. Single process: null."),
    Job("exception-keras-console", "keras_job.py", ("--fault", "exception", "--fault-step", "7"), "rank_exception",
        None, (), "ValueError in a layer's call at step 7. Single process: null."),
    Job("oom-keras-console", "keras_job.py", ("--fault", "oom", "--fault-step", "7", "--verbose", "2"), "cuda_oom",
        None, (), "torch.OutOfMemoryError at step 7, verbose=2. Single process: null."),
    Job("sigkill-keras-console", "keras_job.py", ("--fault", "sigkill", "--fault-step", "7"), "rank_killed", None, (),
        "SIGKILL at step 7 (the process just stops; exit -9 is only visible to the shell). Single process: null."),
    Job("spike-keras-console", "keras_job.py", ("--fault", "spike", "--fault-step", "12"), "loss_spike", None, (),
        "lr x1000 for step 12 (clipnorm=1.0): loss jumps, finite. Single process: null."),
    # ---- Ray Train 2.60 (Train V2): TorchTrainer, 4 CPU workers, plain python (issue #12's fresh3 check)
    Job("healthy-raytrain-raylaunch", "ray_job.py", RAY, None, None, (),
        "Ray Train TorchTrainer, 4 CPU workers over gloo, 12 clean steps."),
    Job("nan-raytrain-raylaunch", "ray_job.py", (*RAY, *fault("nan", 2, 7)), "nonfinite_loss", 2, others(2),
        "NaN in world rank 2's input at step 7; every worker prints 'rank R step S: loss .. grad_norm ..' (its "
        "local loss, the all-reduced grad norm) behind Ray's (RayTrainWorker pid=N) prefix, so rank 2's own "
        "'loss nan' at step 7 names it; the peers' losses are nan from step 8."),
    Job("exception-raytrain-raylaunch", "ray_job.py", (*RAY, *fault("exception", 1, 6)), "rank_exception", 1,
        others(1), "world rank 1 raises ValueError before its step-6 forward; Ray Train reports the worker group's "
        "failure (max_failures=0)."),
    Job("oom-raytrain-raylaunch", "ray_job.py", (*RAY, *fault("oom", 3, 6)), "cuda_oom", 3, others(3),
        "world rank 3 raises torch.OutOfMemoryError with the CUDA caching allocator's text (GPU 3) at step 6."),
    Job("sigkill-raytrain-raylaunch", "ray_job.py", (*RAY, *fault("sigkill", 2, 5)), "rank_killed", 2, others(2),
        "world rank 2 SIGKILLs itself at step 5; the controller's worker-group table maps its pid to world_rank=2."),
    Job("hang-raytrain-raylaunch", "ray_job.py", (*RAY, *fault("hang", 1, 6)), "rank_hang", 1, others(1),
        "world rank 1 sleeps before step 6's all-reduce; TorchConfig(timeout_s=15): the peers' gloo all-reduce "
        "times out, rank 1 prints nothing."),
    Job("spike-raytrain-raylaunch", "ray_job.py", (*RAY, *fault("spike", 3, 9)), "grad_norm_explosion", None,
        others(3), "world rank 3's gradients x400 at step 9 (a tensor hook): the all-reduced grad_norm every worker "
        "prints jumps ~100x, clipped, finite; the local losses do not show it, and the grad norm is the same on "
        "every rank: null."),
    # ---- TRL 1.16 SFTTrainer (transformers 5.25), torchrun, 4 ranks, a tiny Llama from a config
    Job("healthy-trl-logdir", "trl_job.py", ("--tqdm",), None, None, (),
        "TRL SFTTrainer, fp32, tqdm bar on, 20 clean steps."),
    Job("healthy_bf16-trl-console", "trl_job.py", ("--precision", "bf16"), None, None, (),
        "TRL SFTTrainer, bf16=True (CPU autocast), disable_tqdm=True, 20 clean steps."),
    Job("nan-trl-perrank", "trl_job.py", fault("nan", 2, 7), "nonfinite_loss", None, others(2),
        "TRL SFTTrainer, a NaN in rank 2's token embeddings at step 7 (NaN filter on: the logged loss hides it; "
        "grad_norm, entropy nan). " + RANKZERO),
    Job("exception-trl-console", "trl_job.py", ("--tqdm", *fault("exception", 1, 6)), "rank_exception", 1, others(1),
        "TRL SFTTrainer, rank 1 raises ValueError in the model's forward at step 6."),
    Job("oom-trl-logdir", "trl_job.py", fault("oom", 3, 6), "cuda_oom", 3, others(3),
        "TRL SFTTrainer, rank 3 raises torch.OutOfMemoryError with the CUDA caching allocator's text at step 6."),
    Job("sigkill-trl-perrank", "trl_job.py", ("--tqdm", *fault("sigkill", 2, 5)), "rank_killed", 2, others(2),
        "TRL SFTTrainer, rank 2 SIGKILLs itself in the model's forward at step 5."),
    Job("hang-trl-console", "trl_job.py", fault("hang", 3, 6), "rank_hang", 3, others(3),
        "TRL SFTTrainer, 15 s group timeout; rank 3 sleeps before step 6's forward, peers time out."),
    Job("spike-trl-logdir", "trl_job.py", fault("spike", 1, 12), "grad_norm_explosion", None, others(1),
        "TRL SFTTrainer, rank 1's final hidden state gradient x400 at step 12: the all-reduced grad_norm jumps, "
        "clipped (max_grad_norm=1.0), finite. Only rank 0 logs the reduced grad_norm: null."),
    # ---- skorch 1.4 NeuralNetRegressor, one process, one full-batch step per epoch: no rank to name
    Job("healthy-skorch-console", "skorch_job.py", (), None, None, (),
        "skorch NeuralNetRegressor.fit, 20 epochs of one step, GradientNormClipping(1.0), clean."),
    Job("nan-skorch-console", "skorch_job.py", ("--fault", "nan", "--fault-step", "7"), "nonfinite_loss", None, (),
        "NaN in the input at step (epoch) 7: PrintLog's train_loss nan from epoch 7, valid_loss from 8 "
        "(skorch has no NaN stop by default). Single process: null."),
    Job("exception-skorch-console", "skorch_job.py", ("--fault", "exception", "--fault-step", "6"), "rank_exception",
        None, (), "ValueError in the module's forward at step 6. Single process: null."),
    Job("oom-skorch-console", "skorch_job.py", ("--fault", "oom", "--fault-step", "6"), "cuda_oom", None, (),
        "torch.OutOfMemoryError (CUDA allocator text, GPU 0) in the module's forward at step 6. Single process: null."),
    Job("spike-skorch-console", "skorch_job.py", ("--fault", "spike", "--fault-step", "12"), "loss_spike", None, (),
        "the learning rate x1000 for the update that ends step 11 (gradients clipped at norm 1): step 12's "
        "train_loss jumps, finite. Single process: null."),
    # ---- a plain torchrun DDP loop logging through real structlog 26.1 (LogfmtRenderer), every rank
    Job("healthy-structlogfmt-logdir", "structlog_job.py", (), None, None, (),
        "structlog logfmt lines on every rank, 20 clean steps."),
    Job("nan-structlogfmt-console", "structlog_job.py", fault("nan", 1, 6), "nonfinite_loss", 1, others(1),
        "NaN in rank 1's input at step 6; every rank logs 'rank=R step=S loss=L grad_norm=G' (local loss, "
        "all-reduced norm), so rank 1's 'step=6 loss=nan' names it; the peers' losses are nan from step 7."),
    Job("exception-structlogfmt-perrank", "structlog_job.py", fault("exception", 2, 6), "rank_exception", 2, others(2),
        "rank 2 raises ValueError before its step-6 forward."),
    Job("sigkill-structlogfmt-console", "structlog_job.py", fault("sigkill", 1, 5), "rank_killed", 1, others(1),
        "rank 1 SIGKILLs itself at step 5."),
    Job("hang-structlogfmt-logdir", "structlog_job.py", fault("hang", 3, 6), "rank_hang", 3, others(3),
        "rank 3 sleeps before step 6's all-reduce; 15 s gloo timeout; rank 3 logs nothing more."),
    # ---- fw4 (issue #12): a Hydra-configured loop, MMEngine's Runner, a loop that logs only to wandb (offline)
    Job("healthy-hydra-logdir", "hydra_job.py", (), None, None, (),
        "Hydra 1.3 @hydra.main loop, every rank logs through Hydra's job logging, 20 clean steps."),
    Job("nan-hydra-console", "hydra_job.py", fault("nan", 1, 6), "nonfinite_loss", 1, others(1),
        "NaN in rank 1's input at step 6; every rank logs 'step S/20 loss=L grad_norm=G' (local loss, all-reduced "
        "norm) in Hydra's format, so rank 1's own 'step 6/20 loss=nan' (tagged [default1]:) names it."),
    Job("exception-hydra-perrank", "hydra_job.py", fault("exception", 2, 6), "rank_exception", 2, others(2),
        "rank 2 raises ValueError before its step-6 forward; Hydra catches it, prints 'Error executing job with "
        "overrides: [...]' and a shortened traceback, and exits 1 (so @record writes no error.json)."),
    Job("sigkill-hydra-logdir", "hydra_job.py", fault("sigkill", 3, 5), "rank_killed", 3, others(3),
        "rank 3 SIGKILLs itself at step 5."),
    Job("hang-hydra-console", "hydra_job.py", fault("hang", 1, 6), "rank_hang", 1, others(1),
        "rank 1 sleeps before step 6's all-reduce; 15 s gloo timeout; the peers' errors go through Hydra's "
        "'Error executing job' report."),
    Job("spike-hydra-perrank", "hydra_job.py", fault("spike", 2, 12), "grad_norm_explosion", None, others(2),
        "rank 2's gradients x400 at step 12 (a tensor hook): the all-reduced grad_norm every rank logs jumps ~100x, "
        "clipped, finite; the local losses do not show it and the norm is the same on every rank: null."),
    Job("healthy-mmengine-logdir", "mmengine_job.py", (), None, None, (),
        "MMEngine Runner (iteration-based, LoggerHook interval 1), 20 clean iterations."),
    Job("nan-mmengine-console", "mmengine_job.py", fault("nan", 2, 7), "nonfinite_loss", None, others(2),
        "NaN in rank 2's input at iteration 7; only rank 0's MMLogger prints 'Iter(train) [ 7/20] ... grad_norm: nan "
        "loss: ...' (its own loss, the all-reduced norm); MMEngine has no NaN stop by default. " + RANKZERO),
    Job("exception-mmengine-logdir", "mmengine_job.py", fault("exception", 1, 6), "rank_exception", 1, others(1),
        "rank 1 raises ValueError in the model's forward at iteration 6."),
    Job("oom-mmengine-perrank", "mmengine_job.py", fault("oom", 3, 6), "cuda_oom", 3, others(3),
        "rank 3 raises torch.OutOfMemoryError with the CUDA caching allocator's text (GPU 3) at iteration 6."),
    Job("hang-mmengine-console", "mmengine_job.py", fault("hang", 2, 6), "rank_hang", 2, others(2),
        "rank 2 sleeps before iteration 6's forward; 15 s gloo timeout."),
    Job("healthy-wandb-console", "wandb_job.py", (), None, None, (),
        "rank 0 logs to wandb 0.31 offline only; 20 clean steps; the console shows wandb's run history and summary."),
    Job("nan-wandb-logdir", "wandb_job.py", fault("nan", 2, 7), "nonfinite_loss", None, others(2),
        "NaN in rank 2's input at step 7; rank 0 logs only to wandb, whose console summary at the end shows "
        "'grad_norm nan' and 'loss nan' (rank 0's loss, nan from step 8). " + RANKZERO),
    Job("exception-wandb-perrank", "wandb_job.py", fault("exception", 3, 6), "rank_exception", 3, others(3),
        "rank 3 raises ValueError before its step-6 forward."),
    Job("sigkill-wandb-console", "wandb_job.py", fault("sigkill", 2, 5), "rank_killed", 2, others(2),
        "rank 2 SIGKILLs itself at step 5."),
    Job("hang-wandb-logdir", "wandb_job.py", fault("hang", 1, 6), "rank_hang", 1, others(1),
        "rank 1 sleeps before step 6's all-reduce; 15 s gloo timeout."),
]


def build(job: Job, logs: Path) -> tuple[list[str], str]:
    layout = job.layout
    script = str(HERE / job.script)
    args = list(job.args)
    if layout in ("spawn", "pllaunch", "raylaunch") or job.script in ONE_PROCESS:  # the framework starts the ranks, or one process
        return [script, *args], "console.log"
    if layout == "acclaunch":  # ACCELERATE_USE_CPU (record's env): --cpu and --multi_gpu cannot be combined
        return ["-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", str(NPROC), "--num_machines", "1",
                "--mixed_precision", "no", "--dynamo_backend", "no", script, *args], "console.log"
    return torchrun_command(layout, logs, script, args)


def neutralise(logs: Path, scratch: Path) -> None:
    replace_in_files(logs, [(str(scratch).encode(), b"/tmp"), (str(Path(sys.prefix)).encode(), f"{NEUTRAL}/.venv".encode()),
                            (str(REPO).encode(), NEUTRAL.encode())])


def record(job: Job, out_root: Path) -> None:
    case = out_root / job.name
    if case.exists():
        shutil.rmtree(case)
    logs = case / "logs"
    logs.mkdir(parents=True)
    argv, console = build(job, logs)
    scratch = Path(tempfile.mkdtemp(prefix="rankwatch-fw-"))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TMPDIR": str(scratch), "PYTHONHASHSEED": "0",
           "PYTHONUNBUFFERED": "1", "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1",
           "PL_LOG_DIR": str(logs), "KERAS_BACKEND": "torch", "ACCELERATE_USE_CPU": "true"}
    started = time.monotonic()
    with (logs / console).open("wb") as out:
        proc = subprocess.Popen([sys.executable, *argv], cwd=scratch, env=env, stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            rc = proc.wait(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            rc = proc.wait()
            print(f"{job.name}: TIMEOUT", flush=True)
    neutralise(logs, scratch)
    shutil.rmtree(scratch, ignore_errors=True)
    versions = {p: metadata.version(p) for p in ("torch", *PACKAGES[job.script])}
    cmd = " ".join(["python", *argv]).replace(str(case), "<case>").replace(str(REPO), NEUTRAL)
    expected = {
        "scenario": job.name.rsplit("-", 1)[0], "layout": job.layout, "style": job.framework, "failure": job.failure, "initiator_rank": job.initiator,
        "collateral_ranks": list(job.collateral), "max_severity": "info" if job.failure is None else None,
        "command": cmd, "torch": versions["torch"].split("+")[0],
        "notes": f"{job.notes} Recorded with "
                 + ", ".join(f"{p} {v}" for p, v in versions.items() if p != "torch") + f"; exit code {rc}.",
    }
    (case / "expected.json").write_text(json.dumps(expected, indent=2) + "\n")
    check_case(logs, job)  # fails loudly when the fault does not show as the table says
    size = sum(p.stat().st_size for p in case.rglob("*") if p.is_file())
    print(f"recorded {job.name:36s} rc={rc} {time.monotonic() - started:5.1f}s {size / 1024:6.1f} KiB", flush=True)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("only", nargs="*", help="record the jobs whose name contains one of these")
    p.add_argument("--out", type=Path, default=GOLDEN)
    args = p.parse_args(argv)
    for job in JOBS:
        if not args.only or any(o in job.name for o in args.only):
            record(job, args.out)


if __name__ == "__main__":
    main()
