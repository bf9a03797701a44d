"""Read the step metrics back out of a recorded job, whatever its logging style.

The generator's checks use this to prove the injected fault shows in the logs the way
the scenario says. It knows the exact format each style in ``scenarios/styles.py`` prints
(one pattern per style); it is the test's reader, not the engine's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator

from .scenarios.styles import STYLES, HFTrainerLike

RankSteps = dict[int, dict[int, dict[str, float]]]  # rank -> step -> {"loss": .., "grad_norm": ..}
Record = tuple[int, dict[str, float]]  # (step, metrics)

RANK_ZERO_STYLES = frozenset(name for name, cls in STYLES.items() if cls.rank_zero_only)
# the one rank that prints metrics is the last (Megatron-LM's print_rank_last), not rank 0
LAST_RANK_STYLES = frozenset(name for name, cls in STYLES.items() if cls.prints_on_last_rank)
# the printed loss is averaged over ranks, so a NaN's rank cannot be read from the logs
REDUCED_STYLES = RANK_ZERO_STYLES | {name for name, cls in STYLES.items() if cls.loss_reduced}

_PIPE = re.compile(r"step (\d+) \| loss (\S+) \| grad_norm (\S+)(?: \| loss_scale (\S+))?")
_DASH = re.compile(r"step=(\d+), loss=([^,\s]+), grad_norm=([^,\s]+)(?:, loss_scale=([^,\s]+))?, lr=")
_KV = re.compile(r"step (\d+) loss (\S+) grad_norm (\S+)(?: loss_scale (\S+))? lr ")
_EQ = re.compile(r"step[= ](\d+):? loss=(\S+) grad_norm=(\S+)(?: loss_scale=(\S+))?")
_HF = re.compile(r"\{'loss': ([^,]+), 'grad_norm': ([^,]+), 'learning_rate'")
_LIGHTNING = re.compile(r"\| (\d+)/\d+ \[[^\]]*train_loss=([^,\]]+)\]")
_N = r"[-+]?(?:nan|inf|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)"  # a number as Python or printf prints it
_ABSL = re.compile(r"logging_writer\.py:\d+\] \[(\d+)\] (.*)$")
_TITAN = re.compile(rf"step:\s*(\d+)\s+loss:\s*({_N})\s+grad_norm:\s*({_N})")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_STRUCTLOG = re.compile(r"\[info\s*\] train_step\s+(.*)$")
_MEGATRON = re.compile(r" iteration\s+(\d+)/\s*\d+ \|(.*)$")
_DEEPSPEED = re.compile(rf"Epoch: \d+, Step: (\d+), Rank: \d+, loss = ({_N}), grad_norm = ({_N})"
                        rf"(?:, loss_scale = ({_N}))?")
_KERAS = re.compile(rf"(\d+)/\d+ \[[=>.]*\].*? - loss: ({_N}) - grad_norm: ({_N})(?: - loss_scale: ({_N}))?")
_BRACKET = re.compile(rf"\]\[INFO\] it (\d+) loss ({_N}) gnorm ({_N})(?: scale ({_N}))?")
_TABLE_HEAD = re.compile(r"^┃(.*)┃$")
_TABLE_ROW = re.compile(r"^│(.*)│$")


def _pieces(text: str) -> Iterator[str]:
    """Lines, also split at carriage returns (progress bars redraw with \\r)."""
    for line in text.splitlines():
        yield from line.split("\r")


def _groups(pattern: re.Pattern[str]) -> Callable[[str], Iterator[Record]]:
    def parse(text: str) -> Iterator[Record]:
        for piece in _pieces(text):
            for m in pattern.finditer(piece):
                rec = {"loss": float(m.group(2)), "grad_norm": float(m.group(3))}
                if m.group(4) is not None:
                    rec["loss_scale"] = float(m.group(4))
                yield int(m.group(1)), rec
    return parse


def _json(text: str) -> Iterator[Record]:
    for piece in _pieces(text):
        if not piece.startswith('{"'):
            continue
        obj = json.loads(piece)
        if "global_step/max_steps" not in obj:
            continue
        rec = {k: float(obj[k]) for k in ("loss", "grad_norm", "loss_scale") if k in obj}
        yield int(obj["global_step/max_steps"].split("/")[0]), rec


def _hf(text: str) -> Iterator[Record]:
    """HF dicts carry no step: the n-th log is at step n x logging_steps."""
    for i, m in enumerate(_HF.finditer(text), start=1):
        yield i * HFTrainerLike.logging_steps, {"loss": float(m.group(1)), "grad_norm": float(m.group(2))}


def _lightning(text: str) -> Iterator[Record]:
    for piece in _pieces(text):
        if m := _LIGHTNING.search(piece):
            yield int(m.group(1)), {"loss": float(m.group(2))}


def _fields(step: str, pairs: Iterable[tuple[str, str]], names: dict[str, str]) -> Record:
    """(step, metrics) from ``(key, value)`` pairs; ``names`` maps a style's keys to ours."""
    return int(step), {names[k]: float(v) for k, v in pairs if k in names}


