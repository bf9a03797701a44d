"""How the scenario job prints: one reporter per logging style real training jobs use.

``train.py --style NAME`` picks one. Every reporter prints the start-up ``config: ...``
line on every rank (the job's own print, before any trainer exists) and then one metric
record per step in its style. Rank-zero-only styles (HF Trainer, Lightning) print metrics
on rank 0 only (Megatron-LM: on the last rank only), and what they print is reduced over
ranks, as those frameworks do; torchtitan prints the loss averaged over ranks on every rank.
The formats are written here, without the frameworks; each class names its model.
"""

from __future__ import annotations

import json
import logging
import math
import sys
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
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

    rank_zero_only: ClassVar[bool] = False  # metrics printed by one rank only, reduced over ranks
    prints_on_last_rank: ClassVar[bool] = False  # with rank_zero_only: that rank is the last, not 0
    loss_reduced: ClassVar[bool] = False  # every rank prints the loss averaged over ranks
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


# ---- styles added for issue #12 (recorded by fresh jobs; see tests/e2e/README.md) ----

def _num(x: float) -> str:
    return repr(float(x))


class AbslClu(Reporter):
    """absl/glog prefix (``'%c%02d%02d %02d:%02d:%02d.%06d %5d %s:%d] '``, absl/logging/__init__.py)
    with CLU's LoggingWriter message (``"[%d] %s"``, sorted ``key=value`` joined by ", "), on every
    rank, as JAX/Flax jobs log on every host:
    ``I1203 14:30:01.123456  4242 logging_writer.py:48] [6] grad_norm=nan, learning_rate=0.05, loss=nan``."""

    summary = "absl/glog 'I1203 HH:MM:SS.micro TID file.py:LINE] [STEP] k=v, k=v' (CLU LoggingWriter), every rank"

    def _emit(self, sev: str, where: str, msg: str) -> None:
        now = datetime.now()
        tid = threading.get_native_id()
        print(f"{sev}{now.month:02d}{now.day:02d} {now.hour:02d}:{now.minute:02d}:{now.second:02d}."
              f"{now.microsecond:06d} {tid:5d} {where}] {msg}", file=sys.stderr, flush=True)

    def config(self, text: str) -> None:
        self._emit("I", "train.py:61", text)

    def step(self, rec: StepRecord, mean_loss: float | None) -> None:
        scalars = {"loss": rec.loss, "grad_norm": rec.grad_norm, "learning_rate": rec.lr}
        if rec.loss_scale is not None:
            scalars["loss_scale"] = rec.loss_scale
        body = ", ".join(f"{k}={_num(v)}" for k, v in sorted(scalars.items()))
        self._emit("I", "logging_writer.py:48", f"[{rec.step}] {body}")


class TitanLike(Reporter):
    """torchtitan: ``[titan] %(asctime)s - %(name)s - %(levelname)s - %(message)s`` with the
    coloured metrics line of torchtitan/components/metrics.py (ANSI colours on by default):
    ``step:  6  loss:  1.0800  grad_norm:     nan  memory:  0.01GiB(0.00%)  tps: 1,234 ...``.
    ``loss`` is the global average over data-parallel ranks (dist_mean), so every rank prints the
    same numbers and no rank can be told from a NaN."""

    summary = "torchtitan '[titan] TIME - root - INFO - step:  S  loss: X  grad_norm: Y ...' ANSI colours, loss averaged over ranks, every rank"
    loss_reduced = True

    def __init__(self, rank: int, world: int) -> None:
        super().__init__(rank, world)
        handler = logging.StreamHandler(sys.stdout)
        handler.setFormatter(logging.Formatter("[titan] %(asctime)s - %(name)s - %(levelname)s - %(message)s"))
        self.log = logging.getLogger()
        self.log.handlers[:] = [handler]
        self.log.setLevel(logging.INFO)
        self.last = time.monotonic()

    def config(self, text: str) -> None:
        print(text, flush=True)
        self.log.info("Building llama3 debugmodel with {'dim': 16, 'n_layers': 2}")
        self.log.info("Training starts at step 1")

    def contribution(self, rec: StepRecord) -> float | None:
        return rec.loss

    def step(self, rec: StepRecord, mean_loss: float | None) -> None:
        red, green, orange, yellow, blue, cyan, magenta, reset = (
            "\033[31m", "\033[32m", "\033[33m", "\033[33m", "\033[34m", "\033[36m", "\033[35m", "\033[39m")
        now = time.monotonic()
        tps = round(32 * 16 / max(now - self.last, 1e-6))
        self.last = now
        loss = mean_loss if mean_loss is not None else rec.loss
        self.log.info(
            f"{red}step: {rec.step:2}  "
            f"{green}loss: {loss:7.4f}  "
            f"{orange}grad_norm: {rec.grad_norm:7.4f}  "
            f"{yellow}memory:  0.01GiB(0.00%)  "
            f"{blue}tps: {tps:,}  "
            f"{cyan}tflops: 0.00  "
            f"{magenta}mfu: 0.00%{reset}")


