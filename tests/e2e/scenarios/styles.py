"""How the scenario job prints: one reporter per logging style real training jobs use.

``train.py --style NAME`` picks one. Every reporter prints the start-up ``config: ...``
line on every rank (the job's own print, before any trainer exists) and then one metric
record per step in its style. Rank-zero-only styles (HF Trainer, Lightning) print metrics
on rank 0 only, and what they print is reduced over ranks, as those frameworks do.
The formats are written here, without the frameworks; each class names its model.
"""

from __future__ import annotations

import json
import logging
import math
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar


@dataclass(frozen=True)
class StepRecord:
    step: int
    max_steps: int
    loss: float  # this rank's local loss
    grad_norm: float  # norm of the all-reduced gradients (the same on every rank)
    loss_scale: float | None  # GradScaler scale after update(), when a scaler is used
    lr: float


class Reporter:
    """Base: one rank's output. Subclasses print ``config`` and ``step`` in their style."""

    rank_zero_only: ClassVar[bool] = False  # metrics printed by rank 0 only, reduced over ranks
    summary: ClassVar[str] = ""  # one line, for the golden cases' notes

    def __init__(self, rank: int, world: int) -> None:
        self.rank, self.world = rank, world
        self.started = time.monotonic()

    def config(self, text: str) -> None:
        print(text, flush=True)

    def contribution(self, rec: StepRecord) -> float | None:
        """This rank's value to average over ranks at this step (an all-reduce), or None."""
        return None

    def step(self, rec: StepRecord, mean_loss: float | None) -> None:
        """``mean_loss``: ``contribution`` averaged over ranks, when there was one."""
        raise NotImplementedError

    def end(self) -> None:
        """Called after the last step (not after a crash)."""


def _metrics(rec: StepRecord, sep: str, kv: str, digits: int = 6) -> str:
    parts = [f"loss{kv}{rec.loss:.{digits}f}", f"grad_norm{kv}{rec.grad_norm:.{digits}f}"]
    if rec.loss_scale is not None:
        parts.append(f"loss_scale{kv}{rec.loss_scale:g}")
    return sep.join(parts)


class Plain(Reporter):
    """The original format: ``step 7 | loss 0.317500 | grad_norm nan | loss_scale 16384``."""

    summary = "pipe-separated 'step N | loss X | grad_norm Y' print() lines on every rank"

    def step(self, rec: StepRecord, mean_loss: float | None) -> None:
        print(f"step {rec.step} | {_metrics(rec, ' | ', ' ')}", flush=True)


class _StdLogging(Reporter):
    """Python ``logging`` to stdout with a format string (``fmt`` set by subclasses)."""

    fmt: ClassVar[str]
    logger_name: ClassVar[str]

    def __init__(self, rank: int, world: int) -> None:
        super().__init__(rank, world)
        handler = logging.StreamHandler(sys.stdout)
        handler.setFormatter(logging.Formatter(self.fmt.replace("{rank}", str(rank))))
        self.log = logging.getLogger(self.logger_name)
        self.log.handlers[:] = [handler]
        self.log.setLevel(logging.INFO)
        self.log.propagate = False

    def config(self, text: str) -> None:
        self.log.info(text)


class PyLogging(_StdLogging):
    """``%(asctime)s [rank1] %(levelname)s %(name)s: %(message)s`` with pipe-separated metrics:
    ``2026-12-02 13:15:05,079 [rank1] INFO train: step 6 | loss 1.0800 | grad_norm nan``."""

    summary = "python logging, '%(asctime)s [rankN] %(levelname)s %(name)s: ...', pipe-separated metrics"

    fmt = "%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s"
    logger_name = "train"

    def step(self, rec: StepRecord, mean_loss: float | None) -> None:
        self.log.info("step %d | %s", rec.step, _metrics(rec, " | ", " ", 4))


