"""Prove that a recorded framework job shows its injected fault the way ``record.JOBS`` says.

The test's reader, not the engine's: it knows the exact lines each framework printed here
(transformers 5.x Trainer log dicts, Lightning's TQDM or Rich bar postfix, Lightning's
CSVLogger ``metrics.csv``, the accelerate / Fabric / Ignite jobs' own rank-0 lines, Keras's
``CSVLogger`` ``training.csv``), all on rank 0, and reads each rank's text the way the golden
checks do (``generate.rank_texts``). The recorder runs ``check_case`` after every job and
``test_golden`` re-runs it over the recorded files.
"""

from __future__ import annotations

import ast
import csv
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..generate import launcher_text, rank_texts

if TYPE_CHECKING:
    from .record import Job

Steps = dict[int, dict[str, float]]  # step (from 1) -> {"loss": .., "grad_norm": ..}

# transformers 5.x prints its log dict with the values as strings: {'loss': '0.2844', ...}
_HF = re.compile(r"\{'loss': [^}]*\}")
# TQDMProgressBar: "Epoch 0:  60%|██████    | 12/20 [00:00<00:00, 41.95it/s, train_loss=0.174, grad_norm=112.0]"
_TQDM = re.compile(r"\| (\d+)/\d+ \[[^\]]*?train_loss=([^,\]\s]+), grad_norm=([^,\]\s]+)\]")
# RichProgressBar, not a terminal: its last frame only, "... train_loss: nan" then "grad_norm: nan"
_RICH = re.compile(r"(train_loss|grad_norm): (\S+)")
# the jobs' own rank-0 lines: accelerate's logger "[RANK 0] step 7: mean loss nan grad_norm nan",
# fabric.print "iter 12: loss 0.2100, grad_norm 73.8579", ignite's setup_logger "Iteration 6: running
# loss 0.4883, grad_norm 1.1044" (a tqdm frame may be glued in front of it)
_LINES = {
    "accelerate_job.py": re.compile(r"step (?P<step>\d+): mean loss (?P<loss>\S+) grad_norm (?P<gn>\S+)"),
    "fabric_job.py": re.compile(r"iter (?P<step>\d+): loss (?P<loss>[^,\s]+), grad_norm (?P<gn>\S+)"),
    "ignite_job.py": re.compile(r"Iteration (?P<step>\d+): running loss (?P<loss>[^,\s]+), grad_norm (?P<gn>\S+)"),
    # structlog's LogfmtRenderer: "timestamp=... level=info event=train_step rank=0 step=7 loss=0.3 grad_norm=nan"
    "structlog_job.py": re.compile(r"event=train_step rank=\d+ step=(?P<step>\d+) loss=(?P<loss>\S+) grad_norm=(?P<gn>\S+)"),
    # Hydra's job logging: "[2026-12-04 13:40:51,123][__main__][INFO] - step 7/20 loss=nan grad_norm=nan"
    "hydra_job.py": re.compile(r"\]\[INFO\] - step (?P<step>\d+)/\d+ loss=(?P<loss>\S+) grad_norm=(?P<gn>\S+)"),
    # MMEngine's LoggerHook: "... - mmengine - INFO - Iter(train) [ 7/20]  lr: 5.0000e-02  ...  grad_norm: nan  loss: nan"
    "mmengine_job.py": re.compile(r"Iter\(train\) \[\s*(?P<step>\d+)/\d+\].*grad_norm: (?P<gn>\S+)\s+loss: (?P<loss>\S+)"),
}
# ray_job.py: every worker prints "rank 2 step 7: loss nan grad_norm nan" behind Ray's
# "(RayTrainWorker pid=N)" prefix; Ray colours the prefix and appends "[repeated 3x across cluster]"
_RAY = re.compile(r"rank (\d+) step (\d+): loss ([-+.\w]+) grad_norm ([-+.\w]+)")
KERAS_STEPS_PER_EPOCH = 5  # keras_job.py: 4 epochs x 5 steps
# skorch's PrintLog table row (ANSI colours stripped): "      7         nan      0.2510  0.0031";
# skorch_job.py runs one full-batch step per epoch
_SKORCH_ROW = re.compile(r"^\s*(\d+)\s+([-+.\w]+)\s+([-+.\w]+)\s+\d+\.\d+\s*$", re.M)
# wandb's console summary after "wandb: Run summary:": "wandb:      loss nan" (keys right-aligned)
_WANDB_SUMMARY = re.compile(r"wandb:\s+(loss|grad_norm) ([-+.\w]+)$", re.M)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
ONE_PROCESS = ("keras_job.py", "skorch_job.py")  # no rank, no launcher


