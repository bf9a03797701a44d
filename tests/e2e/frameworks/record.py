"""Record real HF Trainer and Lightning jobs (4 CPU ranks, gloo) as golden cases.

Run from the repository root with a SEPARATE virtualenv that has the frameworks (the
project's own venv does not need them; the golden tests read the recorded logs):

    /path/to/fwvenv/bin/python -m tests.e2e.frameworks.record                 # all JOBS
    /path/to/fwvenv/bin/python -m tests.e2e.frameworks.record hang-hftrainer  # names containing it
    /path/to/fwvenv/bin/python -m tests.e2e.frameworks.record --out /tmp/cases nan-pltrainer

A case is ``<fault>-<framework>-<layout>`` (framework ``hftrainer``, ``pltrainer`` or
``pltrainer_csv``). Its expected.json comes from ``JOBS`` (how the fault was injected),
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
from .checks import check_case

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
GOLDEN = HERE.parent / "golden"
NEUTRAL = "/home/user/job"
NPROC = 4
RUN_TIMEOUT_S = 150


@dataclass(frozen=True)
class Job:
    name: str  # <fault>-<fw>-<layout>
    script: str  # hf_job.py | pl_job.py
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
]


def build(job: Job, logs: Path) -> tuple[list[str], str]:
    layout = job.layout
    script = str(HERE / job.script)
    args = list(job.args)
    if layout in ("spawn", "pllaunch"):
        return [script, *args], "console.log"
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
           "PL_LOG_DIR": str(logs)}
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
    versions = {p: metadata.version(p) for p in ("torch", "transformers", "lightning")}
    cmd = " ".join(["python", *argv]).replace(str(case), "<case>").replace(str(REPO), NEUTRAL)
    expected = {
        "scenario": job.name.rsplit("-", 1)[0], "layout": job.layout, "style": job.framework, "failure": job.failure, "initiator_rank": job.initiator,
        "collateral_ranks": list(job.collateral), "max_severity": "info" if job.failure is None else None,
        "command": cmd, "torch": versions["torch"].split("+")[0],
        "notes": f"{job.notes} Recorded with transformers {versions['transformers']}, lightning "
                 f"{versions['lightning']}; exit code {rc}.",
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