class DashLogging(_StdLogging):
    """The logging cookbook's ``%(asctime)s - %(name)s - %(levelname)s - %(message)s``:
    ``2026-12-02 13:15:05,079 - __main__ - INFO - Rank 1: step=6, loss=1.0800, grad_norm=nan, lr=0.05``."""

    summary = "python logging, '%(asctime)s - %(name)s - %(levelname)s - Rank N: step=.., loss=..'"

    fmt = "%(asctime)s - %(name)s - %(levelname)s - %(message)s"
    logger_name = "__main__"

    def step(self, rec: StepRecord, mean_loss: float | None) -> None:
        self.log.info("Rank %d: step=%d, %s, lr=%g", self.rank, rec.step,
                      _metrics(rec, ", ", "=", 4), rec.lr)


class KeyValue(Reporter):
    """Bare ``print`` of space-separated key value pairs: ``rank 1 step 13 loss nan grad_norm nan``."""

    summary = "print() of space-separated key values, 'rank N step S loss X grad_norm Y lr Z'"

    def step(self, rec: StepRecord, mean_loss: float | None) -> None:
        print(f"rank {self.rank} step {rec.step} {_metrics(rec, ' ', ' ', 5)} lr {rec.lr:g}", flush=True)


class LoguruLike(Reporter):
    """loguru's default sink format, ``{time:YYYY-MM-DD HH:mm:ss.SSS} | {level: <8} |
    {name}:{function}:{line} - {message}`` (loguru/_defaults.py), without colours:
    ``2026-12-02 13:15:05.079 | INFO     | __main__:main:176 - step=3 loss=2.1000 grad_norm=0.5000``."""

    summary = "loguru's default format on stderr, 'TIME | INFO     | __main__:main:LINE - step=S loss=X ...'"

    def _emit(self, level: str, message: str) -> None:
        caller = sys._getframe(2)
        now = datetime.now()
        stamp = now.strftime("%Y-%m-%d %H:%M:%S.") + f"{now.microsecond // 1000:03d}"
        print(f"{stamp} | {level:<8} | __main__:{caller.f_code.co_name}:{caller.f_lineno} - {message}",
              file=sys.stderr, flush=True)

    def config(self, text: str) -> None:
        self._emit("INFO", text)

    def step(self, rec: StepRecord, mean_loss: float | None) -> None:
        self._emit("INFO", f"step={rec.step} {_metrics(rec, ' ', '=', 4)}")


class RichLike(Reporter):
    """rich's ``RichHandler`` (the real one; rich is a rankwatch dependency) on a 160-column
    console that is not a terminal: ``[12/03/26 08:50:01] INFO     step 6: loss=1.0800
    grad_norm=nan          train.py:183``; a repeated timestamp prints as blanks."""

    summary = "rich's RichHandler, '[MM/DD/YY HH:MM:SS] INFO     step S: loss=X ...   train.py:LINE'"

    def __init__(self, rank: int, world: int) -> None:
        super().__init__(rank, world)
        from rich.console import Console
        from rich.logging import RichHandler

        handler = RichHandler(console=Console(file=sys.stdout, width=160, color_system=None),
                              show_path=True, markup=False)
        handler.setFormatter(logging.Formatter("%(message)s"))
        self.log = logging.getLogger("rich_train")
        self.log.handlers[:] = [handler]
        self.log.setLevel(logging.INFO)
        self.log.propagate = False

    def config(self, text: str) -> None:
        self.log.info(text)

    def step(self, rec: StepRecord, mean_loss: float | None) -> None:
        self.log.info("step %d: %s", rec.step, _metrics(rec, " ", "=", 4))


class JsonLines(Reporter):
    """Structured logs, one JSON object per line, as ``json.dumps`` writes them (bare ``NaN``),
    with a ``"global_step/max_steps": "8/40"`` counter as some trainers (LLaMA-Factory) log it."""

    summary = "JSON objects, one per line, bare NaN, a 'global_step/max_steps' counter"

    def _emit(self, **fields: object) -> None:
        head = {"time": datetime.now().astimezone().isoformat(timespec="milliseconds"),
                "level": "INFO", "logger": "train", "rank": self.rank}
        print(json.dumps({**head, **fields}), flush=True)

    def config(self, text: str) -> None:
        self._emit(msg=text)

    def step(self, rec: StepRecord, mean_loss: float | None) -> None:
        fields: dict[str, object] = {"msg": "train_step", "global_step/max_steps": f"{rec.step}/{rec.max_steps}",
                                     "loss": rec.loss, "grad_norm": rec.grad_norm, "lr": rec.lr}
        if rec.loss_scale is not None:
            fields["loss_scale"] = rec.loss_scale
        self._emit(**fields)