class StructlogConsole(Reporter):
    """structlog's ConsoleRenderer without colours, TimeStamper(fmt='iso', utc=True):
    ``2026-12-03T14:30:01.123456Z [info     ] train_step                     grad_norm=nan loss=nan rank=1 step=6``
    (event padded to 30, keys sorted), every rank."""

    summary = "structlog ConsoleRenderer 'ISO-Z [info     ] event   k=v k=v' (sorted keys), every rank"

    def _emit(self, event: str, **kw: object) -> None:
        ts = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        kv = " ".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}" for k, v in sorted(kw.items()))
        print(f"{ts} [info     ] {event:<30} {kv}".rstrip(), flush=True)

    def step(self, rec: StepRecord, mean_loss: float | None) -> None:
        kw: dict[str, object] = {"step": rec.step, "loss": rec.loss, "grad_norm": rec.grad_norm,
                                 "lr": rec.lr, "rank": self.rank}
        if rec.loss_scale is not None:
            kw["loss_scale"] = rec.loss_scale
        self._emit("train_step", **kw)


class MegatronLike(Reporter):
    """Megatron-LM training_log(), printed by the LAST rank only (print_rank_last), losses
    averaged over data-parallel ranks; fp16 skipped iterations drop the grad norm and the loss:
    `` [2026-12-03 14:30:01] iteration        6/      20 | consumed samples:          768 | ...
    | lm loss: 1.080000E+00 | loss scale: 65536.0 | grad norm: 0.231 | number of skipped iterations:   0 |
    number of nan iterations:   0 |``."""

    summary = "Megatron-LM 'iteration   S/  N | consumed samples: .. | lm loss: X.XE+00 | loss scale: .. | grad norm: ..' on the last rank only, loss averaged"
    rank_zero_only = True
    prints_on_last_rank = True

    def config(self, text: str) -> None:
        print(text, flush=True)
        if self.rank == 0:
            print("> initializing torch distributed ...", flush=True)
            print(f"> initialized tensor model parallel with size 1\n> initialized data parallel with size {self.world}", flush=True)
        self.last = time.monotonic()

    def contribution(self, rec: StepRecord) -> float | None:
        return rec.loss

    def step(self, rec: StepRecord, mean_loss: float | None) -> None:
        now = time.monotonic()
        ms = (now - self.last) * 1000
        self.last = now
        if self.rank != self.world - 1:
            return
        skipped = rec.loss_scale is not None and not math.isfinite(rec.grad_norm)
        stamp = datetime.now().strftime("%Y-%m-%d %H:%M:%S")
        s = (f" [{stamp}] iteration {rec.step:8d}/{rec.max_steps:8d} |"
             f" consumed samples: {rec.step * 32 * self.world:12d} |"
             f" elapsed time per iteration (ms): {ms:.1f} |"
             f" learning rate: {rec.lr:.6E} |"
             f" global batch size: {32 * self.world:5d} |")
        if not skipped and mean_loss is not None:
            s += f" lm loss: {mean_loss:.6E} |"
        s += f" loss scale: {rec.loss_scale if rec.loss_scale is not None else 1.0:.1f} |"
        if not skipped:
            s += f" grad norm: {rec.grad_norm:.3f} |"
        s += f" number of skipped iterations: {int(skipped):3d} | number of nan iterations: {0:3d} |"
        print(s, flush=True)


