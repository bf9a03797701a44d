"""Read the step metrics back out of a recorded job, whatever its logging style.

The generator's checks use this to prove the injected fault shows in the logs the way
the scenario says. It knows the exact format each style in ``scenarios/styles.py`` prints
(one pattern per style); it is the test's reader, not the engine's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator

from .scenarios.styles import STYLES, HFTrainerLike

RankSteps = dict[int, dict[int, dict[str, float]]]  # rank -> step -> {"loss": .., "grad_norm": ..}
Record = tuple[int, dict[str, float]]  # (step, metrics)

RANK_ZERO_STYLES = frozenset(name for name, cls in STYLES.items() if cls.rank_zero_only)

_PIPE = re.compile(r"step (\d+) \| loss (\S+) \| grad_norm (\S+)(?: \| loss_scale (\S+))?")
_DASH = re.compile(r"step=(\d+), loss=([^,\s]+), grad_norm=([^,\s]+)(?:, loss_scale=([^,\s]+))?, lr=")
_KV = re.compile(r"step (\d+) loss (\S+) grad_norm (\S+)(?: loss_scale (\S+))? lr ")
_EQ = re.compile(r"step[= ](\d+):? loss=(\S+) grad_norm=(\S+)(?: loss_scale=(\S+))?")
_HF = re.compile(r"\{'loss': ([^,]+), 'grad_norm': ([^,]+), 'learning_rate'")
_LIGHTNING = re.compile(r"\| (\d+)/\d+ \[[^\]]*train_loss=([^,\]]+)\]")


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
}
assert set(PARSERS) == set(STYLES), "every style needs a reader"


def rank_steps(texts: dict[int, str], style: str) -> RankSteps:
    """rank -> step -> metrics, from each rank's text (rank-zero-only styles: rank 0 only)."""
    out: RankSteps = {}
    for rank, text in texts.items():
        for step, rec in PARSERS[style](text):
            out.setdefault(rank, {})[step] = rec
    return out