def all_text(logs: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in sorted(logs.rglob("*")) if p.is_file())


def metrics(logs: Path, job: Job) -> Steps:
    """Step -> what rank 0 logged at that step (a Rich bar gives its last frame as step 0; Keras
    logs the loss per epoch, at the epoch's last step, and no grad_norm)."""
    if job.script == "keras_job.py":
        with (logs / "training.csv").open(newline="") as fh:
            return {(int(row["epoch"]) + 1) * KERAS_STEPS_PER_EPOCH: {"loss": float(row["loss"])}
                    for row in csv.DictReader(fh)}
    if job.script == "ray_job.py":
        return _ray_steps(all_text(logs))
    if job.script == "wandb_job.py":  # wandb's run summary: the last value of each metric, as step 0
        summary = dict(_WANDB_SUMMARY.findall(all_text(logs)))
        return {0: {"loss": float(summary["loss"]), "grad_norm": float(summary["grad_norm"])}} if summary else {}
    if job.script == "skorch_job.py":
        return {int(m[1]): {"loss": float(m[2])} for m in _SKORCH_ROW.finditer(_ANSI.sub("", all_text(logs)))}
    csv_files = sorted(logs.rglob("metrics.csv")) if job.script == "pl_job.py" else []
    if csv_files:
        with csv_files[0].open(newline="") as fh:
            return {int(row["step"]) + 1: {"loss": float(row["train_loss"]), "grad_norm": float(row["grad_norm"])}
                    for row in csv.DictReader(fh)}
    texts = rank_texts(logs)
    text = texts.get(0, "") if texts else all_text(logs)  # one console without rank prefixes
    pieces = [p for line in text.splitlines() for p in line.split("\r")]
    steps: Steps = {}
    if line := _LINES.get(job.script):
        for p in pieces:
            for hit in line.finditer(p):
                steps[int(hit["step"])] = {"loss": float(hit["loss"]), "grad_norm": float(hit["gn"])}
        return steps
    if job.script in ("hf_job.py", "trl_job.py"):  # TRL's SFTTrainer prints the Trainer's dicts, its keys added
        every = job.arg("--logging-steps") or 1
        dicts = [ast.literal_eval(m.group(0)) for p in pieces for m in _HF.finditer(p)]
        for n, d in enumerate(dicts, start=1):  # one dict every logging_steps optimizer steps
            steps[n * every] = {"loss": float(d["loss"]), "grad_norm": float(d["grad_norm"])}
        return steps
    for p in pieces:  # each count is drawn with the previous postfix, then with its own
        if m := _TQDM.search(p):
            steps[int(m.group(1))] = {"loss": _num(m.group(2)), "grad_norm": _num(m.group(3))}
    if not steps:
        last = {m.group(1): _num(m.group(2)) for p in pieces for m in _RICH.finditer(p)}
        if last:
            steps[0] = {"loss": last["train_loss"], "grad_norm": last["grad_norm"]}
    return steps


def ray_lines(text: str) -> list[tuple[int, int, float, float]]:
    """(rank, step, local loss, grad_norm) of every Ray worker line that survived Ray's deduplication."""
    return [(int(m[1]), int(m[2]), float(m[3]), float(m[4])) for m in _RAY.finditer(text)]


def _ray_steps(text: str) -> Steps:
    """Step -> the all-reduced grad_norm and the step's loss (non-finite when any rank's printed loss is):
    Ray folds lines that several workers print alike into one, so no rank's lines are complete."""
    steps: Steps = {}
    for _rank, step, loss, gn in ray_lines(text):
        rec = steps.setdefault(step, {"loss": loss, "grad_norm": gn})
        if not math.isfinite(loss):
            rec["loss"] = loss
    return steps


def _num(value: str) -> float:
    """A logged number; Lightning's TQDM postfix prints a non-finite float as ``nan.0``."""
    return float(value.removesuffix(".0") if value.lstrip("+-").startswith(("nan", "inf")) else value)