def _ds_num(x: float) -> str:
    """DeepSpeed prints the scale as the Python number it holds (``65536``, ``0.5``), never in %g."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


class DeepSpeedLike(Reporter):
    """DeepSpeed: rank 0 logs through ``log_dist`` (``[%(asctime)s] [%(levelname)s]
    [%(filename)s:%(lineno)d:%(funcName)s] [Rank 0] step=6, skipped=0, lr=[0.05], mom=[0.0]``) and
    the fp16 loss scaler's ``[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536,
    reducing to 32768``; the user's own print on every rank: ``Epoch: 0, Step: 6, Rank: 1, loss = nan``."""

    summary = "DeepSpeed log_dist '[TIME] [INFO] [logging.py:128:log_dist] [Rank 0] step=S, skipped=K, lr=[..]' + OVERFLOW lines on rank 0; per-rank user print 'Epoch: 0, Step: S, Rank: R, loss = X'"

    def __init__(self, rank: int, world: int) -> None:
        super().__init__(rank, world)
        self.skipped = 0
        self.prev_scale: float | None = None

    def _ds(self, where: str, msg: str) -> None:
        now = datetime.now()
        stamp = now.strftime("%Y-%m-%d %H:%M:%S,") + f"{now.microsecond // 1000:03d}"
        print(f"[{stamp}] [INFO] [{where}] {msg}", flush=True)

    def config(self, text: str) -> None:
        print(text, flush=True)
        self._ds("comm.py:652:init_distributed", "cdb=None")
        if self.rank == 0:
            self._ds("logging.py:128:log_dist", "[Rank 0] DeepSpeed info: version=0.16.4, git-hash=unknown, git-branch=unknown")

    def step(self, rec: StepRecord, mean_loss: float | None) -> None:
        if rec.loss_scale is not None:
            attempted = self.prev_scale if self.prev_scale is not None else rec.loss_scale * (2 if not math.isfinite(rec.grad_norm) else 1)
            if not math.isfinite(rec.grad_norm):
                self.skipped += 1
                if self.rank == 0:
                    self._ds("loss_scaler.py:183:update_scale",
                             f"[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: {_ds_num(attempted)}, "
                             f"reducing to {_ds_num(rec.loss_scale)}")
            self.prev_scale = rec.loss_scale
        if self.rank == 0:
            self._ds("logging.py:128:log_dist",
                     f"[Rank 0] step={rec.step}, skipped={self.skipped}, lr=[{rec.lr}], mom=[0.0]")
        extra = f", loss_scale = {rec.loss_scale}" if rec.loss_scale is not None else ""
        print(f"Epoch: 0, Step: {rec.step}, Rank: {self.rank}, loss = {rec.loss}, grad_norm = {rec.grad_norm}{extra}",
              flush=True)


class KerasProgbar(Reporter):
    """Keras' interactive Progbar (keras/utils/generic_utils.py), redrawn with backspaces and ``\\r``
    on every rank (multi-worker): ``6/20 [========>.....................] - ETA: 1s - loss: nan -
    grad_norm: nan``; ``loss`` is the running mean over the epoch's batches, as Keras shows it; the
    other values are stateful (last value). Values print as ``%.4f`` (``%.4e`` below 1e-3)."""

    summary = "Keras Progbar redrawn with \\b/\\r on every rank: 'S/N [===>....] - ETA: 1s - loss: X - grad_norm: Y' (loss = epoch running mean)"

    def __init__(self, rank: int, world: int) -> None:
        super().__init__(rank, world)
        self.total = 0.0
        self.n = 0
        self.prev_width = 0

    def config(self, text: str) -> None:
        print(text, flush=True)
        print("Epoch 1/1", flush=True)

    @staticmethod
    def _v(x: float) -> str:
        return f" {x:.4f}" if abs(x) > 1e-3 else f" {x:.4e}"

    def step(self, rec: StepRecord, mean_loss: float | None) -> None:
        self.total += rec.loss
        self.n += 1
        target, width = rec.max_steps, 30
        numdigits = int(math.log10(target)) + 1
        bar = ("%" + str(numdigits) + "d/%d [") % (rec.step, target)
        prog_width = int(width * rec.step / target)
        if prog_width > 0:
            bar += "=" * (prog_width - 1)
            bar += ">" if rec.step < target else "="
        bar += "." * (width - prog_width) + "]"
        elapsed = time.monotonic() - self.started
        if rec.step < target:
            info = f" - ETA: {int(elapsed / rec.step * (target - rec.step))}s"
        else:
            info = f" {int(elapsed)}s {int(elapsed / rec.step * 1000)}ms/step"
        info += " - loss:" + self._v(self.total / self.n)
        info += " - grad_norm:" + self._v(rec.grad_norm)
        if rec.loss_scale is not None:
            info += " - loss_scale:" + self._v(rec.loss_scale)
        line = bar + info
        pad = max(0, self.prev_width - len(line))
        sys.stdout.write("\b" * self.prev_width + "\r" + line + " " * pad)
        if rec.step == target:
            sys.stdout.write("\n")
        sys.stdout.flush()
        self.prev_width = len(line) + pad


