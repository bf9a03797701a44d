"""Record real torchrun jobs as golden diagnosis cases.

Run from the repository root with the project's virtualenv:

    .venv/bin/python -m tests.e2e.generate                      # every case
    .venv/bin/python -m tests.e2e.generate --only hang          # one scenario, its layouts
    .venv/bin/python -m tests.e2e.generate --only hang-console --out /tmp/cases
    .venv/bin/python -m tests.e2e.generate --only json          # every case in one style

Each case is ``<out>/<scenario>-<layout>/`` holding ``logs/`` (what the job wrote, with
the repository path replaced by /home/user/job and the scratch temp dir by /tmp) and
``expected.json`` (the ground truth, taken from the scenario definition, never from the
engine). After every run the generator checks that the fault really shows in the logs
the way the scenario says (``check_case``) and fails loudly when it does not.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from .metrics import LAST_RANK_STYLES, RANK_ZERO_STYLES, REDUCED_STYLES, RankSteps
from .metrics import rank_steps as parse_rank_steps
from .scenarios.styles import STYLES, HFTrainerLike

REPO = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).resolve().parent / "scenarios" / "train.py"
GOLDEN = Path(__file__).resolve().parent / "golden"
NEUTRAL_REPO = "/home/user/job"
NPROC = 4
RUN_TIMEOUT_S = 90  # a run takes 10-30 s; this only guards against a stuck job
MAX_CASE_BYTES = 200_000
LAYOUTS = ("logdir", "console", "perrank")



@dataclass(frozen=True)
class Scenario:
    """One job: a fault (or none) printed in one logging style, recorded in ``layouts``.

    ``name`` is ``<fault>`` for the original plain-style scenarios and ``<fault>-<style>``
    for the others; a case is ``<name>-<layout>``."""

    name: str
    args: tuple[str, ...]
    failure: str | None
    initiator_rank: int | None
    collateral_ranks: tuple[int, ...]
    exit_code: int  # what torchrun itself must exit with
    notes: str
    fault_rank: int | None = None
    fault_step: int | None = None
    checks: tuple[Callable[[Path, Scenario], None], ...] = field(default=(), compare=False)
    style: str = "plain"
    layouts: tuple[str, ...] = LAYOUTS

    @property
    def rank_zero_only(self) -> bool:
        """Metrics printed by one rank alone, reduced over ranks (HF Trainer, Lightning, Megatron-LM)."""
        return self.style in RANK_ZERO_STYLES

    @property
    def metrics_rank(self) -> int:
        """With ``rank_zero_only``: the rank that prints (0, or the last for Megatron-LM)."""
        return NPROC - 1 if self.style in LAST_RANK_STYLES else 0


# ---- checks: the fault shows in the logs as the scenario says -----------------------

TEE_RE = re.compile(r"^\[default(\d+)\]:(.*)$")
# --tee flushes a rank's unterminated line (a progress bar) when another rank's line comes, so
# a line can hold a second rank's prefix midway: what follows it is that rank's
TEE_SPLIT = re.compile(r"(?=\[default\d+\]:)")


def rank_texts(logs: Path) -> dict[int, str]:
    """Everything each rank wrote, whatever the layout (single node: local rank = rank)."""
    texts: dict[int, str] = {}
    for path in sorted(logs.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(logs)
        if rel.parts[0] == "torchrun" and path.name in ("stdout.log", "stderr.log"):
            rank = int(path.parent.name)
            texts[rank] = texts.get(rank, "") + path.read_text(errors="replace")
        elif rel.parts[0] == "node0" and (m := re.fullmatch(r"rank_(\d+)\.log", path.name)):
            texts[int(m.group(1))] = path.read_text(errors="replace")
        elif path.name == "console.log":
            lines = path.read_text(errors="replace").splitlines()
            for line in (part for whole in lines for part in TEE_SPLIT.split(whole)):
                if m := TEE_RE.match(line):
                    rank = int(m.group(1))
                    texts[rank] = texts.get(rank, "") + m.group(2) + "\n"
    return texts


def launcher_text(logs: Path) -> str:
    return "".join(p.read_text(errors="replace") for name in ("launcher.log", "console.log")
                   if (p := logs / name).is_file())


def rank_steps(logs: Path, sc: Scenario) -> RankSteps:
    """rank -> step -> metrics as the scenario's style prints them."""
    steps = parse_rank_steps(rank_texts(logs), sc.style)
    if sc.rank_zero_only:
        _require(set(steps) <= {sc.metrics_rank}, f"one-rank style, but ranks {sorted(steps)} print metrics")
    return steps