def _require(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(what)


def _finite(rec: dict[str, float]) -> bool:
    return all(math.isfinite(v) for v in rec.values())


def _watched(rec: dict[str, float]) -> float:
    """The number a fault shows in: the grad norm, or the loss where none is logged (Keras)."""
    return rec.get("grad_norm", rec["loss"])


# a rank's own line that shows its non-finite value, where the job prints one (truth: that rank)
_OWN_NAN = {"accelerate_job.py": "step {step}: local loss nan", "ignite_job.py": "TerminateOnNan: Output 'nan'",
            "structlog_job.py": "step={step} loss=nan", "hydra_job.py": "step {step}/20 loss=nan"}
_CLIP_ERROR = "is non-finite, so it cannot be clipped"  # torch clip_grad_norm_(error_if_nonfinite=True)


def check_case(logs: Path, job: Job) -> None:
    fr, step = job.arg("--fault-rank"), job.arg("--fault-step")
    text, steps = all_text(logs), metrics(logs, job)
    by_rank = rank_texts(logs)
    if job.fault.startswith("healthy"):
        _require(bool(steps) and all(_finite(r) for r in steps.values()), f"not a clean run: {steps}")
        _require("Traceback" not in text, "a healthy job printed a traceback")
        return
    keras = job.script == "keras_job.py"
    one_process = job.script in ONE_PROCESS  # no fault rank
    assert (fr is not None or one_process) and step is not None, job.name
    if job.fault in ("nan", "fp16_overflow"):
        if job.script == "fabric_job.py" and "--no-error-nonfinite" not in job.args:
            _check_clip_error(steps, by_rank, step)
            return
        _require(bool(steps) and not all(_finite(r) for r in steps.values()), f"nothing non-finite: {steps}")
        if 0 not in steps:  # a per-step reader: finite before the fault, grad_norm non-finite from it
            _require(all(_finite(r) for k, r in steps.items() if k < step), "non-finite before the fault")
            at = min(k for k in steps if k >= step)  # the first record that covers the fault step
            _require(not math.isfinite(_watched(steps[at])), f"grad_norm finite at step {at}")
        if keras:
            _require("Invalid loss, terminating training" in text, "TerminateOnNaN did not stop the run")
        if job.initiator is not None and job.script == "ray_job.py":  # one console; each line names its rank
            lines = ray_lines(text)
            first = min((s for _, s, loss, _ in lines if not math.isfinite(loss)), default=None)
            culprits = {r for r, s, loss, _ in lines if s == first and not math.isfinite(loss)}
            _require(first == step and culprits == {fr}, f"the first 'loss nan' is rank {culprits}'s at step {first}")
        elif job.initiator is not None:
            own = _OWN_NAN[job.script].format(step=step)
            _require(fr in by_rank and all((own in t) == (r == fr) for r, t in by_rank.items()),
                     f"{own!r} is not (only) on rank {fr}")
        return
    if job.fault == "spike":
        before = [_watched(r) for k, r in steps.items() if k < step]
        at = min((k for k in steps if k >= step), default=step)
        _require(all(_finite(r) for r in steps.values()), "a spike run went non-finite")
        _require(at in steps and _watched(steps[at]) > 30 * max(before), f"no jump at step {step}: {steps}")
        return
    _require(all(k < step for k in steps), f"rank 0 logged step {max(steps, default=0)} after the fault step {step}")
    if one_process:
        _check_one_process_fault(text, job)
        return
    assert fr is not None, job.name
    if job.layout == "raylaunch":
        _check_ray_fault(text, job, fr)
        return
    if job.fault == "exception":
        _require(text.count("ValueError: corrupt sample in shard 3") >= 1, "no ValueError")
        if by_rank:
            _require(all(("ValueError: corrupt" in t) == (r == fr) for r, t in by_rank.items()),
                     "the ValueError is not (only) on the fault rank")
    elif job.fault == "oom":
        _require(f"OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU {fr} " in text,
                 "no OutOfMemoryError naming the fault rank's GPU")
    elif job.fault == "sigkill":
        if job.layout in ("pllaunch", "spawn"):  # no torchrun summary: the peers lose the killed rank
            _require(f"[rank{fr}]:" not in text, "the killed rank printed a traceback")
            _require("Connection closed by peer" in text or "Connection reset by peer" in text,
                     "no peer lost its connection")
        else:
            _require("Signal 9 (SIGKILL)" in launcher_text(logs), "torchrun did not report SIGKILL")
            if by_rank:
                _require("Traceback" not in by_rank.get(fr, ""), "the killed rank printed a traceback")
            else:  # accelerate launch: one unprefixed console, torch's own [rankN]: error lines
                _require(f"[rank{fr}]:" not in text, "the killed rank printed a traceback")
    elif job.fault == "hang" and not by_rank:  # spawn's one console: it names the first process that failed
        _require("Timed out waiting" in text, "no gloo timeout")
        failed = re.findall(r"-- Process (\d+) terminated with the following error", text)
        _require(bool(failed) and str(fr) not in failed, f"spawn did not report a peer of rank {fr}: {failed}")
    elif job.fault == "hang":  # a peer may see "Application timeout caused pair closure" instead
        _require("Timed out waiting" not in by_rank.get(fr, ""), "the hung rank reported a gloo timeout")
        _require(any("Timed out waiting" in t for t in by_rank.values()), "no peer reported a gloo timeout")
        _require(all("RuntimeError" in t for r, t in by_rank.items() if r != fr), "a peer did not fail")
    else:
        raise AssertionError(f"{job.name}: no check for fault {job.fault!r}")


def _check_clip_error(steps: Steps, by_rank: dict[int, str], step: int) -> None:
    """Fabric's clip_gradients raises on a non-finite norm: every rank, at the fault step, before
    anything non-finite is logged."""
    _require(bool(steps) and all(_finite(r) for r in steps.values()), f"non-finite metrics logged: {steps}")
    _require(max(steps) == step - 1, f"rank 0 did not log up to step {step - 1}: {sorted(steps)}")
    _require(len(by_rank) > 1 and all(_CLIP_ERROR in t for t in by_rank.values()),
             "not every rank raised the non-finite clip error")


def _check_ray_fault(text: str, job: Job, fr: int) -> None:
    """Ray Train's controller reports the failed worker group as ``[Rank N Error Snippet]:`` (or
    ``[Rank 0,3 Error Snippet]:``) with the failing workers' error (a SIGKILLed worker: 'The actor
    died unexpectedly', while its peers raise from their all-reduce); a hung rank prints nothing and
    its peers' gloo all-reduce times out."""
    snippet = f"[Rank {fr} Error Snippet]"
    if job.fault == "exception":
        _require("ValueError: corrupt sample in shard 3" in text and snippet in text, f"no ValueError under {snippet}")
    elif job.fault == "oom":
        _require(f"OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU {fr} " in text
                 and snippet in text, f"no OutOfMemoryError naming GPU {fr} under {snippet}")
    elif job.fault == "sigkill":
        _require(snippet in text and "The actor died unexpectedly" in text, f"Ray did not report rank {fr} dead")
        pid = re.search(rf"pid=(\d+)\) world_rank={fr},", text)  # the controller's worker-group table
        _require(pid is not None, f"no pid for world rank {fr}")
        assert pid is not None
        _require(f"pid={pid[1]}) Error in training function" not in text, f"the killed rank {fr} raised")
    elif job.fault == "hang":
        _require("Timed out waiting" in text, "no gloo timeout")
        _require(snippet not in text and "Error Snippet]" in text, f"Ray reported the hung rank {fr}, or no rank")
    else:
        raise AssertionError(f"{job.name}: no Ray check for fault {job.fault!r}")


def _check_one_process_fault(text: str, job: Job) -> None:
    """Keras wraps a layer's exception ("Exception encountered when calling Faulty.call()"), and a
    SIGKILLed process just stops: no traceback, no final "done". skorch lets the module's exception
    through as it is."""
    if job.script == "skorch_job.py":
        _require(job.fault in ("exception", "oom"), f"{job.name}: no skorch check for fault {job.fault!r}")
        want = ("ValueError: corrupt sample in shard 3: expected 16 features, got 0" if job.fault == "exception" else
                "OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 ")
        _require(want in text and not text.rstrip().endswith("done"), f"no {want!r}, or the fit went on")
    elif job.fault == "exception":
        _require("ValueError: Exception encountered when calling" in text
                 and "corrupt sample in shard 3: expected 16 features, got 0" in text, "no wrapped ValueError")
    elif job.fault == "oom":
        _require("OutOfMemoryError: Exception encountered when calling" in text
                 and "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 " in text, "no wrapped OutOfMemoryError")
    elif job.fault == "sigkill":
        _require("Traceback" not in text and not text.rstrip().endswith("done"), "the process did not just stop")
    else:
        raise AssertionError(f"{job.name}: no Keras check for fault {job.fault!r}")