def progress_bar(n: int, total: int, elapsed: float, desc: str = "", postfix: str = "",
                 width: int = 10) -> str:
    """tqdm's default bar (``{l_bar}{bar}{r_bar}``): ``train:  35%|███▌      | 7/20 [00:01<00:02,
    5.03it/s, loss=0.318]``. Partial cells use the eighth blocks tqdm uses."""
    frac = n / total
    cells = frac * width
    full = int(cells)
    eighths = " ▏▎▍▌▋▊▉"
    bar = "█" * full + (eighths[int((cells - full) * 8)] if full < width else "")
    bar = bar.ljust(width)
    rate = n / elapsed if elapsed > 0 else 0.0
    remaining = (total - n) / rate if rate > 0 else 0.0

    def clock(s: float) -> str:
        return f"{int(s) // 60:02d}:{int(s) % 60:02d}"

    head = f"{desc}: " if desc else ""
    tail = f", {postfix}" if postfix else ""
    return (f"{head}{frac * 100:3.0f}%|{bar}| {n}/{total} [{clock(elapsed)}<{clock(remaining)}, "
            f"{rate:5.2f}it/s{tail}]")


def _short(x: float) -> str:
    """tqdm's postfix number format (3 significant digits)."""
    return f"{x:.3g}"


class TqdmInterleaved(Reporter):
    """A tqdm bar redrawn with ``\\r`` on every rank, and ``print`` log lines written while the bar
    is active, so each log line is glued to the end of the bar:
    ``\\rtrain:  58%|█████▊    | 7/12 [00:01<00:00,  5.03it/s, loss=0.318]step 7 loss=0.3175 ...``."""

    summary = "a \\r tqdm bar with a loss= postfix on every rank, log lines glued to it"

    def step(self, rec: StepRecord, mean_loss: float | None) -> None:
        postfix = f"loss={_short(rec.loss)}, gnorm={_short(rec.grad_norm)}"
        bar = progress_bar(rec.step, rec.max_steps, time.monotonic() - self.started, "train", postfix)
        sys.stdout.write("\r" + bar)
        print(f"step {rec.step} {_metrics(rec, ' ', '=', 4)}", flush=True)

    def end(self) -> None:
        sys.stdout.write("\n")
        sys.stdout.flush()