def logged_steps(sc: Scenario, last: int) -> list[int]:
    """The steps up to ``last`` that the style prints a metric record for."""
    cls = STYLES[sc.style]
    every = cls.logging_steps if issubclass(cls, HFTrainerLike) else 1
    return list(range(every, last + 1, every))


def _require(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(what)


def check_all_ranks_spoke(logs: Path, sc: Scenario) -> None:
    texts = rank_texts(logs)
    _require(sorted(texts) == list(range(NPROC)), f"ranks with output: {sorted(texts)}")
    for rank, text in texts.items():
        _require(f"backend=gloo rank={rank}" in text, f"rank {rank}: no config line")


def check_clean_run(logs: Path, sc: Scenario) -> None:
    steps = rank_steps(logs, sc)
    n = int(sc.args[sc.args.index("--steps") + 1])
    for rank in (sc.metrics_rank,) if sc.rank_zero_only else range(NPROC):
        got = steps.get(rank, {})
        _require(sorted(got) == logged_steps(sc, n), f"rank {rank}: steps {sorted(got)}")
        _require(all(math.isfinite(r["loss"]) for r in got.values()), f"rank {rank}: non-finite loss")


def check_nonfinite_spread(logs: Path, sc: Scenario) -> None:
    """Fault rank's local loss goes non-finite at the fault step; the others one step later."""
    steps, s, fr = rank_steps(logs, sc), sc.fault_step, sc.fault_rank
    assert s is not None and fr is not None
    for rank in range(NPROC):
        before, at, after = (steps[rank][s - 1], steps[rank][s], steps[rank][s + 1])
        _require(math.isfinite(before["loss"]) and math.isfinite(before["grad_norm"]),
                 f"rank {rank}: non-finite before the fault step")
        _require(not math.isfinite(at["grad_norm"]), f"rank {rank}: grad_norm finite at step {s}")
        _require(math.isfinite(at["loss"]) == (rank != fr),
                 f"rank {rank}: loss at step {s} is {at['loss']}")
        _require(not math.isfinite(after["loss"]), f"rank {rank}: loss finite at step {s + 1}")


def check_reduced_nonfinite(logs: Path, sc: Scenario) -> None:
    """Rank-zero-only logging: rank 0 prints metrics reduced over ranks, finite before the
    fault step and non-finite from it (HF's NaN filter keeps the logged loss finite; only
    grad_norm shows it). Which rank went NaN cannot be read from these logs."""
    steps, s = rank_steps(logs, sc).get(sc.metrics_rank, {}), sc.fault_step
    assert s is not None
    before = [rec for k, rec in steps.items() if k < s]
    after = [rec for k, rec in steps.items() if k >= s]
    _require(bool(before) and all(math.isfinite(v) for rec in before for v in rec.values()),
             "non-finite before the fault step")
    _require(bool(after), "nothing logged from the fault step on")
    filtered = sc.style == "hf"
    for rec in after:
        if "grad_norm" in rec:
            _require(not math.isfinite(rec["grad_norm"]), f"grad_norm finite after the fault: {rec}")
        _require(math.isfinite(rec["loss"]) == filtered, f"logged loss after the fault: {rec}")


def check_scale_collapse(logs: Path, sc: Scenario) -> None:
    steps, s = rank_steps(logs, sc), sc.fault_step
    assert s is not None
    for rank in range(NPROC):
        scales = [steps[rank][k]["loss_scale"] for k in sorted(steps[rank])]
        _require(all(x == 65536 for x in scales[: s - 1]), f"rank {rank}: scale moved before step {s}")
        tail = scales[s - 1:]
        halved = (math.isclose(b, a / 2, rel_tol=1e-5)  # printed with :g, 6 significant digits
                  for a, b in itertools.pairwise(scales[s - 2:]))
        _require(all(halved),
                 f"rank {rank}: scale does not halve every step from step {s}: {tail}")
        _require(tail[-1] < 1, f"rank {rank}: final scale {tail[-1]} not below 1")


def check_warmup_backoff(logs: Path, sc: Scenario) -> None:
    steps = rank_steps(logs, sc)
    for rank in range(NPROC):
        scales = [steps[rank][k]["loss_scale"] for k in sorted(steps[rank])]
        # the first printed scale is already init_scale/2 when step 1 overflowed
        backoffs = sum(b < a for a, b in itertools.pairwise(scales)) + 1
        _require(2 <= backoffs <= 6 and scales[-1] == scales[-6],
                 f"rank {rank}: not a short warm-up backoff: {scales}")


def check_reduced_warmup(logs: Path, sc: Scenario) -> None:
    """Rank-zero-only fp16 warm-up: the first logged grad norms overflow, then all are finite."""
    recs = [rec for _, rec in sorted(rank_steps(logs, sc).get(sc.metrics_rank, {}).items())]
    finite = [math.isfinite(rec["grad_norm"]) for rec in recs]
    first_ok = finite.index(True) if True in finite else len(finite)
    _require(1 <= first_ok <= 3 and all(finite[first_ok:]),
             f"not a short warm-up overflow: grad_norm finite = {finite}")


def check_crash(logs: Path, sc: Scenario) -> None:
    """The fault rank stops at the fault step (rank-zero-only: rank 0 logs nothing from it
    on); torchrun reports the job as failed."""
    steps, s, fr = rank_steps(logs, sc), sc.fault_step, sc.fault_rank
    assert s is not None and fr is not None
    if sc.rank_zero_only:
        mr = sc.metrics_rank
        _require(bool(steps.get(mr)) and max(steps[mr]) < s, f"rank {mr} logged {sorted(steps.get(mr, {}))}")
    else:
        _require(max(steps[fr]) == s - 1, f"fault rank {fr} last step {max(steps[fr])}")
    _require("ChildFailedError" in launcher_text(logs), "no torchrun failure summary")


def check_exception(logs: Path, sc: Scenario) -> None:
    texts = rank_texts(logs)
    assert sc.fault_rank is not None
    _require(f"[rank{sc.fault_rank}]: ValueError: corrupt sample" in texts[sc.fault_rank],
             "fault rank shows no ValueError traceback")
    _require(all("ValueError" not in t for r, t in texts.items() if r != sc.fault_rank),
             "a peer raised the ValueError too")


def check_oom(logs: Path, sc: Scenario) -> None:
    texts, fr = rank_texts(logs), sc.fault_rank
    assert fr is not None
    want = f"OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU {fr} "
    _require(want in texts[fr], "fault rank shows no OutOfMemoryError")
    _require(all("out of memory" not in t for r, t in texts.items() if r != fr),
             "a peer reported out of memory too")


def check_sigkill(logs: Path, sc: Scenario) -> None:
    assert sc.fault_rank is not None
    _require("Signal 9 (SIGKILL)" in launcher_text(logs), "torchrun did not report SIGKILL")
    _require("Traceback" not in rank_texts(logs)[sc.fault_rank], "killed rank printed a traceback")


def check_hang(logs: Path, sc: Scenario) -> None:
    steps, texts, s, fr = rank_steps(logs, sc), rank_texts(logs), sc.fault_step, sc.fault_rank
    assert s is not None and fr is not None
    for rank in range(NPROC):
        if sc.rank_zero_only and rank == sc.metrics_rank:
            _require(bool(steps.get(rank)) and max(steps[rank]) < s, f"rank {rank} logged {sorted(steps.get(rank, {}))}")
        elif not sc.rank_zero_only:
            _require(max(steps[rank]) == s - 1, f"rank {rank}: last step {max(steps[rank])}, not {s - 1}")
        timed_out = "Timed out waiting" in texts[rank]
        _require(timed_out == (rank != fr), f"rank {rank}: gloo timeout reported={timed_out}")
    _require("Traceback" not in texts[fr], "hung rank printed a traceback")


# ---- scenarios ----------------------------------------------------------------------

def _fault(kind: str, rank: int, step: int) -> tuple[str, ...]:
    return ("--fault", kind, "--fault-rank", str(rank), "--fault-step", str(step))


OTHERS = {r: tuple(x for x in range(NPROC) if x != r) for r in range(NPROC)}
_BASE = (check_all_ranks_spoke,)

SCENARIOS: dict[str, Scenario] = {sc.name: sc for sc in (
    Scenario(
        "exception", ("--steps", "20", "--timeout", "10", *_fault("exception", 2, 6)),
        "rank_exception", 2, OTHERS[2], 1,
        "Rank 2 raises ValueError at step 6 before its forward pass; the peers, waiting in "
        "the step's all-reduce, fail with gloo 'Connection closed by peer' errors or are "
        "SIGTERMed by torchrun first.",
        2, 6, (*_BASE, check_crash, check_exception)),
    Scenario(
        "sigkill", ("--steps", "20", "--timeout", "10", *_fault("sigkill", 1, 5)),
        "rank_killed", 1, OTHERS[1], 1,
        "Rank 1 SIGKILLs itself at step 5 (no traceback, no error file); the peers fail in the "
        "all-reduce with gloo 'Connection closed by peer' errors or are SIGTERMed first; "
        "torchrun reports exitcode -9 (SIGKILL) for rank 1.",
        1, 5, (*_BASE, check_crash, check_sigkill)),
    Scenario(
        "nan", ("--steps", "12", *_fault("nan", 2, 7)),
        "nonfinite_loss", 2, OTHERS[2], 0,
        "fp32. Rank 2 gets a NaN in its input batch at step 7: its local loss is nan at step 7, "
        "every rank's (all-reduced) grad_norm is nan at step 7, the other ranks' losses are nan "
        "from step 8. The job keeps going and exits 0.",
        2, 7, (*_BASE, check_nonfinite_spread)),
    Scenario(
        "fp16_overflow", ("--steps", "12", "--precision", "fp16", "--no-scaler",
                          *_fault("fp16_overflow", 1, 6)),
        "amp_bf16_vs_fp16", 1, OTHERS[1], 0,
        "fp16 autocast with no loss scaling. Rank 1's inputs are scaled by 1e6 at step 6, its "
        "fp16 activations overflow (max 65504; inf - inf gives nan): its loss is nan at step 6, "
        "grad_norm is nan on "
        "every rank at step 6, the other ranks' losses are nan from step 7. Exits 0.",
        1, 6, (*_BASE, check_nonfinite_spread)),
    Scenario(
        "scale_collapse", ("--steps", "45", "--precision", "fp16", "--scaler",
                           *_fault("scale_collapse", 2, 6)),
        "loss_scale_collapse", None, (), 0,
        "fp16 + GradScaler(init_scale=65536). From step 6 on, rank 2's backward loss is "
        "multiplied by 1e30, so every step's all-reduced gradients overflow on every rank and "
        "the scaler halves the scale each step, from 65536 down to 2^-24. No rank is the "
        "initiator: every rank sees the same overflow at the same step.",
        2, 6, (*_BASE, check_clean_run, check_scale_collapse)),
    Scenario(
        "hang", ("--steps", "20", "--timeout", "10", *_fault("hang", 1, 6)),
        "rank_hang", 1, OTHERS[1], 1,
        "Rank 1 sleeps before step 6's all-reduce. After the 10 s process-group timeout the "
        "peers raise gloo 'Timed out waiting 10000ms for recv/send operation' errors; torchrun "
        "SIGTERMs the rest. torchrun's 'Root Cause (first observed failure)' names a peer that "
        "timed out, not the hung rank, which printed nothing.",
        1, 6, (*_BASE, check_hang)),
    Scenario(
        "healthy_fp16_scaler", ("--steps", "20", "--precision", "fp16", "--scaler",
                                "--init-scale", str(2**20)),
        None, None, (), 0,
        "fp16 + GradScaler(init_scale=2^20): the first 4 steps overflow (grad_norm nan/inf) and "
        "the scale backs off to 65536, then training is normal. Benign warm-up: at most info.",
        None, None, (*_BASE, check_clean_run, check_warmup_backoff)),
    Scenario(
        "healthy_bf16", ("--steps", "20", "--precision", "bf16"),
        None, None, (), 0,
        "bf16 autocast, no scaler, no fault. Nothing to report above info.",
        None, None, (*_BASE, check_clean_run)),
)}


# ---- the same faults in other logging styles, mostly on a rank other than 0 -----------

STYLED: tuple[tuple[str, str, str, int | None], ...] = (
    # (base scenario, style, layout, fault rank)
    ("nan", "logging", "console", 3),
    ("nan", "logging_dash", "logdir", 1),
    ("nan", "kv", "perrank", 2),
    ("nan", "loguru", "logdir", 3),
    ("nan", "rich", "console", 1),
    ("nan", "json", "perrank", 2),
    ("nan", "tqdm", "console", 3),
    ("nan", "hf", "logdir", 1),
    ("nan", "hf_nofilter", "console", 2),
    ("nan", "lightning", "perrank", 3),
    ("exception", "logging", "logdir", 1),
    ("exception", "json", "console", 3),
    ("exception", "kv", "perrank", 0),
    ("exception", "hf", "console", 2),
    ("exception", "lightning", "logdir", 3),
    ("oom", "logging_dash", "perrank", 3),
    ("oom", "loguru", "console", 1),
    ("oom", "rich", "logdir", 2),
    ("oom", "hf", "logdir", 2),
    ("sigkill", "kv", "console", 3),
    ("sigkill", "json", "logdir", 2),
    ("sigkill", "tqdm", "perrank", 1),
    ("sigkill", "lightning", "console", 2),
    ("hang", "logging", "perrank", 2),
    ("hang", "loguru", "logdir", 3),
    ("hang", "hf", "console", 3),
    ("hang", "lightning", "logdir", 1),
    ("fp16_overflow", "json", "console", 3),
    ("fp16_overflow", "tqdm", "logdir", 2),
    ("scale_collapse", "logging_dash", "perrank", 3),
    ("healthy_bf16", "logging", "logdir", None),
    ("healthy_bf16", "kv", "perrank", None),
    ("healthy_bf16", "loguru", "perrank", None),
    ("healthy_bf16", "rich", "console", None),
    ("healthy_bf16", "json", "logdir", None),
    ("healthy_bf16", "tqdm", "console", None),
    ("healthy_bf16", "hf", "perrank", None),
    ("healthy_bf16", "lightning", "console", None),
    ("healthy_fp16_scaler", "logging", "perrank", None),
    ("healthy_fp16_scaler", "json", "console", None),
    ("healthy_fp16_scaler", "hf", "logdir", None),
    # issue #12: 8 more styles, 3 cases each (a healthy run, a numeric fault, a crash or hang)
    ("fp16_overflow", "absl", "perrank", 1),
    ("healthy_fp16_scaler", "absl", "perrank", None),
    ("exception", "absl", "logdir", 3),
    ("nan", "titan", "perrank", 1),
    ("healthy_bf16", "titan", "logdir", None),
    ("oom", "titan", "console", 2),
    ("fp16_overflow", "structlog", "logdir", 2),
    ("healthy_bf16", "structlog", "perrank", None),
    ("sigkill", "structlog", "console", 1),
    ("nan", "megatron", "logdir", 2),
    ("healthy_bf16", "megatron", "perrank", None),
    ("exception", "megatron", "console", 1),
    ("nan", "deepspeed", "console", 1),
    ("healthy_fp16_scaler", "deepspeed", "logdir", None),
    ("hang", "deepspeed", "perrank", 3),
    ("nan", "keras", "perrank", 1),
    ("healthy_bf16", "keras", "console", None),
    ("oom", "keras", "logdir", 1),
    ("fp16_overflow", "table", "perrank", 1),
    ("healthy_fp16_scaler", "table", "logdir", None),
    ("hang", "table", "console", 2),
    ("nan", "bracket", "perrank", 2),
    ("healthy_fp16_scaler", "bracket", "logdir", None),
    ("oom", "bracket", "console", 0),
)
NONFINITE = ("nan",)  # faults whose only trace is a non-finite metric (not fp16_overflow: see below)
HF_STEP = 8  # a NaN at the second step of HF's 2-step logging window (logging_steps=2)


def restyle(base: Scenario, style: str, layout: str, rank: int | None) -> Scenario:
    """``base``'s fault printed in ``style``, on ``rank``, recorded in one layout.

    The truth follows from the injection as for ``base``; the one change is the rule
    "null when the logs cannot tell": with metrics reduced over ranks (HF Trainer,
    Lightning, Megatron-LM on one rank; torchtitan on every rank) a NaN's rank cannot be
    read from the logs, so the initiator is null.
    Crashes, OOMs and hangs still name their rank (traceback, launcher summary, the rank
    missing from the timeout reports)."""
    args = [*base.args, "--style", style]
    step = base.fault_step
    reduced = style in REDUCED_STYLES
    if base.name in NONFINITE and style in ("hf", "hf_nofilter"):
        step = HF_STEP
    if rank is not None:
        args[args.index("--fault-rank") + 1] = str(rank)
        args[args.index("--fault-step") + 1] = str(step)
    initiator = rank if base.initiator_rank is not None else None
    tell = ""
    if base.name in NONFINITE and reduced:
        initiator = None
        printer = ("Only the last rank prints metrics" if style in LAST_RANK_STYLES
                   else "Only rank 0 prints metrics" if style in RANK_ZERO_STYLES
                   else "Every rank prints the loss")
        tell = (f" {printer}, reduced over ranks, so the logs cannot tell which "
                "rank went non-finite: the expected initiator is null.")
    checks = tuple(check_reduced_nonfinite if c is check_nonfinite_spread and reduced
                   else check_reduced_warmup if c is check_warmup_backoff and reduced
                   else c for c in base.checks)
    where = f" on rank {rank} at step {step}" if rank is not None else ""
    notes = (f"Style '{style}': {STYLES[style].summary}. The '{base.name}' scenario{where}; "
             f"see its notes in tests/e2e/README.md for how it shows.{tell}")
    return Scenario(
        f"{base.name}-{style}", tuple(args), base.failure, initiator,
        OTHERS[rank] if base.collateral_ranks and rank is not None else (),
        base.exit_code, notes, rank if rank is not None else None, step if rank is not None else None,
        checks, style, (layout,))


def _oom_base() -> Scenario:
    return Scenario(
        "oom", ("--steps", "20", "--timeout", "10", *_fault("oom", 2, 6)),
        "cuda_oom", 2, OTHERS[2], 1,
        "The fault rank raises torch.OutOfMemoryError with the CUDA caching allocator's message "
        "(GPU index = its local rank) at step 6; the peers fail in the all-reduce or are SIGTERMed.",
        2, 6, (*_BASE, check_crash, check_oom))


_BASES = {**SCENARIOS, "oom": _oom_base()}
SCENARIOS.update({sc.name: sc for sc in (restyle(_BASES[b], st, lay, r) for b, st, lay, r in STYLED)})


# ---- running ------------------------------------------------------------------------

def _display(path: Path) -> str:
    """A path as the recorded command shows it: relative to the repo root when inside it."""
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def torch_version() -> str:
    return metadata.version("torch").split("+")[0]


def torchrun_command(layout: str, logs: Path, script: str, args: list[str] | tuple[str, ...],
                     show: Callable[[Path], str] = str) -> tuple[list[str], str]:
    """The torchrun argv of ``script`` in one of the three layouts (``show`` writes a path into the
    command) and the name of the file that receives the agent's console."""
    launch = ["-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(NPROC)]
    script_args = list(args)
    if layout == "logdir":
        launch += ["--log-dir", show(logs / "torchrun"), "--redirects", "3"]
        console = "launcher.log"
    elif layout == "console":
        launch += ["--tee", "3"]
        console = "console.log"
    elif layout == "perrank":
        script_args += ["--own-log-dir", show(logs)]
        console = "launcher.log"
    else:
        raise ValueError(f"unknown layout {layout!r}")
    return [*launch, script, *script_args], console


def build_command(sc: Scenario, layout: str, logs: Path) -> tuple[list[str], str]:
    """The torchrun argv and the name of the file that receives the agent's console."""
    return torchrun_command(layout, logs, _display(SCRIPT), sc.args, show=_display)


def replace_in_files(logs: Path, subs: list[tuple[bytes, bytes]]) -> None:
    """Apply ``subs`` (old → new bytes) to every file below ``logs``, in place."""
    for path in logs.rglob("*"):
        if path.is_file():
            data = original = path.read_bytes()
            for old, new in subs:
                data = data.replace(old, new)
            if data != original:
                path.write_bytes(data)


def _neutralise(logs: Path, scratch: Path) -> None:
    """Make the recorded text machine-independent; everything else stays verbatim."""
    replace_in_files(logs, [(str(scratch).encode(), b"/tmp"), (str(REPO).encode(), NEUTRAL_REPO.encode())])


def _run(argv: list[str], console: Path, env: dict[str, str]) -> int:
    with console.open("wb") as out:
        proc = subprocess.Popen([sys.executable, *argv], cwd=REPO, env=env, stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            return proc.wait(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the agent and every rank it started
            proc.wait()
            raise RuntimeError(f"run exceeded {RUN_TIMEOUT_S}s: {' '.join(argv)}") from None


def recorded_tails(logs: Path, lines: int = 15) -> str:
    """The last lines of every file a run recorded: what a failed run said, for the message."""
    parts = []
    for path in sorted(p for p in logs.rglob("*") if p.is_file()):
        tail = path.read_bytes().decode("utf-8", "replace").splitlines()[-lines:]
        parts.append(f"--- {path.relative_to(logs)} (last {len(tail)} lines)\n" + "\n".join(tail))
    return "\n".join(parts)


def record_case(sc: Scenario, layout: str, out_root: Path) -> Path:
    """Run one scenario in one layout, record it under out_root, check it; return the case dir."""
    case = out_root / f"{sc.name}-{layout}"
    if case.exists():
        shutil.rmtree(case)
    logs = case / "logs"
    logs.mkdir(parents=True)
    argv, console_name = build_command(sc, layout, logs)
    scratch = Path(tempfile.mkdtemp(prefix="rankwatch-e2e-"))
    # PYTHONUNBUFFERED: the agent's stdout (where --tee copies rank stdout) is a file here, not
    # a terminal; unbuffered, the merged console keeps the order a terminal would show instead
    # of dumping every rank's stdout after the failure summary at exit.
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TMPDIR": str(scratch), "PYTHONHASHSEED": "0",
           "PYTHONUNBUFFERED": "1"}
    for var in ("TORCHELASTIC_ERROR_FILE", "TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE", "LOGLEVEL",
                "TORCH_LOGS", "TORCH_LOGS_FORMAT", "TORCH_CPP_LOG_LEVEL"):
        env.pop(var, None)
    try:
        started = time.monotonic()
        rc = _run(argv, logs / console_name, env)
        elapsed = time.monotonic() - started
        _neutralise(logs, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    if rc != sc.exit_code:
        raise AssertionError(f"{case.name}: torchrun exited {rc}, expected {sc.exit_code}\n"
                             + recorded_tails(logs))
    for check in sc.checks:
        try:
            check(logs, sc)
        except AssertionError as exc:
            raise AssertionError(f"{case.name}: {check.__name__}: {exc}") from None
    size = sum(p.stat().st_size for p in case.rglob("*") if p.is_file())
    if size > MAX_CASE_BYTES:
        raise AssertionError(f"{case.name}: {size} bytes recorded, limit {MAX_CASE_BYTES}")

    expected = {
        "scenario": sc.name,
        "layout": layout,
        "style": sc.style,
        "failure": sc.failure,
        "initiator_rank": sc.initiator_rank,
        "collateral_ranks": list(sc.collateral_ranks),
        "max_severity": "info" if sc.failure is None else None,
        "command": " ".join(["python", *argv]),
        "torch": torch_version(),
        "notes": sc.notes,
    }
    (case / "expected.json").write_text(json.dumps(expected, indent=2) + "\n")
    print(f"recorded {case.name:32s} rc={rc} {elapsed:5.1f}s {size / 1024:6.1f} KiB", flush=True)
    return case


def select(only: list[str]) -> list[tuple[Scenario, str]]:
    """Cases named by --only: a scenario (all layouts), a layout, or '<scenario>-<layout>'."""
    every = [(sc, lay) for sc in SCENARIOS.values() for lay in sc.layouts]
    if not only:
        return every

    def names(sc: Scenario, lay: str) -> tuple[str, ...]:
        return sc.name, lay, sc.style, f"{sc.name}-{lay}"

    picked = [(sc, lay) for sc, lay in every if any(name in names(sc, lay) for name in only)]
    unknown = [n for n in only if not any(n in names(sc, lay) for sc, lay in every)]
    if unknown:
        raise SystemExit(f"unknown scenario/layout/case: {', '.join(unknown)}; "
                         f"scenarios: {', '.join(SCENARIOS)}; layouts: {', '.join(LAYOUTS)}")
    return picked


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Record real torchrun scenarios as golden cases.")
    p.add_argument("--only", action="append", default=[], metavar="NAME",
                   help="scenario, layout or <scenario>-<layout> (repeatable; default: all)")
    p.add_argument("--out", type=Path, default=GOLDEN, help=f"output root (default: {_display(GOLDEN)})")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    failed = []
    for sc, layout in select(args.only):
        try:
            record_case(sc, layout, args.out)
        except (AssertionError, RuntimeError) as exc:
            print(f"FAILED {exc}", file=sys.stderr, flush=True)
            failed.append(f"{sc.name}-{layout}")
    if failed:
        print(f"{len(failed)} case(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
