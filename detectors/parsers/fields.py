"""General field extraction: a metric line of any shape → canonical key/value pairs.

Training loops print their metrics in many shapes: ``step 6 | loss 1.08 | grad_norm nan``,
``rank 1 step 13 loss nan``, ``step=4, loss=nan``, ``{'loss': 2.1, 'grad_norm': nan}``,
``{"loss": NaN, "global_step/max_steps": "8280/11043"}``, ``iter 4 step 1: loss 9.1,
iter time: 812ms``, ``| epoch 027 | loss 6.343 | loss_scale 0.000 |``,
``loss: tensor(nan, device='cuda:0')``, ``loss is nan, skipping batch``. Rather than one
rule per shape, ``extract`` finds every *known key* (one synonym table, any case, an
optional namespace such as ``train/`` or ``eval/``), then a separator (``:`` ``=`` ``|``,
spaces, ``is``, quotes) and a value (a number, ``nan``/``inf`` in any spelling, a
``tensor(...)`` repr, or an ``a/b`` counter). Unknown keys are ignored, so the same code
reads any separator, dicts, JSON and Python reprs.

Linear time on any input: one left-to-right ``finditer`` whose key alternatives are
literals, followed by bounded separator and value patterns.
"""

from __future__ import annotations

import math
import re

__all__ = ["CANONICAL", "METRIC_KEYS", "SYNONYMS", "extract", "parse_number"]

# canonical key → the spellings that mean it (matched case-insensitively, whole words)
SYNONYMS: dict[str, tuple[str, ...]] = {
    "step": ("global_step", "global step", "globalstep", "step", "steps", "num_updates",
             "iteration", "iterations", "iter", "iters"),
    "loss": ("lm loss", "lm_loss", "lm-loss", "train_loss_step", "train_loss", "train loss", "training loss",
             "training_loss", "total_loss", "total loss", "loss_step", "reduced_train_loss", "avg_loss",
             "avg loss", "mean_loss", "loss_value", "all_loss", "loss_total", "overall_loss", "loss"),
    "grad_norm": ("grad_norm", "grad norm", "grad-norm", "gradnorm", "gnorm", "total_norm", "gradient_norm",
                  "gradient norm", "grad_norm_total"),
    "loss_scale": ("loss_scale", "loss scale", "loss-scale", "lossscale", "grad_scale", "grad scale",
                   "grad_scaler_scale", "cur_scale", "scaler_scale", "amp_scale"),
    "lr": ("learning_rate", "learning rate", "lr"),
    "epoch": ("epoch",),
    "eval_loss": ("eval_loss", "val_loss", "valid_loss", "validation_loss", "validation loss", "test_loss"),
}
CANONICAL: dict[str, str] = {s: k for k, spellings in SYNONYMS.items() for s in spellings}
METRIC_KEYS = frozenset({"loss", "grad_norm", "loss_scale", "eval_loss"})

_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf(?:inity)?)(?![a-z])"
# the key alternatives: longest first so "loss scale" wins over "loss"; a namespace such as
# "train/", "trainer.", "losses/" (ignored) or "eval/", "val_" (→ eval) may precede the key
_SEP = re.compile(r"[ _-]")
_LOOKUP: dict[str, str] = {_SEP.sub(" ", s): k for s, k in CANONICAL.items()}
_ALTS = "|".join("[ _-]".join(map(re.escape, s.split(" "))) for s in sorted(_LOOKUP, key=len, reverse=True))
_EVAL_NS = r"(?P<evns>eval|val|valid|validation|test)[/._]"
_NS = r"(?:(?:train|training|trainer|losses?|metrics?|optim|optimizer)[/._])"
_FIELD = re.compile(
    rf"(?<![\w/.-])(?:{_EVAL_NS}|{_NS})?(?P<key>{_ALTS})(?P<den>/(?:max_steps|total|max_iters?|num_steps))?"
    r"(?![\w-])['\"]?"  # the key ends at a word boundary (loss_scale is not loss)
    r"(?:\s{0,16}(?:[:=|]|\bis\b)\s{0,16}|\s{1,12})"  # separator: ":" "=" "|" "is" or spaces
    rf"['\"]?(?:tensor\(\[?)?(?P<v>{_NUM})(?:\s{{0,2}}/\s{{0,2}}(?P<tot>\d+))?",
    re.IGNORECASE,
)


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


def extract(text: str) -> dict[str, float]:
    """Every known metric in ``text``, first occurrence of each canonical key wins."""
    out: dict[str, float] = {}
    for m in _FIELD.finditer(text):
        # casefold: a case-insensitive match may hold non-ASCII letters that fold to ASCII (the long s)
        key = _LOOKUP.get(_SEP.sub(" ", m.group("key").casefold()))
        if key is None:
            continue
        if m.group("evns") and key == "loss":
            key = "eval_loss"
        elif m.group("evns"):
            continue  # eval/grad_norm and the like are not training signals
        if key in out:
            continue
        v = parse_number(m.group("v"))
        if v is None:
            continue
        if key == "step" and (not math.isfinite(v) or v < 0 or v != int(v)):
            continue  # "iter time: 0.81" is not a step counter
        out[key] = v
    return out