class HFTrainerLike(Reporter):
    """transformers' Trainer: only the main process logs; every ``logging_steps`` it prints
    ``{'loss': 0.3175, 'grad_norm': 1.2345, 'learning_rate': 0.05, 'epoch': 0.8}`` (tqdm.write
    to stdout, ``str(logs)``), the tqdm bar on stderr. ``loss`` is the mean over the logging window
    of the loss gathered from every rank (``_nested_gather(tr_loss).mean()``), rounded to 4 digits.
    With ``logging_nan_inf_filter`` (the default) a rank's non-finite step loss is replaced by the
    window's running average (``tr_loss + tr_loss / (1 + global_step - last_logged)``), so the
    logged loss stays finite (or 0.0) while ``grad_norm`` is nan (Trainer._inner_training_loop,
    _maybe_log_save_evaluate)."""

    summary = "HF Trainer dict logs on rank 0 only (mean loss over ranks, logging_steps=2, NaN filter on)"

    rank_zero_only = True
    nan_filter: ClassVar[bool] = True
    logging_steps: ClassVar[int] = 2
    steps_per_epoch: ClassVar[int] = 10

    def __init__(self, rank: int, world: int) -> None:
        super().__init__(rank, world)
        self.tr_loss = 0.0  # this rank's window sum (HF keeps it per rank until the gather)
        self.last_logged = 0
        self.total = 0.0

    def contribution(self, rec: StepRecord) -> float | None:
        """Add the step's loss to this rank's window sum as HF does; at a logging step return
        the sum (gathered over ranks, as ``_nested_gather`` does)."""
        global_step = rec.step - 1  # not yet incremented while the step's loss is added
        if self.nan_filter and not math.isfinite(rec.loss):
            self.tr_loss += self.tr_loss / (1 + global_step - self.last_logged)
        else:
            self.tr_loss += rec.loss
        return None if rec.step % self.logging_steps else self.tr_loss

    def step(self, rec: StepRecord, mean_loss: float | None) -> None:
        if self.rank == 0:
            bar = progress_bar(rec.step, rec.max_steps, time.monotonic() - self.started)
            sys.stderr.write("\r" + bar)
            sys.stderr.flush()
        if rec.step % self.logging_steps:
            return
        window = rec.step - self.last_logged
        self.last_logged = rec.step
        self.tr_loss = 0.0
        if self.rank != 0 or mean_loss is None:
            return
        loss = round(mean_loss / window, 4)
        self.total += mean_loss
        logs = {"loss": loss, "grad_norm": rec.grad_norm, "learning_rate": rec.lr,
                "epoch": round(rec.step / self.steps_per_epoch, 2)}
        print(str(logs), flush=True)

    def end(self) -> None:
        if self.rank != 0:
            return
        runtime = time.monotonic() - self.started
        steps = self.last_logged or 1
        sys.stderr.write("\n")
        sys.stderr.flush()
        print(str({"train_runtime": round(runtime, 4),
                   "train_samples_per_second": round(steps * 32 * self.world / runtime, 3),
                   "train_steps_per_second": round(steps / runtime, 3),
                   "train_loss": self.total / steps, "epoch": round(steps / self.steps_per_epoch, 2)}),
              flush=True)


class HFTrainerNoFilter(HFTrainerLike):
    """The same with ``logging_nan_inf_filter=False``: a NaN step loss makes the logged loss nan."""

    summary = "HF Trainer dict logs on rank 0 only, logging_nan_inf_filter=False"

    nan_filter = False


class LightningLike(Reporter):
    """Lightning 2.x: every rank logs ``Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/4``
    (lightning.fabric.utilities.distributed), rank 0 alone the banner and the TQDMProgressBar
    (stdout, ``\\r``) whose postfix holds ``self.log("train_loss", loss, prog_bar=True,
    sync_dist=True)``: the loss averaged over ranks, so no rank can be told from it."""

    summary = "Lightning progress bar on rank 0 only, train_loss averaged over ranks (sync_dist)"

    rank_zero_only = True
    last_step = 0

    def config(self, text: str) -> None:
        print(text, flush=True)
        print(f"Initializing distributed: GLOBAL_RANK: {self.rank}, MEMBER: {self.rank + 1}/{self.world}",
              file=sys.stderr, flush=True)
        if self.rank == 0:
            rule = "-" * 100
            print(f"{rule}\ndistributed_backend=gloo\nAll distributed processes registered. "
                  f"Starting with {self.world} processes\n{rule}\n", file=sys.stderr, flush=True)

    def contribution(self, rec: StepRecord) -> float | None:
        return rec.loss

    def step(self, rec: StepRecord, mean_loss: float | None) -> None:
        self.last_step = rec.step
        if self.rank != 0 or mean_loss is None:
            return
        postfix = f"v_num=0, train_loss={_short(mean_loss)}"
        bar = progress_bar(rec.step, rec.max_steps, time.monotonic() - self.started, "Epoch 0", postfix)
        sys.stdout.write("\r" + bar)
        sys.stdout.flush()

    def end(self) -> None:
        if self.rank == 0:
            sys.stdout.write("\n")
            print(f"`Trainer.fit` stopped: `max_steps={self.last_step}` reached.", file=sys.stderr, flush=True)


STYLES: dict[str, type[Reporter]] = {
    "plain": Plain,
    "logging": PyLogging,
    "logging_dash": DashLogging,
    "kv": KeyValue,
    "loguru": LoguruLike,
    "rich": RichLike,
    "json": JsonLines,
    "tqdm": TqdmInterleaved,
    "hf": HFTrainerLike,
    "hf_nofilter": HFTrainerNoFilter,
    "lightning": LightningLike,
}