_OURS = {"loss": "loss", "grad_norm": "grad_norm", "loss_scale": "loss_scale"}


def _absl(text: str) -> Iterator[Record]:
    """CLU's ``[step] k=v, k=v`` after the absl prefix."""
    for piece in _pieces(text):
        if m := _ABSL.search(piece):
            kv = dict(pair.split("=", 1) for pair in m.group(2).split(", "))
            yield _fields(m.group(1), kv.items(), _OURS)


def _titan(text: str) -> Iterator[Record]:
    """torchtitan's coloured line; the loss is the mean over ranks."""
    for piece in _pieces(text):
        if m := _TITAN.search(_ANSI.sub("", piece)):
            yield int(m.group(1)), {"loss": float(m.group(2)), "grad_norm": float(m.group(3))}


def _structlog(text: str) -> Iterator[Record]:
    for piece in _pieces(text):
        if m := _STRUCTLOG.search(piece):
            kv = dict(pair.split("=", 1) for pair in m.group(1).split())
            yield _fields(kv["step"], kv.items(), _OURS)


def _megatron(text: str) -> Iterator[Record]:
    """``| name: value |`` fields; a skipped fp16 iteration has no ``lm loss`` nor ``grad norm``."""
    names = {"lm loss": "loss", "grad norm": "grad_norm", "loss scale": "loss_scale"}
    for piece in _pieces(text):
        if m := _MEGATRON.search(piece):
            fields = (f.strip().split(": ", 1) for f in m.group(2).split("|") if ": " in f)
            yield _fields(m.group(1), ((k, v.strip()) for k, v in fields), names)


def _keras(text: str) -> Iterator[Record]:
    """Progbar segments, redrawn with backspaces and ``\\r``; ``loss`` is the epoch's running mean."""
    return _groups(_KERAS)(text.replace("\b", ""))


def _table(text: str) -> Iterator[Record]:
    """A box-drawn table: the header row names the columns of every row below it."""
    header: list[str] = []
    for piece in _pieces(text):
        if m := _TABLE_HEAD.match(piece.strip()):
            header = [c.strip() for c in m.group(1).split("┃")]
        elif header and (m := _TABLE_ROW.match(piece.strip())):
            row = dict(zip(header, (c.strip() for c in m.group(1).split("│")), strict=True))
            yield _fields(row["step"], ((k, v) for k, v in row.items() if v), _OURS)


PARSERS: dict[str, Callable[[str], Iterator[Record]]] = {
    "plain": _groups(_PIPE),
    "logging": _groups(_PIPE),
    "logging_dash": _groups(_DASH),
    "kv": _groups(_KV),
    "loguru": _groups(_EQ),
    "rich": _groups(_EQ),
    "tqdm": _groups(_EQ),
    "json": _json,
    "hf": _hf,
    "hf_nofilter": _hf,
    "lightning": _lightning,
    "absl": _absl,
    "titan": _titan,
    "structlog": _structlog,
    "megatron": _megatron,
    "deepspeed": _groups(_DEEPSPEED),
    "keras": _keras,
    "table": _table,
    "bracket": _groups(_BRACKET),
}
assert set(PARSERS) == set(STYLES), "every style needs a reader"


def rank_steps(texts: dict[int, str], style: str) -> RankSteps:
    """rank -> step -> metrics, from each rank's text (rank-zero-only styles: one rank only)."""
    out: RankSteps = {}
    for rank, text in texts.items():
        for step, rec in PARSERS[style](text):
            out.setdefault(rank, {})[step] = rec
    return out
