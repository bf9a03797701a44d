"""Training-step metric lines → SAMPLE events.

Formats (log-formats.md §2.2, §3.1, §4.1): HF Trainer dicts (``{'loss': 2.1, 'grad_norm':
nan, ...}``, 5.x quotes the numbers), Megatron ``iteration N/ M | lm loss: ... | loss
scale: ... | grad norm: ... | number of skipped iterations: ... | number of nan
iterations: ... |`` (``lm loss`` silently missing when the average is NaN), DeepSpeed
``step=N, skipped=M, lr=[...]`` and pipeline ``steps: N loss: X``, fairseq ``| epoch 027 |
loss 6.343 | ... | num_updates 10198 | loss_scale 0.500 |`` and generic ``step N | loss X |
grad_norm Y | loss_scale Z`` / ``step=N loss=X`` lines.

A SAMPLE's data holds only the keys the line had: ``loss``, ``grad_norm``,
``loss_scale``, ``lr``, ``epoch``, ``skipped`` (cumulative), ``nan_iters``
(cumulative), ``loss_missing`` (Megatron line without its loss field).
"""

from __future__ import annotations

import math
import re

from detectors.events import EventKind
from detectors.parsers.base import Rule, Segment

__all__ = ["RULES", "parse_number"]

_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|NaN|NAN|inf|Inf|INF|infinity|Infinity)"
_NUM_RE = re.compile(rf"(?:{_NUM})")

_KEYS: dict[str, str] = {
    "loss": "loss",
    "lm loss": "loss",
    "lm_loss": "loss",
    "train_loss": "loss",
    "train/loss": "loss",
    "total_loss": "loss",
    "losses/total_loss": "loss",
    "grad_norm": "grad_norm",
    "grad norm": "grad_norm",
    "gnorm": "grad_norm",
    "grad-norm": "grad_norm",
    "train/grad_norm": "grad_norm",
    "total_norm": "grad_norm",
    "loss_scale": "loss_scale",
    "loss scale": "loss_scale",
    "loss-scale": "loss_scale",
    "scale": "loss_scale",
    "step": "step",
    "steps": "step",
    "global_step": "step",
    "iter": "step",
    "iteration": "step",
    "num_updates": "step",
    "skipped": "skipped",
    "number of skipped iterations": "skipped",
    "number of nan iterations": "nan_iters",
    "lr": "lr",
    "learning_rate": "lr",
    "learning rate": "lr",
    "epoch": "epoch",
}


def parse_number(text: str) -> float | None:
    t = text.strip().strip("'\"").lower()
    if t in ("nan", "+nan", "-nan"):
        return math.nan
    if t in ("inf", "+inf", "infinity", "+infinity"):
        return math.inf
    if t in ("-inf", "-infinity"):
        return -math.inf
    try:
        return float(t)
    except ValueError:
        return None


def _emit(seg: Segment, values: dict[str, float], scope: str, loss_missing: bool = False) -> bool:
    """``scope``: "local" when the loss is this rank's own, "global" when the framework
    logs a value reduced over ranks (HF Trainer, Megatron, DeepSpeed: one logging rank)."""
    if seg.sampled:
        return False
    step_f = values.pop("step", None)
    step = int(step_f) if step_f is not None and math.isfinite(step_f) else None
    if not values and not loss_missing:
        return False
    data: dict[str, object] = dict(values)
    data["scope"] = scope
    if loss_missing:
        data["loss_missing"] = True
    seg.emit(EventKind.SAMPLE, step=step, data=data)
    seg.sampled = True
    return True


# --- HF Trainer dict -------------------------------------------------------------------
_HF_PAIR = re.compile(rf"'(?P<k>[\w/]+)': '?(?P<v>{_NUM})'?")


def _hf(m: re.Match[str], seg: Segment) -> bool:
    body = seg.body.strip()
    if not body.startswith("{"):
        return False
    values: dict[str, float] = {}
    for pm in _HF_PAIR.finditer(body):
        key = _KEYS.get(pm.group("k"))
        if pm.group("k") == "eval_loss":
            key = "eval_loss"
        if key and key not in values:
            v = parse_number(pm.group("v"))
            if v is not None:
                values[key] = v
    if not ({"loss", "grad_norm", "eval_loss"} & values.keys()):
        return False
    return _emit(seg, values, "global")


# --- Megatron ---------------------------------------------------------------------------
_MEG_ITER = re.compile(r"iteration\s+(?P<it>\d+)/\s*\d+ \|")
_MEG_FIELD = re.compile(rf"\| ?(?P<k>[a-zA-Z][\w /()-]*?): +(?P<v>{_NUM})")