class MetricsTable(Reporter):
    """A streamed rich-style metrics table on every rank: a box-drawn header, then one row per step
    ``│    6 │ 1.080000 │      nan │      65536 │ 0.05 │``; the columns are named only in the header."""

    summary = "box-drawn metrics table, header once then rows '│ S │ X │ Y │ Z │ lr │', every rank"

    cols: ClassVar[tuple[tuple[str, int], ...]] = (("step", 6), ("loss", 10), ("grad_norm", 11), ("lr", 6))

    def _cols(self, scaled: bool) -> list[tuple[str, int]]:
        c = list(self.cols)
        if scaled:
            c.insert(3, ("loss_scale", 12))
        return c

    def step(self, rec: StepRecord, mean_loss: float | None) -> None:
        cols = self._cols(rec.loss_scale is not None)
        if rec.step == 1:
            print("┏" + "┳".join("━" * w for _, w in cols) + "┓", flush=True)
            print("┃" + "┃".join(f" {n:<{w - 2}} " for n, w in cols) + "┃", flush=True)
            print("┡" + "╇".join("━" * w for _, w in cols) + "┩", flush=True)
        vals = {"step": f"{rec.step}", "loss": f"{rec.loss:.6f}", "grad_norm": f"{rec.grad_norm:.6f}",
                "loss_scale": f"{rec.loss_scale:g}" if rec.loss_scale is not None else "", "lr": f"{rec.lr:g}"}
        print("│" + "│".join(f" {vals[n]:>{w - 2}} " for n, w in cols) + "│", flush=True)


class BracketFormatter(_StdLogging):
    """python logging with a custom bracketed formatter, short keys (``it``, ``gnorm``, ``scale``):
    ``[R1][2026-12-03 14:30:01][train][INFO] it 6 loss nan gnorm nan scale 65536.0``."""

    summary = "python logging '[R1][YYYY-MM-DD HH:MM:SS][train][INFO] it S loss X gnorm Y scale Z'"

    fmt = "[R{rank}][%(asctime)s][%(name)s][%(levelname)s] %(message)s"
    logger_name = "train"

    def __init__(self, rank: int, world: int) -> None:
        super().__init__(rank, world)
        for h in self.log.handlers:
            h.setFormatter(logging.Formatter(self.fmt.replace("{rank}", str(rank)), datefmt="%Y-%m-%d %H:%M:%S"))

    def step(self, rec: StepRecord, mean_loss: float | None) -> None:
        msg = f"it {rec.step} loss {rec.loss:.4f} gnorm {rec.grad_norm:.4f}"
        if rec.loss_scale is not None:
            msg += f" scale {rec.loss_scale}"
        self.log.info(msg)


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
    "absl": AbslClu,
    "titan": TitanLike,
    "structlog": StructlogConsole,
    "megatron": MegatronLike,
    "deepspeed": DeepSpeedLike,
    "keras": KerasProgbar,
    "table": MetricsTable,
    "bracket": BracketFormatter,
}