def _megatron(m: re.Match[str], seg: Segment) -> bool:
    it = _MEG_ITER.search(seg.body)
    if not it:
        return False
    values: dict[str, float] = {"step": float(it.group("it"))}
    has_loss = False
    for fm in _MEG_FIELD.finditer(seg.body, it.end() - 1):
        k = fm.group("k").strip()
        if k.endswith("loss"):
            has_loss = True
        key = _KEYS.get(k)
        v = parse_number(fm.group("v"))
        if key and v is not None and key not in values:
            values[key] = v
    # Megatron drops a loss field whose running average is NaN (training_log: avg >= 0).
    # A line whose iterations were all skipped (fp16 overflow) has no loss key at all
    # yet, which is not a NaN.
    skipped_only = values.get("skipped", 0) > 0
    return _emit(seg, values, "global", loss_missing=not has_loss and not skipped_only)


# --- DeepSpeed --------------------------------------------------------------------------
_DS_STEP = re.compile(r"step=(?P<step>\d+), skipped=(?P<skipped>\d+)")
_DS_PIPE = re.compile(rf"steps: (?P<step>\d+) loss: (?P<loss>{_NUM})")


def _deepspeed(m: re.Match[str], seg: Segment) -> bool:
    sm = _DS_STEP.search(seg.body)
    if sm:
        return _emit(seg, {"step": float(sm.group("step")), "skipped": float(sm.group("skipped"))}, "global")
    pm = _DS_PIPE.search(seg.body)
    if pm:
        v = parse_number(pm.group("loss"))
        return v is not None and _emit(seg, {"step": float(pm.group("step")), "loss": v}, "global")
    return False


# --- generic / fairseq: "k v | k v" or "k=v, k=v" ---------------------------------------
# Both are linear-time on any input (tests/reliability/test_fuzz.py times hostile lines).
# A pipe field is "key sep value": the value is the last token, the key what precedes the
# separator (``\s*[=:]\s*`` or ``\s+``) — read from the end in one pass, where a regex with
# a lazy key and two whitespace runs took cubic time on a field padded with spaces.
_KEY = re.compile(r"[A-Za-z][\w/ .-]*")
_NUM_FULL = re.compile(rf"(?:{_NUM})")


def _pipe_field(part: str) -> tuple[str, str] | None:
    s = part.strip()
    i = len(s) - 1
    while i >= 0 and s[i] not in "=:" and not s[i].isspace():
        i -= 1
    if i < 0 or not _NUM_FULL.fullmatch(s, i + 1):
        return None
    k = s[: i + 1].rstrip()
    if k.endswith(("=", ":")):
        k = k[:-1].rstrip()
    return (k, s[i + 1 :]) if _KEY.fullmatch(k) else None


# "k=v": a key starts at a letter not preceded by [\w/]; the regex takes the whole run of
# key characters (one attempt per run, not per dot: ".a.a.a" was quadratic) and
# ``_KEY_START`` finds where the key begins inside it.
_KV = re.compile(rf"(?<![\w/.-])(?P<run>[\w/.-]+)\s*[=:]\s*'?(?P<v>{_NUM})'?(?![\w.])")
_KEY_START = re.compile(r"(?<![\w/])[A-Za-z]")


def _generic(m: re.Match[str], seg: Segment) -> bool:
    body = seg.body
    values: dict[str, float] = {}
    if "|" in body:
        for part in body.split("|"):
            kv = _pipe_field(part)
            if kv:
                key = _KEYS.get(kv[0].strip().lower())
                v = parse_number(kv[1])
                if key and v is not None and key not in values:
                    values[key] = v
    if len(values) < 2:
        for fm in _KV.finditer(body):
            ks = _KEY_START.search(fm.group("run"))
            if ks is None:
                continue
            key = _KEYS.get(fm.group("run")[ks.start() :].lower())
            v = parse_number(fm.group("v"))
            if key and v is not None and key not in values:
                values[key] = v
    if not ({"loss", "grad_norm", "loss_scale"} & values.keys()):
        return False
    if "step" not in values and len(values) < 2:
        return False
    # fairseq's pipe summaries are the logging rank's aggregated view
    return _emit(seg, values, "global" if "|" in body and body.lstrip().startswith("|") else "local")


RULES = [
    Rule("metrics.hf", r"\{'(?:loss|grad_norm|eval_loss|train_loss)'", _hf),
    Rule("metrics.megatron", r"iteration\s+\d+/\s*\d+ \|", _megatron),
    Rule("metrics.deepspeed", r"step=\d+, skipped=\d+|steps: \d+ loss: ", _deepspeed),
    Rule(
        "metrics.generic",
        r"(?:\b(?:step|global_step|iter|num_updates)\b[=: ]+\d+|\bloss\b ?[=:|]? ?[-+]?(?:\d|nan|inf)).*(?:loss|grad_norm|gnorm|loss_scale)",
        _generic,
    ),
]
