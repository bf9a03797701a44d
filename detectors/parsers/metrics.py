"""Training-step metric lines → SAMPLE events.

Formats (log-formats.md §2.2, §3.1, §4.1): HF Trainer dicts (``{'loss': 2.1, 'grad_norm':
nan, ...}``, 5.x quotes the numbers), Megatron ``iteration N/ M | lm loss: ... | loss
scale: ... | grad norm: ... | number of skipped iterations: ... | number of nan
iterations: ... |`` (``lm loss`` silently missing when the average is NaN), DeepSpeed
``step=N, skipped=M, lr=[...]`` and pipeline ``steps: N loss: X``, fairseq ``| epoch 027 |
loss 6.343 | ... | num_updates 10198 | loss_scale 0.500 |`` and generic ``step N | loss X |
grad_norm Y | loss_scale Z`` / ``step=N loss=X`` lines.

A SAMPLE's data holds only the keys the line had: ``loss``, ``grad_norm``,
``loss_scale``, ``lr``, ``epoch``, ``skipped`` (DeepSpeed's, cumulative), ``skipped_iters``
and ``nan_iters`` (Megatron's, per log interval: training_log resets them at each line),
``loss_missing`` (Megatron line without its loss field).
"""

from __future__ import annotations

import math
import re

from detectors.model import EventKind
from detectors.parsers.base import Rule, Segment
from detectors.parsers.fastfields import extract_records
from detectors.parsers.fields import CANONICAL, METRIC_KEYS, parse_number, sum_of_parts

__all__ = ["FIELDS_RULE", "PROGRESS_ROW_RULE", "RULES", "parse_number"]

FIELDS_RULE = "metrics.fields"
PROGRESS_ROW_RULE = "table.progress_row"

_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|NaN|NAN|inf|Inf|INF|infinity|Infinity)"
# the scan trigger for _fields: a metric key, a separator and something number-like (no
# flags or look-around: it must compile on every scan engine)
_TRIGGER = (
    r"(?:[Ll]oss(?:/[a-z]{1,8}){0,2}|[Ll]oss_(?:step|epoch|total|value|sum)|[Ll]oss [Tt]otal|LOSS|[Gg]rad[ _-]?[Nn]orm|GRAD_NORM|gnorm|total_norm|[Ss]cale"
    # the loss under its own name: a cross-entropy, or its exponential, the perplexity
    r"|[Cc]ross[ _-]?[Ee]ntropy|xent|[Cc]ost|COST|[Pp]pl|PPL|[Pp]erplexity|L1|[Bb]its(?:/| per |_per_)dim|bpd|BPD|[Nn]ll|NLL|[Ll]og[_ -]?[Ll]ikelihood|[Ll]oglik|Obj\(log\[Pzx\]\)|[Ee]lbo|ELBO"
    # (the loss in Chinese, Japanese and Russian scripts' own words: fields.SYNONYMS)
    # (alternations, not classes: the scan engines read bytes, and a class of multi-byte letters is a
    # class of their bytes)
    r"|损失|損失|(?:П|п)отер(?:и|я|ь)|(?:Л|л)осс)"
    # (how the value was averaged: "loss(avg50) 2.2671", fields._field)
    r"(?: ?\((?:avg|mean|ema|ma|smooth|smoothed|running|moving)[a-z_ ]{0,8}[0-9]{0,6}\))?"
    r"(?: ?\((?:pre-?clip(?:ping)?|before clip(?:ping)?|unclipped|raw)\))?"
    # (the counter the value was taken at between the key and its value: "Average loss at step 2000: 4.37")
    r"(?:\s{1,4}(?:at|@)\s{1,4}(?:step|batch|iter|iteration|epoch|update)\s{0,4}\d{1,9})?['\"\]]?\s{0,16}(?:[:=|]|：|is)?\s{0,16}['\"]?"
    r"(?:tensor\(\[?|\[ {0,8})?(?:total\s{0,4}[:=]\s{0,4})?[-+]?(?:\d|\.\d|[Nn]a[Nn]|NAN|[Ii]nf|INF)"
    r"|[Ll]oss_[-+]?\d"
    # a regression model's error measure (the held-out loss on an evaluation line: "val/rmsle nan")
    r"|(?:^|[^A-Za-z])(?:r?msl?e|mae|R?MSL?E|MAE)['\"]?\s{0,16}[:=]?\s{0,16}['\"]?[-+]?(?:\d|\.\d|[Nn]a[Nn]|[Ii]nf)"
    # a loss component named after the loss ("loss_rpn_cls: 156.29", mmdet)
    r"|[Ll]oss_[A-Za-z][A-Za-z0-9_]{0,30}['\"]?\s{0,4}[:=]\s{0,4}['\"]?[-+]?(?:\d|\.\d|[Nn]a[Nn]|[Ii]nf)"
    # ... or CamelCase after it ("LossTrajs: 1.48", a JAX trainer's; KotlinDL's "lossValue: NaN"; "LossScale"
    # is read as the scale)
    r"|[Ll]oss[A-Z][A-Za-z0-9]{0,30}\s{0,4}[:=]\s{0,4}[-+]?(?:\d|\.\d|[Nn]a[Nn]|[Ii]nf)"
)

# a number printed with a fractional part ("{:.4f}"), or a non-finite one: never a bare count
_FRAC = r"[-+]?(?:\d+\.\d+|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|NaN|NAN|inf|Inf|INF)"

# Megatron's iteration line: its own counters beside the shared synonym table
_KEYS: dict[str, str] = {
    **CANONICAL,
    "skipped": "skipped",
    "number of skipped iterations": "skipped_iters",  # Megatron: per log interval (reset at each line)
    "number of nan iterations": "nan_iters",
}


def _emit(seg: Segment, values: dict[str, float], scope: str, loss_missing: bool = False) -> bool:
    """``scope``: "local" when the loss is this rank's own, "global" when the framework
    logs a value reduced over ranks (HF Trainer, Megatron, DeepSpeed: one logging rank)."""
    if seg.sampled:
        return False
    step_f = values.pop("step", None)
    step = int(step_f) if step_f is not None and math.isfinite(step_f) else None
    scale = values.get("loss_scale")
    if scale is not None and scale < 0:
        # a negative scale is a placeholder, not a scale: Megatron-DeepSpeed prints "loss scale: -1.0"
        # on every line when DeepSpeed's own optimizer keeps the scale (and "grad norm: 0.000")
        del values["loss_scale"]
    if not values and not loss_missing:
        return False
    data: dict[str, object] = dict(values)
    data["scope"] = scope
    if loss_missing:
        data["loss_missing"] = True
    seg.emit(EventKind.SAMPLE, step=step, data=data)
    seg.sampled = True
    return True


# --- any shape: known keys with any separator (detectors/parsers/fields.py) -------------
_JSON_RANK = re.compile(r"""['"](?:rank|global_rank|RANK)['"]\s*:\s*\d""")


def _scope(body: str, values: dict[str, float]) -> str:
    """Values a framework reduces over ranks (or logs from one rank) before printing.

    HF Trainer's dict repr, fairseq's ``| epoch ...`` summaries and JSON trainer logs are
    the logging rank's view of the job: they never name the rank a NaN came from.
    """
    head = body.lstrip()[:2]
    if head in ('{"', "{'") and _JSON_RANK.search(body):
        # a structured logger (or a dict print) that says which rank wrote the line: its own
        # values (HF Trainer's dict never holds a rank)
        return "local"
    if head.startswith("|") or head in ("{'", '{"'):
        return "global"
    return "local"


_QUOTED_KEY = re.compile(r"""['"][\w/.-]{1,40}['"]\s{0,4}:""")  # a JSON / dict key: explicit
_TABLE_ROW = re.compile(r"\s*\|\s*[\w/. -]{1,60}?\s*\|\s*\S{1,40}\s*\|\s*")
# "loss: 0.81", "train_loss_step=2.31" (a bar's postfix), "loss/train/total: 7.1", "loss_-4.06"
_KEYED_LOSS = re.compile(r"(?<![\w/.-])[\w.-]{0,40}?(?:[Ll]oss|LOSS|L1)(?:_[A-Za-z]{1,10}|(?:/[a-z]{1,8}){1,2})?(?:['\"]?\s{0,2}[:=]|_[-+]?\.?\d)"
                         r"|(?:[Ll]og[_ -]?[Ll]ikelihood|[Ll]oglik|Obj\(log\[Pzx\]\)|[Ee]lbo|ELBO)\s{0,2}[:=]")


# a bracketed number leading the message, before its keys: the step ("[6] loss=nan, ..." from
# absl/CLU's metric writers); a rank would have been read as a prefix already
_LEAD_STEP = re.compile(r"\[(\d{1,9})\]:?\s+(?=[A-Za-z_][\w/ .-]{0,40}\s*[:=])")
_KERAS_STEP = re.compile(r"\s*(\d{1,9})/\d{1,9} \[[=>.]{1,80}\] - ")
# the bracketed epoch of the metric loggers that count iterations per epoch: Swin/SimMIM/MoBY
# "Train: [3/300][290/625]", DeiT/MAE/PaddleDetection "Epoch: [0] [  560/21947]", HRNet
# "Epoch: [19][300/7922]", NVIDIA DeepLearningExamples' GNMT "TRAIN [3][840/1938]", MMEngine's
# epoch-based loop "Epoch(train) [1][ 10/20]" (the second pair
# restarts every epoch: no step, but it orders one epoch's lines: "epoch_iter")
_BRACKET_EPOCH = re.compile(r"\b(?:Train|TRAIN|Training|Epoch(?:\(train\))?)\s{0,4}:?\s{0,4}\[\s{0,8}(\d{1,6})(?:/\d{1,6})?\]\s{0,8}\[\s{0,8}(\d{1,9})/\d{1,9}\]"
                            # (plain loops print the epoch bare: "Epoch 2 [20/31]", "Epoch 3/10 [120/500]")
                            r"|\bEpoch:?\s{1,4}(\d{1,6})(?:/\d{1,6})?\s{1,8}\[\s{0,8}(\d{1,9})/\d{1,9}\]"
                            # (the PyTorch DCGAN example's "[0/4][12/20]\tLoss_D: ...": [epoch/epochs][batch/batches])
                            r"|^\[(\d{1,6})/\d{1,6}\]\[(\d{1,9})/\d{1,9}\]\s"
                            # (a named batch counter after the epoch: "Epoch: 45\tBatch: 200/2000\tTime: ...")
                            r"|\bEpoch:?\s{0,4}(\d{1,6})(?:/\d{1,6})?[\s,|]{1,8}Batch:?\s{0,4}(\d{1,9})/(\d{1,9})\b")

# the bracketed iteration of a logger that names its loop before the counter: MMEngine's
# iteration-based loop "Iter(train) [ 7/20]" (xtuner, mmsegmentation), a global counter
# ("Iter(val) [11/11]" restarts every evaluation: no step)
_BRACKET_ITER = re.compile(r"\bIter\(train\)\s{0,4}\[\s{0,8}(\d{1,9})/\d{1,9}\]")


# a bracketed evaluation tag naming the whole line's metrics as held-out ones: Marian's
# "[valid] Ep. 3 : Up. 120000 : cross-entropy : 75.22", attention-is-all-you-need-pytorch's
# "  - (Validation) ppl:  865.33501, accuracy: ..." (the training line beside it says "(Training)"),
# fairseq's "| epoch 028 | valid on 'valid' subset | loss 9.329 | ... | ppl 272.04 |", Megatron's
# validation summary
# ("[dev]" and "[test]" are left out: as bracketed labels they also name an environment or a
# logger, and a training loss read as an evaluation one would be judged by the eval rule)
_TRAIN_TAG = re.compile(r"[\[(](?i:train|training)[\])]")
_EVAL_TAG = re.compile(r"[\[(](?i:valid|validation|val|eval|evaluation)[\])]|\bvalid on '"
                       # Megatron's " validation loss at iteration 1000 | lm loss value: ... | lm loss PPL: ..."
                       r"|\bvalidation loss at (?:iteration|the end)")


_EVAL_WORD = re.compile(r"\b(?i:validation|valid|val|eval|evaluation|test|dev)\b")


def _as_eval(text: str, values: dict[str, float]) -> bool:
    """A line tagged as an evaluation: its loss (or perplexity) is the held-out loss, a series
    of its own (``eval_loss``), never mixed into the training loss the spike rules judge.
    ``text`` is the segment before prefix stripping (Marian's tag reads like a logger label)."""
    if "eval_loss" in values or ("loss" not in values and "error" not in values):
        return False
    if "loss" not in values:
        # an error measure alone ("Epoch 3 validation: msle nan"): any word of evaluation tags it
        if _EVAL_WORD.search(text) is None:
            if "step" in values:
                # a regression model's training line at a step with no other loss ("it  380  mse
                # 9.31"): its error measure is the loss it minimises
                values["loss"] = values.pop("error")
            return False
        values["eval_loss"] = values.pop("error")
        return True
    tag = _EVAL_TAG.search(text)
    if tag is None or _TRAIN_TAG.search(text, 0, tag.start()) is not None:
        return False  # untagged, or "[Train] loss: 0.5 ... [Val] loss: 0.6": the first loss is a training one
    values["eval_loss"] = values.pop("loss")
    if values.pop("ppl", None) is not None:
        # Marian prints its cross-entropy and its perplexity as two [valid] lines of one
        # evaluation: the log of the perplexity is another series than the summed cross-entropy
        values["eval_from_ppl"] = 1.0
    return True


# one member of a pretty-printed JSON object on its own line ('        "loss_scale": 0, ')
_JSON_MEMBER = re.compile(r'\s*"[\w.-]{1,64}"\s*:\s*[-+\w.]{1,32}\s*,?\s*')


_SCALER_WORD = re.compile(r"(?i:loss[ _-]?scal|grad[ _-]?scal|scaler|\bamp\b|fp16|float16|half|overflow|lg_loss)")


# a run's parsed command-line arguments printed whole ("Namespace(batch_size=20, lr=20.0, loss_scale=0.0, ...)",
# "args: Namespace(...)"): its numbers are settings, not a step's metrics (loss_scale=0.0 asks for
# dynamic scaling; lr is the configured peak)
_ARGS_REPR = re.compile(r"[`'\"\s]{0,4}(?:[\w .-]{1,30}[:=]\s{0,2})?(?:argparse\.)?Namespace\(")


# a scaler's own move, not a metric line's reading ("scale 4294967296 -> 2147483648", "skipping step")
_SCALE_MOVE = re.compile(r"->|→|(?i:reduc|skip|overflow|found inf|backoff|back-off)")


def _power_of_two(v: float) -> bool:
    """A dynamic loss scale's value: 2**k for k from 3 up (8 .. 2**24 and beyond)."""
    if not math.isfinite(v) or v < 8:
        return False
    mant, _ = math.frexp(v)
    return mant == 0.5


def _fields(m: re.Match[str], seg: Segment) -> bool:
    body = seg.body
    if _ARGS_REPR.match(body):
        return False
    records = extract_records(body)
    if len(records) > 1:
        return _glued(seg, body, records)
    values = records[0]
    tagged = _as_eval(seg.raw or body, values)
    if ("loss_scale" in values and not values.keys() & {"loss", "grad_norm", "eval_loss"} and not _SCALER_WORD.search(body)
            and not ("step" in values and _power_of_two(values["loss_scale"]) and not _SCALE_MOVE.search(body))):
        # a bare "scale" with nothing of the loss or the scaler beside it ("late_qat:enabled
        # step:5227 scale:0.1499", a quantizer's scale) is no loss scale; a power of two at a step
        # is one ("step   71 | scale   32768.0": a dynamic scaler halves and doubles it)
        del values["loss_scale"]
    metrics = METRIC_KEYS & values.keys()
    if not metrics:
        return False
    if "step" not in values and (lead := _LEAD_STEP.match(body) or _KERAS_STEP.match(body)) is not None:
        # CLU's LoggingWriter: "[6] grad_norm=nan, loss=nan"; Keras's Progbar: " 7/12 [===>....] - ETA: 3s
        # - loss: nan" (its counter restarts every epoch, like a tqdm bar's)
        values["step"] = float(lead.group(1))
    if "step" not in values and (it := _BRACKET_ITER.search(body)) is not None:
        values["step"] = float(it.group(1))
    if ("epoch" not in values or "step" not in values) and (ep := _BRACKET_EPOCH.search(body)) is not None:
        epoch, batch = next((ep.group(i), ep.group(i + 1)) for i in (1, 3, 5, 7) if ep.group(i) is not None)
        values.setdefault("epoch", float(epoch))
        if "step" not in values and values["epoch"] == float(epoch):
            values["epoch_iter"] = float(batch)
            if ep.group(9) is not None:
                values["epoch_batches"] = float(ep.group(9))  # the batches of the epoch: "Batch: 200/2000"
    if "step" not in values and len(values) < 2:
        # a lone value needs to say something: "loss is nan" does, a keyed "loss: 0.81"
        # (Keras, plain prints) does, a bare "scale: 2" does not; a row of a key/value table
        # ("| lg_loss_scale | -0.821 |", OpenAI's logger) is explicit about its key
        key = next(iter(metrics))
        v = values[key]
        if key == "loss_scale" and v == 0 and _JSON_MEMBER.fullmatch(body):
            return False  # DeepSpeed's config dump: '"loss_scale": 0,' asks for dynamic loss scaling
        row = tagged or _TABLE_ROW.fullmatch(body) is not None or _QUOTED_KEY.search(body) is not None
        if not row and (key == "loss_scale" or (math.isfinite(v) and not _KEYED_LOSS.search(body))):
            return False
    # (a norm the line calls reduced keeps its "reduced" mark: no rank's own value)
    return _emit(seg, values, "global" if values.get("reduced") else _scope(body, values))


def _glued(seg: Segment, body: str, records: list[dict[str, float]]) -> bool:
    """tqdm updates glued into one line: one SAMPLE per update (repeats of a step once)."""
    if seg.sampled:
        return False
    scope = _scope(body, records[0])
    seen: set[float] = set()
    for values in records:
        step = values.get("step")
        if step in seen or not METRIC_KEYS & values.keys():
            continue
        seen.add(step if step is not None else math.nan)
        seg.sampled = False
        _emit(seg, {k: v for k, v in values.items() if k != "reduced"}, scope)
    return seg.sampled


# --- Megatron ---------------------------------------------------------------------------
_MEG_ITER = re.compile(r"iteration\s+(?P<it>\d+)/\s*\d+ \|")
# "| lm loss: 2.3E+00 |", and older forks' "| lm loss 2.3E+00 |" (no colon)
_MEG_FIELD = re.compile(rf"\| ?(?P<k>[a-zA-Z][\w /()-]*?)(?:: +| )(?P<v>{_NUM})(?= *(?:\||$))")


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
    skipped_only = values.get("skipped_iters", 0) > 0
    # a line cut short (the end of a pasted excerpt) has lost its fields, not its loss; but one
    # cut after "loss scale" (printed right after the losses) had already passed where they go
    complete = seg.body.rstrip().endswith("|") or "loss_scale" in values
    return _emit(seg, values, "global", loss_missing=complete and not has_loss and not skipped_only)


# --- Marian NMT ---------------------------------------------------------------------------
# its training line (src/training/scheduler.h): "Ep. 1 : Up. 14000 : Sen. 965,843 : Cost 5.20174599 :
# Time 359.59s : 3007.81 words/s", later with " : gNorm 0.6068 : L.r. 5.1856e-05" and, from 2018,
# "Cost 2.97881484 * 13341033 after 5203488403" (marian-nmt/marian-dev#212). "Up." is the update
# counter, the step; "Cost" the loss. (The "[valid] Ep. 1 : Up. 20000 : cross-entropy : 130.97" lines
# have no "Sen.": the fields rule reads them as held-out.)
_MARIAN = re.compile(r"\bEp\. (?P<ep>\d{1,6}) : Up\. (?P<up>\d{1,12}) : Sen\. [\d,]{1,20} : ")


def _marian(m: re.Match[str], seg: Segment) -> bool:
    mm = _MARIAN.search(seg.body)
    if mm is None:
        return False
    values = {k: v for k, v in extract_records(seg.body[mm.end():])[0].items() if k in METRIC_KEYS}
    if "loss" not in values:
        return False
    values["step"] = float(mm.group("up"))
    values["epoch"] = float(mm.group("ep"))
    return _emit(seg, values, "local")


# --- BasicSR's MessageLogger (basicsr/utils/logger.py) and the restoration, super-resolution and
# IQA projects built on it (Real-ESRGAN, GFPGAN, IQA-PyTorch; MMSR/mmagic before): "[train..][epoch:
# 0, iter:     100, lr:(3.000e-05,)] [eta: 4:06:17, time (data): 1.663 (0.247)] l_pix: 1.2e-02
# l_percep: 3.1e+00", the older "<epoch: 86, iter: 107,200, lr:2.500e-05> l_g_pix: 1.4819e-03 ...
# l_d_real: 1.4e-05". Its losses are named "l_<term>": the generator's (and a model's only) terms
# add up to the loss the model trains, "l_d_*" are the discriminator's; the iteration (printed with
# thousands separators) is the step. The values are reduced over ranks before rank 0 logs them.
_BASICSR = re.compile(r"[\[<]epoch: {0,8}(?P<ep>\d{1,6}), iter: {0,12}(?P<it>\d{1,3}(?:,\d{3})*|\d{1,12}), lr:")
_BASICSR_LOSS = re.compile(rf"(?<![\w/])l_(?P<name>[a-z][a-z0-9_]{{0,40}}): (?P<v>{_NUM})")


def _basicsr(m: re.Match[str], seg: Segment) -> bool:
    bm = _BASICSR.search(seg.body)
    if bm is None:
        return False
    parts: list[float] = []
    for lm in _BASICSR_LOSS.finditer(seg.body, bm.end()):
        v = parse_number(lm.group("v"))
        if v is not None and not lm.group("name").startswith("d_"):
            parts.append(v)
    if not parts:
        return False
    values = {"step": float(bm.group("it").replace(",", "")), "epoch": float(bm.group("ep")),
              "loss": sum_of_parts(parts)}
    return _emit(seg, values, "global")


# --- DeepSpeed --------------------------------------------------------------------------
_DS_STEP = re.compile(r"step=(?P<step>\d+), skipped=(?P<skipped>\d+)")
_DS_PIPE = re.compile(rf"steps: (?P<step>\d+) loss: (?P<loss>{_NUM})")


def _deepspeed(m: re.Match[str], seg: Segment) -> bool:
    sm = _DS_STEP.search(seg.body)
    if sm:
        values = {"step": float(sm.group("step")), "skipped": float(sm.group("skipped"))}
        # a loop that adds its own fields to DeepSpeed's line ("..., loss_scale=32.0, loss=0.88954")
        rest = extract_records(seg.body[sm.end():])
        if len(rest) == 1:
            values.update({k: v for k, v in rest[0].items() if k in METRIC_KEYS})
        return _emit(seg, values, "global")
    pm = _DS_PIPE.search(seg.body)
    if pm:
        v = parse_number(pm.group("loss"))
        return v is not None and _emit(seg, {"step": float(pm.group("step")), "loss": v}, "global")
    return False


# --- a gradient-clipping report: the norm beside the threshold it was clipped to ---------
_CLIP_NUM = r"([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|nan|inf)"
_CLIP_REPORTS = (
    # icefall's ScaledAdam: quartiles of the last batches' norms, the threshold (clipping_scale x median)
    (re.compile(rf"grad-norm quartiles(?: \S+){{4}} {_CLIP_NUM}, threshold={_CLIP_NUM}"), False),
    # icefall's ScaledAdam scaling the whole update down to its threshold: the norm is threshold / factor
    (re.compile(rf"Scaling gradients by {_CLIP_NUM}, model_norm_threshold={_CLIP_NUM}"), True),
    # Caffe's solver (clip_gradients)
    (re.compile(rf"scaling down gradients \(L2 norm {_CLIP_NUM} > {_CLIP_NUM}\)"), False),
)


# the same reports word-wrapped by a paste (an e-mail client, a chat): the first half ends where
# the threshold (or the factor) would start, the next physical line carries the rest
_CLIP_CUT = (
    (re.compile(rf"grad-norm quartiles(?: \S+){{4}} {_CLIP_NUM},?\s*$"), False),
    (re.compile(r"Scaling gradients by\s*$"), True),
)
_CLIP_REST = (
    re.compile(rf"\s*threshold={_CLIP_NUM}"),
    re.compile(rf"\s*{_CLIP_NUM}, model_norm_threshold={_CLIP_NUM}"),
)


def _clip_report(m: re.Match[str], seg: Segment) -> bool:
    """The gradient norm and the clipping threshold a report names, as a sample: the threshold
    is the run's own reference for the norm (``clip_threshold``), so a norm far above it is an
    explosion without any history. The norm is the all-reduced one: the job's, never a rank's."""
    pending = seg.file.clip_cut
    seg.file.clip_cut = None
    if pending is not None and pending[0] == seg.source.line - 1:
        return _clip_rest(seg, pending[1], pending[2])
    for rx, factor in _CLIP_CUT:
        cm = rx.search(seg.body)
        if cm is not None:
            seg.file.clip_cut = (seg.source.line, factor, cm.group(1) if cm.groups() else None)
            return False
    for rx, factor in _CLIP_REPORTS:
        cm = rx.search(seg.body)
        if cm is None:
            continue
        a, t = parse_number(cm.group(1)), parse_number(cm.group(2))
        if a is None or t is None or not t > 0:
            return False
        norm = (t / a if a > 0 else math.inf) if factor else a
        return _emit(seg, {"grad_norm": norm, "clip_threshold": t}, "global")
    return False


def _clip_rest(seg: Segment, factor: bool, first: str | None) -> bool:
    """The second half of a wrapped clipping report (the line right after its first half)."""
    if factor:
        cm = _CLIP_REST[1].match(seg.body)
        a, t = (parse_number(cm.group(1)), parse_number(cm.group(2))) if cm else (None, None)
    else:
        cm = _CLIP_REST[0].match(seg.body)
        a, t = (parse_number(first or ""), parse_number(cm.group(1))) if cm else (None, None)
    if a is None or t is None or not t > 0:
        return False
    norm = (t / a if a > 0 else math.inf) if factor else a
    return _emit(seg, {"grad_norm": norm, "clip_threshold": t}, "global")


# --- bare columns: print(step, loss.item()) -------------------------------------------
_COL_NUM = r"[-+]?(?:\d+\.\d*(?:[eE][-+]?\d+)?|nan|inf)"
_COLUMNS = re.compile(
    rf"\s*(?:\d{{1,9}}[:,]?\s+){{0,2}}(?P<step>\d{{1,9}})[:,]?\s+(?P<v>{_COL_NUM})(?P<more>(?:[,\s]\s*{_COL_NUM}){{0,3}})\s*",
    re.IGNORECASE,
)


def _columns(m: re.Match[str], seg: Segment) -> bool:
    """``76970 2.6265104`` / ``123892: 40490.1797`` / ``10: 0.6931  0.6914``: a script that prints
    its step and loss (or a few losses side by side) and nothing else. A line alone says nothing (any two numbers look like this), so a row
    counts only when the row before it in the same file had a smaller step; the value is
    marked ``unkeyed`` and judged only on gross changes (a NaN, a spike of 100x)."""
    cm = _COLUMNS.fullmatch(seg.raw)  # raw: a "123892:" step looks like Slurm's "3: " label
    if cm is None:
        return False
    step = int(cm.group("step"))
    prev = getattr(seg.file, "bare_step", None)
    seg.file.bare_step = step
    v = parse_number(cm.group("v"))
    if prev is None or not prev < step <= prev + 1_000_000 or v is None:
        return False
    if math.isfinite(v) and cm.group("more"):
        # several losses side by side (a GAN's "D G"): the first is the series judged for spikes,
        # a non-finite one beside it is the row's NaN
        bad = [x for x in map(parse_number, re.split(r"[,\s]+", cm.group("more").strip())) if x is not None
               and not math.isfinite(x)]
        v = bad[0] if bad else v
    if seg.rank_from == "prefix" and seg.pre.body != seg.raw:
        # the first column was read as a Slurm "N: " label: it is the step, the path says the rank
        seg.rank, seg.local_rank = seg.file.rank, seg.file.local_rank
        seg.rank_from = "path" if seg.rank is not None else None
    return _emit(seg, {"step": float(step), "loss": v, "unkeyed": 1.0}, "local")


# --- a logged CSV row led by its clock: LOGGER.info('epoch, %04d, %f, %f', epoch, loss, ...) ------
# the message is a comma-separated row whose first cell names the counter of the second ("epoch, 0040,
# 0.015912, 0.017028, ..."), then numbers only, the row's last cell ending the line; written behind
# whatever the logger puts first ("INFO:PointNetLK-Revisited, 2022-03-10 18:35:12,212, " from a format
# '%(levelname)s:%(name)s, %(asctime)s, %(message)s', PointNetLK and its forks). The columns are named
# nowhere: the first number is read as the loss (the loop's running loss comes first), ``unkeyed``
_CLOCK_ROW = re.compile(
    rf"(?:^|,\s?)(?P<clock>epoch|step|iter|iteration),\s?(?P<n>\d{{1,9}})(?P<cells>(?:,\s?(?:{_COL_NUM}|[-+]?\d+)){{1,16}})\s*$",
    re.IGNORECASE,
)


def _clock_row(m: re.Match[str], seg: Segment) -> bool:
    """A row of a run's own comma-separated log (see ``_CLOCK_ROW``): its counter, and its first
    number as an ``unkeyed`` loss (judged only on gross changes: a NaN, a spike of 50x)."""
    cm = _CLOCK_ROW.search(seg.body)
    if cm is None:
        return False
    cells = [c.strip() for c in cm.group("cells").split(",")[1:]]
    v = parse_number(cells[0])
    if v is None or ("." not in cells[0] and math.isfinite(v)):
        return False  # a whole number first: another counter (a batch, a sample count), not a loss
    clock = "epoch" if cm.group("clock").casefold() == "epoch" else "step"
    return _emit(seg, {clock: float(cm.group("n")), "loss": v, "unkeyed": 1.0}, "local")


# --- print(loss.item()): a bare non-finite value alone on its line, line after line -------------
_BARE_NAN = re.compile(r"\s*[-+]?(?:nan|inf)\s*", re.IGNORECASE)
BARE_NAN_RUN = 3  # lines in a row: one "nan" alone could be anything's; a run is a loop printing its loss


def _bare_nan(m: re.Match[str], seg: Segment) -> bool:
    """``nan`` / ``inf`` alone on its line, BARE_NAN_RUN lines in a row (a loop printing
    ``loss.item()`` per batch, between its progress bars): the printed value went non-finite.
    Marked ``unkeyed`` (no key says it is the loss); one sample per run."""
    if _BARE_NAN.fullmatch(seg.body) is None:
        return False
    prev = getattr(seg.file, "bare_nan", None)  # a FileState pickled by an older version lacks it
    n = prev[1] + 1 if prev is not None and seg.source.line - prev[0] == 1 else 1
    seg.file.bare_nan = (seg.source.line, n)
    if n != BARE_NAN_RUN:
        return False
    return _emit(seg, {"loss": parse_number(seg.body) or math.nan, "unkeyed": 1.0}, "local")


_BARE_VALUE = re.compile(r"\s*[-+]?(?:\d+\.\d+|\d+(?:\.\d*)?[eE][-+]?\d+)\s*")
BARE_VALUE_RUN = 3  # lines in a row: one or two numbers alone could be anything's; a run is a loop's values


def _bare_value(m: re.Match[str], seg: Segment) -> bool:
    """A decimal number alone on its line, the BARE_VALUE_RUN-th or later of a run of such lines
    (a loop printing ``loss.item()`` each step, a paste of a ``history.history['val_loss']`` list
    one value per line): a series, read as an ``unkeyed`` value (judged only on a gross change,
    like a bare column), without a step. Whole numbers are counters, not read; so are the first
    values of a run, which may be anything's."""
    if _BARE_VALUE.fullmatch(seg.raw) is None:
        return False  # (raw: "123880: -5.44" is a step and its loss, not a Slurm label before a value)
    prev = getattr(seg.file, "bare_value", None)  # a FileState pickled by an older version lacks it
    n = prev[1] + 1 if prev is not None and seg.source.line - prev[0] == 1 else 1
    seg.file.bare_value = (seg.source.line, n)
    v = parse_number(seg.raw.strip())
    if n < BARE_VALUE_RUN or v is None:
        return False
    return _emit(seg, {"loss": v, "unkeyed": 1.0}, "local")


# --- a printed list of losses: "train_losses: [2.3026, 2.2981, ...]", a history list, or the values
# joined under a heading that names them ("Loss values for each step in the epoch:" then
# "12.320100, 12.357852, ..."): one sample per value, its place in the lists read so far the step
_VALUE_LIST = re.compile(
    r"\s*(?:(?P<key>[A-Za-z_'\"\[\]][\w .'\"\[\]/-]{0,60}?)\s*[:=]\s*)?\[?\s*"
    r"(?P<vals>[-+]?\d+\.\d+(?:, (?:[-+]?\d+\.\d+|nan|-?inf)){7,4095}),?\s*\]?\s*")
_LIST_VALUE = re.compile(r"[-+]?\d+\.\d+|nan|-?inf")
_LIST_EVAL = re.compile(r"(?i)\b(?:val|valid|validation|eval|test|dev)(?:[_ ]|\b)|acc|lr\b|learning")


def _value_list(m: re.Match[str], seg: Segment) -> bool:
    lm = _VALUE_LIST.fullmatch(seg.body)
    if lm is None or seg.sampled:
        return False
    named = lm.group("key")
    if named is None:
        # no key on the line: the heading just above must name the values a training loss
        file = seg.file
        before = getattr(file, "tail", b"") + (file.look_buf[:file.look_at] if file.look_buf is not None else b"")
        prev = before[-512:].rstrip(b"\r\n").rsplit(b"\n", 1)[-1].decode("utf-8", "replace")
        named = prev if prev.rstrip().endswith(":") else ""
    if "loss" not in named.lower() or _LIST_EVAL.search(named):
        return False
    vals = [parse_number(v) for v in _LIST_VALUE.findall(lm.group("vals"))]
    base = getattr(seg.file, "list_steps", 0)
    for i, v in enumerate(vals):
        if v is not None:
            seg.emit(EventKind.SAMPLE, step=base + i, data={"loss": v, "scope": "local"})
    seg.file.list_steps = base + len(vals)
    seg.sampled = True
    return True


# --- print(loss): a scalar tensor's repr on a line of its own ----------------------------
_TENSOR = re.compile(
    r"\s*tensor\((?P<v>[-+]?(?:\d+\.?\d*(?:e[-+]?\d+)?|nan|inf)),\s*device='(?:cuda|xpu|npu|mps)(?::\d+)?'"
    r"(?:,\s*(?:grad_fn=<\w+>|requires_grad=True|dtype=torch\.\w+))*\)\s*",
    re.IGNORECASE,
)


def _tensor(m: re.Match[str], seg: Segment) -> bool:
    """``tensor(3.2207, device='cuda:0')``: a script that prints its loss tensor each step.
    A line alone is any scalar; a run of them (each right below the last) is a series, read as
    an ``unkeyed`` value (judged only on a NaN or a 100x spike), without a step."""
    tm = _TENSOR.fullmatch(seg.body)
    if tm is None:
        return False
    prev = getattr(seg.file, "tensor_line", None)
    seg.file.tensor_line = seg.source.line
    v = parse_number(tm.group("v"))
    if prev is None or not 0 < seg.source.line - prev <= 2 or v is None:
        return False
    return _emit(seg, {"loss": v, "unkeyed": 1.0}, "local")


# --- a table whose header row names the columns ----------------------------------------
# "┃ step ┃ loss     ┃ grad_norm ┃ lr   ┃" then rows "│    7 │      nan │       nan │ 0.05 │" (rich
# tables, markdown tables printed by training scripts): the rows alone hold only numbers
_CELLS = re.compile(r"\s*[│┃|]\s*")
_COUNTER_CELL = re.compile(r"\d{1,9}/\d{1,9}")
_WORD_CELL = re.compile(r"(?i:yes|no|y|n|true|false|ok|fail(?:ed)?|pass(?:ed)?)")  # a flag column: "finite: yes / NO"
# a clock or a duration in a column the table does not know: fastai's "time" ("00:03", "01:12:09"),
# a CSV log's own time column ("19:45:02.565"), a date-time ("2024-05-01 12:00:03")
_CLOCK_CELL = re.compile(r"(?:\d{4}-\d\d-\d\d[T ])?\d{1,3}:\d\d(?::\d\d)?(?:[.,]\d{1,9})?Z?")
_UNIT_CELL = re.compile(r"\d{1,12}(?:\.\d{1,12})? ?(?:[a-zA-Z]{1,4}(?:/s)?|%)")  # "0.2s", "812ms", "3.1GB", "45%", "1.2k/s"
_HEADER_KEYS: dict[str, str] = {k.casefold().replace("_", " ").replace("-", " "): v for k, v in CANONICAL.items()}
# a column naming the process each row is from (a script's per-rank CSV or table: "rank,step,loss,...")
_RANK_COLUMN = "@rank"
_HEADER_KEYS.update({k: _RANK_COLUMN for k in ("rank", "global rank", "rank id", "grank")})


def _cells(body: str) -> list[str]:
    parts = _CELLS.split(body.strip())
    if len(parts) >= 3 and not parts[0] and not parts[-1]:
        return parts[1:-1]
    # a table printed without its outer pipes ("epoch |   batch |      loss | grad_norm")
    return parts if len(parts) >= 3 and all(parts) else []


# a column of one rank's value in a table of every rank's ("loss[r3]", "loss_rank3", "r3/loss"):
# read as that rank's own metric, "loss@3"
_PER_RANK_CELL = re.compile(r"(?P<name>[A-Za-z][\w/.-]*?)(?:\[(?:r|rank) ?(?P<a>\d{1,5})\]|[_/-](?:r|rank)(?P<b>\d{1,5}))"
                            r"|(?:r|rank)(?P<c>\d{1,5})[_/-](?P<name2>[A-Za-z][\w/.-]*)", re.IGNORECASE)


# a header cell's qualifier in parentheses: how it was averaged or its unit ("loss(ema50)",
# "loss(avg)", "time(s)", "mem(GB)"): the column is the named metric
_CELL_QUALIFIER = re.compile(r"\s?\([A-Za-z0-9_%/. -]{1,20}\)$")


# a column named under a namespace: Chainer's PrintReport ("main/loss", "validation/main/loss",
# what its optimizer's target and its Evaluator report), TensorBoard-style names ("train/loss",
# "val/loss"): the training one is the metric, the evaluation's loss is the held-out loss
_CELL_NS = re.compile(r"(?:(?P<ev>eval|val|valid|validation|test)/)?(?:(?:main|train|training)/)?(?P<rest>[^/]+)",
                      re.IGNORECASE)


def _header_key(cell: str) -> str | None:
    cell = _CELL_QUALIFIER.sub("", cell.strip()) or cell
    key = _HEADER_KEYS.get(cell.strip().casefold().replace("_", " ").replace("-", " "))
    if key is None and "/" in cell and (ns := _CELL_NS.fullmatch(cell.strip())) is not None:
        key = _HEADER_KEYS.get(ns.group("rest").casefold().replace("_", " ").replace("-", " "))
        if ns.group("ev"):
            key = "eval_loss" if key == "loss" else None
    if key is None and (m := _PER_RANK_CELL.fullmatch(cell.strip())):
        base = _HEADER_KEYS.get((m.group("name") or m.group("name2")).casefold().replace("_", " ").replace("-", " "))
        if base in METRIC_KEYS:
            key = f"{base}@{m.group('a') or m.group('b') or m.group('c')}"
    return key


# a column of one part of a loss beside its total ("epoch | total | recon | kl | aux | lr": a VAE's
# reconstruction and KL terms, an auxiliary loss, a detector's box and class terms)
_LOSS_PART_CELL = re.compile(r"(?i:recon(?:struction)?|kl|kld|aux|ce|nll|mse|mae|l1|l2|reg|cls|box|bbox|obj|dfl|ctc|att"
                             r"|vq|commit(?:ment)?|perceptual|adv|gan|disc|gen|\w{1,20}_loss|loss_\w{1,20})")


def _named_columns(cells: list[str]) -> tuple[str | None, ...] | None:
    """A header row's canonical keys (None for a column the table does not know), when at least
    two are known and one is a metric; else None. A rank's own column is ``key@rank``. A
    ``total`` column beside the parts of a loss, in a table counted by epoch or step, is the loss."""
    cols = [_header_key(c) for c in cells]
    low = [c.strip().casefold() for c in cells]
    if ("loss" not in cols and low.count("total") == 1 and {"epoch", "step"} & set(cols)
            and any(_LOSS_PART_CELL.fullmatch(c.strip()) for c, k in zip(cells, cols, strict=True) if k is None and c.strip().casefold() != "total")):
        cols[low.index("total")] = "loss"
    if cols.count(_RANK_COLUMN) > 1:
        return None
    bases = {c.partition("@")[0] if c and not c.startswith("@") else c for c in cols}
    if len([c for c in cols if c]) >= 2 and METRIC_KEYS & bases and len(cols) <= 64:
        return tuple(cols)
    return None


def _table_header(m: re.Match[str], seg: Segment) -> bool:
    if (cols := _named_columns(_cells(seg.body))) is not None:
        seg.file.table_cols = cols
    return False


def _row(seg: Segment, cols: tuple[str | None, ...] | None, cells: list[str], empty_ok: bool) -> bool:
    """One row of a table whose header named ``cols``: a sample of its numbers (``empty_ok``: a
    blank cell is a metric not logged in that row, as in a CSV file)."""
    if not cols or len(cells) != len(cols):
        return False
    values: dict[str, float] = {}
    for key, cell in zip(cols, cells, strict=True):
        cell = cell.strip()
        if empty_ok and not cell:
            continue
        v = parse_number(cell)
        if v is None and key is None and (_COUNTER_CELL.fullmatch(cell) or _UNIT_CELL.fullmatch(cell)
                                          or _CLOCK_CELL.fullmatch(cell)
                                          or (not empty_ok and _WORD_CELL.fullmatch(cell))):
            # a column the table does not know holding a counter ("15/60" batches), a measure ("0.2s")
            # or a flag (a per-rank table's "finite: yes / NO"); any other word is another text's row
            continue
        if v is None or (empty_ok and not _CSV_ROW_CELL.fullmatch(cell)):
            return False  # not a row of numbers: another table, another file's text
        if key is not None and key not in values:
            values[key] = v
    if empty_ok and not METRIC_KEYS & values.keys():
        return False
    if "step" in values and (not math.isfinite(values["step"]) or values["step"] != int(values["step"])):
        return False
    per_rank = {k: values.pop(k) for k in [k for k in values if "@" in k[1:]]}
    if per_rank and seg.rank is None:
        return _per_rank_rows(seg, values, per_rank)
    smoothed = values.pop("smoothed_loss", None)
    if smoothed is not None and "loss" not in values:
        values["loss"] = smoothed  # no raw loss column: the smoothed one is the table's loss
    own_loss = values.pop("local_loss", None)
    if own_loss is not None:
        values["loss"] = own_loss  # the rank's own loss column beside the reduced one
    own = values.pop("local_grad_norm", None)
    if own is not None:
        values["grad_norm"] = own  # the rank's own norm column beside the reduced one
    values.pop("global_grad_norm", None)
    rank = values.pop(_RANK_COLUMN, None)
    if rank is not None:
        if not (math.isfinite(rank) and rank == int(rank) and 0 <= rank < 1_000_000):
            return False
        if seg.rank is None:
            seg.rank, seg.rank_from = int(rank), "message"  # the row names its process
    return _emit(seg, values, "local")


def _per_rank_rows(seg: Segment, shared: dict[str, float], per_rank: dict[str, float]) -> bool:
    """A row of a table with a column per rank ("step  loss[r0]  loss[r1] ... mean"): one sample
    per rank, each with the row's shared clock (its own metric only: the mean is not a rank's)."""
    if seg.sampled:
        return False
    step_f = shared.get("step")
    step = int(step_f) if step_f is not None and math.isfinite(step_f) else None
    clock = {k: v for k, v in shared.items() if k in ("epoch",)}
    by_rank: dict[int, dict[str, object]] = {}
    for k, v in per_rank.items():
        key, _, who = k.partition("@")
        by_rank.setdefault(int(who), {})[key] = v
    for r, vals in sorted(by_rank.items()):
        seg.emit(EventKind.SAMPLE, step=step, rank=r, rank_from="message", data={**clock, **vals, "scope": "local"})
    seg.sampled = True
    return True


def _table_row(m: re.Match[str], seg: Segment) -> bool:
    # (a FileState pickled by an older version lacks table_cols)
    return _row(seg, getattr(seg.file, "table_cols", None), _cells(seg.body), empty_ok=False)


# --- CSV metric files: Lightning's CSVLogger ``metrics.csv``, Keras's CSVLogger, pandas dumps ------
# "epoch,grad_norm,step,train_loss" then rows "0,nan,5,0.475"; a cell is empty when that metric
# was not logged at that step (Lightning writes one row per logging call)
_CSV_ROW_CELL = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)|", re.IGNORECASE)


def _csv_header(m: re.Match[str], seg: Segment) -> bool:
    if (cols := _named_columns(seg.body.strip().split(","))) is not None:
        seg.file.csv_cols = cols
    return False


def _csv_row(m: re.Match[str], seg: Segment) -> bool:
    # (a FileState pickled by an older version lacks csv_cols and csv_ends)
    cols = getattr(seg.file, "csv_cols", None)
    cells = seg.body.strip().split(",")
    if cols and len(cols) >= 2 and len(cells) == 2 * len(cols) - 1:
        return _glued_csv_rows(seg, cols, cells)
    if not _row(seg, cols, cells, empty_ok=True):
        return False
    seg.file.csv_ends = (cells[0].strip(), cells[-1].strip())
    return True


# a row of that CSV log that holds text (a script's error row, "18:03:40,2,0,26,ERROR,RuntimeError:
# ... Timed out waiting 25000ms", its message in the last cells): no sample, but its rank cell names
# the process whose text it is, when every cell up to that one is of the row's own shape
_CSV_LEAD_CELL = re.compile(r"[-+]?\d{1,12}(?:\.\d{1,12})?")


def _csv_text_row(m: re.Match[str], seg: Segment) -> bool:
    cols = getattr(seg.file, "csv_cols", None)
    if not cols or _RANK_COLUMN not in cols or seg.rank is not None:
        return False
    at = cols.index(_RANK_COLUMN)
    cells = seg.body.strip().split(",")
    if len(cells) <= at + 1 or len(cells) > len(cols) + 64:
        return False
    for key, cell in zip(cols[:at + 1], cells[:at + 1], strict=True):
        cell = cell.strip()
        if not (_CSV_LEAD_CELL.fullmatch(cell) or (key is None and _CLOCK_CELL.fullmatch(cell))):
            return False
    rank = int(float(cells[at]))
    if float(cells[at]) == rank and 0 <= rank < 1_000_000:
        seg.rank, seg.rank_from = rank, "message"
    return False


_FIXED_DECIMALS = re.compile(r"[-+]?\d+\.(\d+)")
_WHOLE = re.compile(r"[-+]?\d+")


def _glued_csv_rows(seg: Segment, cols: tuple[str | None, ...], cells: list[str]) -> bool:
    """Two rows of a CSV log glued into one line (processes writing one stream, one row's newline
    lost: "0,47,0.28836,0.80459,0.02" + "1,47,0.13316,0.78386,0.02" printed "...,0.021,47,..."): one
    cell too few for two rows, the first row's last cell and the second's first fused. They are
    told apart only by the rows read before: a last cell printed with a fixed number of decimals
    ("0.02", "%.2f") and a whole first cell (a rank, a step). Any other fusion is left unread."""
    ends = getattr(seg.file, "csv_ends", None)
    if ends is None:
        return False
    first, last = ends
    fixed = _FIXED_DECIMALS.fullmatch(last)
    if fixed is None or _WHOLE.fullmatch(first) is None:
        return False
    fused = cells[len(cols) - 1].strip()
    dot = fused.find(".")
    cut = dot + 1 + len(fixed.group(1))
    if dot < 0 or cut >= len(fused) or _WHOLE.fullmatch(fused[cut:]) is None:
        return False
    rows = [[*cells[:len(cols) - 1], fused[:cut]], [fused[cut:], *cells[len(cols):]]]
    rank, rank_from = seg.rank, seg.rank_from
    read = False
    for row in rows:
        seg.rank, seg.rank_from, seg.sampled = rank, rank_from, False
        read = _row(seg, cols, row, empty_ok=True) or read
    seg.sampled = read
    if read:
        seg.file.csv_ends = (rows[1][0].strip(), rows[1][-1].strip())
    return read


# --- a plain whitespace-aligned table: columns named only in its header ----------------------
# skorch's PrintLog ("  epoch    train_loss    valid_loss     dur", a "-------  ----" rule, then bare
# rows whose best values are in ANSI colours), fastai's "epoch train_loss valid_loss accuracy time":
# the header names the columns, the rows hold only numbers, read by those names like a CSV file's
# (colour codes are gone before the scan: parse.py)
_HEADER_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_/.-]{0,40}(?:\[[A-Za-z]{0,4} ?\d{1,5}\])?(?:\([A-Za-z0-9_%/.-]{1,20}\))?")
_WIDE_GAP = re.compile(r" {2,}")
PLAIN_TABLE_GAP = 8  # a row more than this many lines below the header or the last row is another text's


def _plain_header_cols(body: str) -> tuple[str | None, ...] | None:
    """A plain table header's canonical keys (see ``_plain_header_layout``), or None."""
    found = _plain_header_layout(body)
    return found[0] if found is not None else None


def _plain_header_layout(body: str) -> tuple[tuple[str | None, ...], tuple[tuple[int, int], ...]] | None:
    """A header of bare column names: every word a name, adjacent words that together name a known
    column joined ("train loss" as printed with single spaces); None if it is not one. With the
    keys, where each column's name stands in the line."""
    words = body.split()
    if len(words) < 2 or len(words) > 64 or not all(_HEADER_WORD.fullmatch(w) for w in words):
        return None
    if "\t" not in body and (wide := _WIDE_GAP.split(body.strip())) and len(wide) >= 2 and any(
            " " in c and _header_key(c) is not None for c in wide):
        # a fixed-width header: columns two or more spaces apart, a name may hold one
        # ("Step      Train loss    Test loss     Test metric", DeepXDE); two names one space
        # apart that name no column together are two columns ("  skip skipped_total")
        cols = _named_columns(wide)
        return (cols, tuple(m.span() for m in re.finditer(r"\S+(?: \S+)*", body))) if cols is not None else None
    cells: list[str] = []
    cell_spans: list[tuple[int, int]] = []
    # (two words joined only when one space apart: an aligned header's "loss     scale" is two columns)
    spans = [m.span() for m in re.finditer(r"\S+", body)]
    i = 0
    while i < len(words):
        pair = f"{words[i]} {words[i + 1]}" if i + 1 < len(words) and spans[i + 1][0] - spans[i][1] == 1 else ""
        if pair and pair.casefold().replace("_", " ").replace("-", " ") in _HEADER_KEYS:
            cells.append(pair)
            cell_spans.append((spans[i][0], spans[i + 1][1]))
            i += 2
        else:
            cells.append(words[i])
            cell_spans.append(spans[i])
            i += 1
    cols = _named_columns(cells)
    return (cols, tuple(cell_spans)) if cols is not None else None


def _placed_cells(body: str, spans: tuple[tuple[int, int], ...]) -> list[str] | None:
    """A fixed-width row's cells put under the header's columns by where they stand, a column with
    nothing under it blank (skorch's ``cp`` column holds "+" only on the epochs that saved a
    checkpoint; a script's ``skipped`` column says "YES" only on the skipped steps): each cell
    must stand under exactly one column's name, and no two under the same one; else None."""
    out = [""] * len(spans)
    for m in re.finditer(r"\S+", body):
        a, b = m.span()
        under = [i for i, (s, e) in enumerate(spans) if a < e and s < b]
        if len(under) != 1 or out[under[0]]:
            return None
        out[under[0]] = m.group()
    return out


def _plain_header(m: re.Match[str], seg: Segment) -> bool:
    if (found := _plain_header_layout(seg.body)) is not None:
        seg.file.plain_cols, seg.file.plain_spans = found
        seg.file.plain_line = seg.source.line
    return False


def _plain_row(m: re.Match[str], seg: Segment) -> bool:
    # (a FileState pickled by an older version lacks plain_cols)
    cols = getattr(seg.file, "plain_cols", None)
    last = getattr(seg.file, "plain_line", None)
    if cols is None or last is None or not 0 < seg.source.line - last <= PLAIN_TABLE_GAP:
        return False
    cells = seg.body.split()
    empty_ok = False
    if len(cells) == len(cols) + 1 and cells[0].isdigit():
        # a pandas DataFrame printed (a CSVLogger's metrics.csv read back): its row index comes
        # first, and a metric not logged in that row is printed NaN; the row's NaN cells are
        # missing values when another of its metric cells holds a number
        cells = cells[1:]
        nums = [parse_number(c) for c in cells]
        if any(c.casefold() == "nan" for c in cells) and any(
                k in METRIC_KEYS and v is not None and math.isfinite(v) for k, v in zip(cols, nums, strict=True)):
            cells = ["" if c.casefold() == "nan" else c for c in cells]
            empty_ok = True
    if "[" in seg.body:
        cells = [_list_value(c) for c in _LIST_CELL.findall(seg.body)]
        if len(cells) == len(cols) and "" in cells:
            # an empty list is a metric this run does not compute (no test metric): not read
            kept = [(k, c) for k, c in zip(cols, cells, strict=True) if c or k is not None]
            cols, cells = tuple(k for k, _ in kept), [c for _, c in kept]
    if _row(seg, cols, cells, empty_ok=empty_ok) or _placed_row(seg, cols):
        seg.file.plain_line = seg.source.line
        return True
    return False


_MARK_CELL = re.compile(r"[+*✓✔]")  # a marker column's cell: skorch's "+" under ``cp`` (checkpoint saved)


def _placed_row(seg: Segment, cols: tuple[str | None, ...]) -> bool:
    """A fixed-width row that the header's columns do not read one cell each (a blank cell, a flag
    under a counter's name): its cells read by where they stand (see ``_placed_cells``), a flag or
    a marker under a column that holds no metric read as nothing."""
    spans = getattr(seg.file, "plain_spans", None)
    if spans is None or len(spans) != len(cols) or "\t" in seg.body:
        return False
    placed = _placed_cells(seg.body, spans)
    if placed is None:
        return False
    cells = ["" if c and k not in METRIC_KEYS and (_WORD_CELL.fullmatch(c) or _MARK_CELL.fullmatch(c)) else c
             for k, c in zip(cols, placed, strict=True)]
    return _row(seg, cols, cells, empty_ok=True)


# a cell that prints a list (DeepXDE's "0  [5.47e+03]  [6.44e+03]  [1.00e+00]", one number per loss
# term: "[1.05e+00, 2.31e-01]"): one cell, whose value is the sum of its terms (NaN if any is)
_LIST_CELL = re.compile(r"\[[^\]\n]{0,400}\]|[^\s\[]+")


def _list_value(cell: str) -> str:
    if not cell.startswith("["):
        return cell
    terms = [parse_number(t) for t in cell[1:-1].replace(",", " ").split()]
    if not terms:
        return ""  # an empty list
    if any(t is None for t in terms):
        return "-"  # not a list of numbers
    return repr(sum(t for t in terms if t is not None))


# --- a detector trainer's progress table: ultralytics YOLOv3/v5/v7/v8+ and their forks -----------
# "      Epoch    GPU_mem   box_loss   obj_loss   cls_loss  Instances       Size" (older: "Epoch gpu_mem
# box obj cls labels img_size", "Epoch gpu_mem GIoU obj cls total targets img_size"), then a row per bar
# refresh: "      1/99      2.64G        nan        nan        nan          4        416: 100%|███| 7/7 [...]".
# The loss columns are the parts of the loss (their sum is the loss; "total" when printed); the epoch
# cell counts "e/E"; the memory cell has a unit; a tqdm bar follows the last cell.
_PROGRESS_PART = re.compile(r"[A-Za-z][A-Za-z0-9]{0,20}_loss|box|obj|cls|giou|seg|dfl|kobj|pose|total", re.IGNORECASE)
_MEM_CELL = re.compile(r"[\d.]+[KMG]B?")
_BATCH_CELL = re.compile(r"\d{1,6}/\d{1,6}")
_PROGRESS_CELL = re.compile(r"\d{1,6}/\d{1,6}|[\d.]+[KMG]B?|[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)",
                            re.IGNORECASE)


def _progress_header(m: re.Match[str], seg: Segment) -> bool:
    words = seg.body.split()
    roles: list[str | None] = []
    for w in words:
        low = w.casefold()
        roles.append("epoch" if low == "epoch" else ("total" if low in ("total", "total_loss") else
                     "part" if _PROGRESS_PART.fullmatch(w) else None))
    if len(words) <= 64 and roles[0] == "epoch" and roles.count("part") >= 2:
        seg.file.progress_cols = tuple(f"{r}:{w.casefold()}" if r == "part" else r for r, w in zip(roles, words, strict=True))
        seg.file.progress_line = seg.source.line
    return False


def _half_unit(cell: str) -> float:
    """Half a unit in the last printed digit of a decimal cell ("0.05444" → 5e-6, "115" → 0.5):
    how far its printed value may be from the value it rounds."""
    mant, _, exp = cell.casefold().partition("e")
    digits = len(mant.partition(".")[2])
    return 0.5 * 10.0 ** (int(exp or 0) - digits)


def _total_at(cells: list[str]) -> int | None:
    """The cell, after two or more loss parts from ``cells[2]`` on, whose value is their sum to
    within the rounding of the printed cells (``_half_unit``): the row's "total" column. Versions
    that print a total print it right after its parts ("x y w h conf cls total nTargets time",
    YOLOv3; "box obj cls total labels img_size", YOLOv5 / YOLOv7)."""
    vals: list[float] = []
    slack = 0.0
    for k in range(2, len(cells)):
        cell = cells[k].rstrip(":")
        v = parse_number(cell) if _PROGRESS_CELL.fullmatch(cell) and "/" not in cell else None
        if v is None or not math.isfinite(v):
            return None
        if len(vals) >= 2 and abs(v - math.fsum(vals)) <= slack + _half_unit(cell):
            return k
        vals.append(v)
        slack += _half_unit(cell)
    return None


def _headerless_cols(cells: list[str]) -> tuple[str | None, ...] | None:
    """The columns of a progress row pasted without its header, from the layout every version
    prints: the epoch cell, the memory cell, the loss parts (decimals or nan/inf, "%.4g"), then the
    first whole number (the label / instance count), the image size and the validation metrics.
    A part that is the sum of the parts before it is the "total" column, not one more part. The
    first versions (ultralytics/yolov3, 2019: "Epoch Batch x y w h conf cls total nTargets time",
    "%10.3g" cells) print the batch "i/N" where the memory is, and a total of 100 or more prints as
    a whole number: those rows are read only when a cell adds up the parts before it."""
    if len(cells) < 6 or "/" not in cells[0]:
        return None
    total = _total_at(cells)
    if _BATCH_CELL.fullmatch(cells[1]):
        if total is None:
            return None
        return ("epoch", None, *(["part:headerless"] * (total - 2)), "total", *([None] * (len(cells) - total - 1)))
    if not _MEM_CELL.fullmatch(cells[1]):
        return None
    n = 2
    while n < len(cells) and not cells[n].rstrip(":").isdigit():
        n += 1
    if n - 2 < 2 or n == len(cells):
        return None
    if total is not None and total < n:
        return ("epoch", None, *(["part:headerless"] * (total - 2)), "total", *([None] * (len(cells) - total - 1)))
    return ("epoch", None, *(["part:headerless"] * (n - 2)), *([None] * (len(cells) - n)))


def _progress_row(m: re.Match[str], seg: Segment) -> bool:
    cols, last = seg.file.progress_cols, seg.file.progress_line
    body = seg.body.split(": ", 1)[0] if ": " in seg.body else seg.body  # the bar after the last cell
    cells = body.split()
    if cols is None or last is None or not 0 < seg.source.line - last <= PLAIN_TABLE_GAP:
        # no header above (an excerpt of rows, or YOLOv7's results rows): the layout tells
        cols = _headerless_cols(cells)
        if cols is None:
            return False
    if len(cells) != len(cols) or not all(_PROGRESS_CELL.fullmatch(c.rstrip(":")) for c in cells):
        return False
    values: dict[str, float] = {}
    parts: list[float] = []
    for role, cell in zip(cols, cells, strict=True):
        cell = cell.rstrip(":")
        if role == "epoch":
            values["epoch"] = float(cell.split("/", 1)[0])
        elif role is not None and (v := parse_number(cell)) is not None:
            if role == "total":
                values["loss"] = v
            else:
                parts.append(v)
    if "loss" not in values:
        if not parts:
            return False
        values["loss"] = (math.fsum(parts) if all(map(math.isfinite, parts))
                          else math.nan if any(map(math.isnan, parts)) else next(v for v in parts if math.isinf(v)))
    seg.file.progress_line = seg.source.line
    if cols[1] is None and "total" in cols and _BATCH_CELL.fullmatch(cells[1]):
        _running_mean(seg, values, int(cells[1].split("/", 1)[0]), cells[cols.index("total")].rstrip(":"))
    return _emit(seg, values, "local")


def _running_mean(seg: Segment, values: dict[str, float], batch: int, cell: str) -> None:
    """The first ultralytics/yolov3 rows print, at batch i of an epoch, the running mean of the
    epoch's i + 1 batch losses ("# Running epoch-means of tracked metrics": ``(mloss * i + loss) /
    (i + 1)``, train.py of ultralytics/yolov3 and its forks), three significant digits. Two rows
    of one epoch give the mean of the batches between them: ``((i + 1) m_i - (p + 1) m_p) / (i -
    p)``. Its lowest value the printed rounding allows is kept as ``batches_low``, the earlier
    row's mean as ``mean_before`` (detect judges the pair: a jump of the running mean from 113 to
    249 at batch 97 is a batch whose loss was over 13 000). Rows that imply batches averaging
    below zero are no running mean of losses: from then on the file's rows are not paired."""
    mean = values["loss"]
    key = (values["epoch"], seg.rank)
    values["epoch_iter"] = float(batch)
    prev = getattr(seg.file, "progress_mean", None)  # (a FileState pickled by an older version lacks it)
    unit = _half_unit(cell)
    seg.file.progress_mean = (key, batch, mean, unit) if math.isfinite(mean) else None
    if prev is None or prev[0] != key or not prev[1] < batch or not math.isfinite(mean):
        return
    _, p, before, before_unit = prev
    span = batch - p
    since = ((batch + 1) * mean - (p + 1) * before) / span
    slack = ((batch + 1) * unit + (p + 1) * before_unit) / span
    if since + slack < 0 or getattr(seg.file, "progress_not_mean", False):
        # batches whose losses averaged below zero, whatever the rounding: these rows are no running
        # mean of losses (a fork printing each batch's own loss in this layout); none is judged so
        seg.file.progress_not_mean = True
        return
    values["batches_low"] = since - slack
    values["mean_before"] = before


# --- Darknet (pjreddie, AlexeyAB: YOLO v2-v4) ------------------------------------------------
# " 182: 933.341797, 780.749146 avg loss, 0.000000 rate, 3.17 seconds, 11136 images, ..." (AlexeyAB)
# and " 2677: 0.52, 0.61 avg, 0.001000 rate, ..." (pjreddie): the batch's loss, then the running
# average the README tells users to watch ("nan values for avg (loss) ... training goes wrong")
_DARKNET = re.compile(rf"^\s*(?P<step>\d+): (?P<cur>{_NUM}), (?P<avg>{_NUM}) avg(?: loss)?, (?P<lr>{_NUM}) rate\b")


def _darknet(m: re.Match[str], seg: Segment) -> bool:
    dm = _DARKNET.search(seg.body)
    if not dm:
        return False
    avg, lr = parse_number(dm.group("avg")), parse_number(dm.group("lr"))
    if avg is None:
        return False
    values = {"step": float(dm.group("step")), "loss": avg}
    if lr is not None:
        values["lr"] = lr
    return _emit(seg, values, "local")


# --- pytorch-yolo2's RegionLoss (marvis; singleshotpose and the many forks keep its print) ----
# "371: nGT 19, recall 13, proposals 0, loss: x 3.118402, y 3.105752, w nan, h nan, conf 164.831421,
# cls 83.258507, total nan": the images seen so far, then the loss parts and their total (forks add
# parts of their own: "class_contrast 0.000000", corpus holdout18 h18a-010)
_REGION = re.compile(rf"^\s*(?P<seen>\d+): nGT \d+, recall \d+,[^:]{{0,80}}? loss: (?:[a-z_]+ (?:{_NUM}), ){{1,12}}total (?P<total>{_NUM})")


def _region(m: re.Match[str], seg: Segment) -> bool:
    rm = _REGION.search(seg.body)
    total = parse_number(rm.group("total")) if rm else None
    if rm is None or total is None:
        return False
    return _emit(seg, {"step": float(rm.group("seen")), "loss": total}, "local")


# --- a key/value table of an RL logger: rllab / rlkit / garage ``dump_tabular`` (tabulate's plain format) ----
# "trainer/QF1 Loss                              1.35779e+19": each row a statistic of its own (QF1, QF2 and
# policy losses, Q predictions, returns), the key and the value far apart. Rows of different losses make
# no series of one loss, so a row is read only when its value says something alone: a loss past any
# objective a run trains (a critic's bootstrapped values blown up), the ``ABSURD_LOSS`` of the spike rules
TABULAR_ABSURD = 1e12  # detect.ABSURD_LOSS (the parsers sit below detect; tests/detectors/test_tabular_loss.py checks)
_TABULAR_LOSS = re.compile(r"[Ll]oss {2,}(?P<v>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*$")


def _tabular_loss(m: re.Match[str], seg: Segment) -> bool:
    tm = _TABULAR_LOSS.search(seg.body)
    v = parse_number(tm.group("v")) if tm else None
    if v is None or not math.isfinite(v) or abs(v) < TABULAR_ABSURD:
        return False
    return _emit(seg, {"loss": v}, "local")


# --- YOLACT (dbolya/yolact, yolact_edge and the many forks that keep its train.py print) ----------
# "[  0]     880 || B: 6.110 | C: 2.926 | M: 4.701 | S: 0.337 | T: 14.074 || ETA: 1 day, 17:41:34 || timer: 0.167":
# the epoch, the iteration, each loss part's moving average under its one- or two-letter label (B box,
# C class, M mask, S semantic, I mask IoU, ...) and T, their total, the loss to watch
# (print(('[%3d] %7d ||' + (' %s: %.3f |' * len(losses)) + ' T: %.3f || ETA: %s || timer: %.3f') % ...))
_YOLACT = re.compile(rf"^\s*(?:\[\s*(?P<ep>\d{{1,6}})(?:\|\s*\d{{1,6}})?\])?\s*(?P<it>\d{{1,9}}) \|\|(?: [A-Za-z][\w-]{{0,20}}: (?:{_NUM}) \|)+"
                     rf" T: (?P<t>{_NUM}) \|\|")


def _yolact(m: re.Match[str], seg: Segment) -> bool:
    ym = _YOLACT.search(seg.body)
    total = parse_number(ym.group("t")) if ym else None
    if ym is None or total is None:
        return False
    values = {"step": float(ym.group("it")), "loss": total}
    if ym.group("ep") is not None:
        values["epoch"] = float(ym.group("ep"))
    return _emit(seg, values, "local")


# --- a bracketed group of loss parts: DeNA/PyTorch_YOLOv3's train.py and its forks (ASFF, Gaussian
# YOLOv3): "[Iter 100/500000] [lr 0.000100] [Losses: xy 8.24, wh 3.11, conf 22.38, cls 40.11, total 36.86,
# imgsize 608]", ASFF's "[Epoch 0/300][Iter 340/51][lr 0.002370][Loss: anchor 6.53, iou 7.29, l1 24.28,
# conf 20.55, cls 31.43, imgsize 320, time: 10.53]": the parts' total (their sum when none is printed)
_LOSS_GROUP = re.compile(r"\[Loss(?:es)?: (?P<body>[^\]]{1,400})\]")
_GROUP_PART = re.compile(rf"(?P<k>[A-Za-z][A-Za-z0-9_]{{0,30}}):? (?P<v>{_NUM})(?=,|$)")
_GROUP_NOT_LOSS = re.compile(r"(?i)(?:img_?)?size|time|lr|eta|speed|mem(?:ory)?|fps|iter|epoch|batch")
_GROUP_ITER = re.compile(r"\[Iter (\d{1,9})/\d{1,9}\]")
_GROUP_EPOCH = re.compile(r"\[Epoch (\d{1,6})/\d{1,6}\]")


def _loss_group(m: re.Match[str], seg: Segment) -> bool:
    gm = _LOSS_GROUP.search(seg.body)
    if gm is None:
        return False
    parts: dict[str, float] = {}
    for pm in _GROUP_PART.finditer(gm.group("body")):
        k, v = pm.group("k"), parse_number(pm.group("v"))
        if v is not None and not _GROUP_NOT_LOSS.fullmatch(k) and k not in parts:
            parts[k] = v
    if len(parts) < 2:
        return False
    total = parts.get("total")
    values: dict[str, float] = {"loss": total if total is not None else sum_of_parts(parts.values())}
    if (it := _GROUP_ITER.search(seg.body)) is not None:
        values["step"] = float(it.group(1))
    if (ep := _GROUP_EPOCH.search(seg.body)) is not None:
        values["epoch"] = float(ep.group(1))
    return _emit(seg, values, "local")


# --- a loss under its initial, "L: 0.0058" ------------------------------------------------------
# Loops that print the loss, or its parts, under one capital letter after a progress counter:
# FaceBoxes.PyTorch's train.py and the SSD-lineage face detectors built on it ("Epoch:1/300 ||
# Epochiter: 1/403 || Iter: 1/120900 || L: 5.1744 C: 20.3799 || LR: 0.001 ...": L the localisation
# and C the confidence loss, some forks add T, their total) and SparK's ImageNet fine-tuning
# (keyu-tian/SparK downstream_imagenet/main.py: "[ep6 it156/313]    L: 0.0058    Acc: 13.28    lr:
# ..."). The loss is T when printed, else L + C, else L. Read only as a fraction (both print
# "{:.4f}") or a non-finite value, after an "a/b" counter on the same line: "L: 2048" (a sequence
# length) is no loss.
_ABBREV_LOSS = re.compile(
    rf"(?:^|[\s|\]])L: {{0,4}}(?P<l>{_FRAC})(?: {{1,8}}C: {{0,4}}(?P<c>{_FRAC}))?(?: {{1,8}}T: {{0,4}}(?P<t>{_FRAC}))?(?=\s|\||$)")
_ABBREV_COUNTER = re.compile(r"\d/\d")
_ABBREV_ITER = re.compile(r"\bIter: {0,4}(\d{1,9})/\d{1,9}")
_ABBREV_EPOCH = re.compile(r"(?:\bEpoch: {0,4}|\[ep)(\d{1,6})\b")


def _abbrev_loss(m: re.Match[str], seg: Segment) -> bool:
    body = seg.body
    am = _ABBREV_LOSS.search(body)
    if am is None or _ABBREV_COUNTER.search(body, 0, am.start()) is None:
        return False
    parts = [v for g in ("l", "c") if (v := parse_number(am.group(g) or "")) is not None]
    total = parse_number(am.group("t")) if am.group("t") else None
    loss = total if total is not None else sum_of_parts(parts)
    values: dict[str, float] = {"loss": loss}
    if (it := _ABBREV_ITER.search(body)) is not None:
        values["step"] = float(it.group(1))
    if (ep := _ABBREV_EPOCH.search(body)) is not None:
        values["epoch"] = float(ep.group(1))
    return _emit(seg, values, "local")


# the start of a line, or of what follows a launcher's own per-process prefix on it (the table rules
# are searched in the raw line: their rows are numbers only, and a bare "12: " may be a step)
_LAUNCHER_PREFIX = r"^(?:\[(?:default|rank)[0-9]{1,6}\]:|\[[0-9]{1,6},[0-9]{1,6}\]<(?:stdout|stderr)>:)?"


RULES = [
    Rule("metrics.loss_group", r"\[Loss(?:es)?: [A-Za-z]", _loss_group),
    Rule("list.values", r"[0-9]\.[0-9]+, [-+]?[0-9]+\.[0-9]+, [-+]?[0-9]+\.[0-9]+, [-+]?[0-9]+\.[0-9]+, ", _value_list),
    # (not "metrics.": the pjreddie form has no metric key for the scan's noise rule to find)
    Rule("yolact.iteration", r"[0-9] \|\| [A-Za-z][A-Za-z0-9_-]{0,20}: [-+]?(?:[0-9]|nan|inf)", _yolact),
    Rule("region.loss", r"\b\d+: nGT \d+, recall \d+,", _region),
    Rule("darknet.iteration", r"\b\d+: [-+]?(?:[0-9]|nan|inf)[0-9.]*, [-+]?(?:[0-9]|nan|inf)[0-9.]* avg", _darknet),
    Rule("metrics.megatron", r"iteration\s+\d+/\s*\d+ \|", _megatron),
    Rule("metrics.deepspeed", r"step=\d+, skipped=\d+|steps: \d+ loss: ", _deepspeed),
    Rule("metrics.basicsr", r"(?:\[|<)epoch: {0,8}[0-9]{1,6}, iter: {0,12}[0-9][0-9,]{0,15}, lr:", _basicsr),
    Rule("metrics.marian", r"\bEp\. [0-9]{1,6} : Up\. [0-9]{1,12} : Sen\. [0-9,]{1,20} : Cost ", _marian),
    Rule(FIELDS_RULE, _TRIGGER, _fields),
    # (not "metrics.": the scan's noise rule would drop it for lacking a metric key)
    Rule("abbrev.loss", r"(?:^|[ \t|\]])L: {0,4}[-+]?(?:[0-9]*\.[0-9]|nan|NaN|NAN|inf|Inf|INF)", _abbrev_loss),
    # (a huge value only: "e+12" and up, or 13+ digits before the point)
    Rule("table.tabular_loss", r"[Ll]oss {2,}[-+]?(?:[0-9.]+[eE]\+?(?:1[2-9]|[2-9][0-9]|[1-9][0-9]{2})|[0-9]{13})", _tabular_loss),
    Rule("clipping.report", r"grad-norm quartiles|Scaling gradients by|scaling down gradients \(L2 norm"
         # (the second half of a wrapped report: read only right after its first half)
         r"|threshold=[0-9]", _clip_report),
    # not "metrics.": the scan's noise rule would drop it for lacking a metric key
    Rule("tensor.scalar", r"tensor\([-+]?(?:[0-9]|nan|inf)[^,()]*, ?device='", _tensor),
    Rule("columns.clock_row", r"(?i:epoch|step|iter|iteration), ?[0-9]{1,9}, ?[-+]?(?:[0-9]|\.[0-9]|nan|inf)", _clock_row),
    Rule("bare.nan", r"^[ \t]*[-+]?(?:[Nn][Aa][Nn]|[Ii][Nn][Ff])[ \t]*$", _bare_nan),
    Rule("bare.value", r"^[ \t]*[-+]?(?:[0-9]+\.[0-9]+|[0-9]+(?:\.[0-9]*)?[eE][-+]?[0-9]+)[ \t]*\r?$", _bare_value, on_raw=True),
    # (alternations, not classes, of the box characters: the scan matches bytes, and a class of
    # multi-byte characters would be a class of their bytes)
    # (or a table printed without its outer pipes, its counter first: "epoch |  total |  recon | lr")
    Rule("table.header", r"(?:│|┃|\|) *(?i:step|steps|iter|iteration|epoch|rank|loss|(?:train|mean|avg)[_ ]loss|grad[_ ]?norm|gnorm|lr) *(?:│|┃|\|)"
                         r"|^ *(?i:step|steps|iter|iteration|epoch) +(?:│|┃|\|) +[A-Za-z]",
         _table_header),
    Rule("table.row", r"(?:│|┃|\|) *[-+]?(?:[0-9]|nan|inf)[0-9.eE+ -]{0,30}(?:│|┃|\|) *[-+]?(?:[0-9]|nan|inf)", _table_row),
    # (no spaces in a header cell: "Epoch 1, Batch 5, Loss 2.3" is a metric line, not a header)
    Rule("table.csv_header", r"^(?:[A-Za-z0-9_/.-]{1,60},)*[A-Za-z0-9_/.-]{0,30}(?i:loss|grad_norm|gnorm)[A-Za-z0-9_/.-]{0,30}"
                             r"(?:,[A-Za-z0-9_/.-]{1,60})*\r?$", _csv_header, on_raw=True),
    # (a row may lead with its own clock: a script's "time,step,loss" log, "19:45:02.565,125,...")
    Rule("table.csv_row", r"^(?:(?:[0-9]{4}-[0-9]{2}-[0-9]{2}[T ])?[0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?(?:[.,][0-9]{1,9})?Z?,)?"
                          r"[-+]?(?:[0-9]|nan|inf)[0-9.eE+-]*(?:,(?:[-+]?[0-9.]+(?:[eE][-+]?[0-9]+)?|[Nn]a[Nn]|nan|[-+]?inf)?)+\r?$",
         _csv_row, on_raw=True),
    # (a row of text: numbers and a clock first, then a word)
    Rule("table.csv_text_row", r"^(?:(?:[0-9]{4}-[0-9]{2}-[0-9]{2}[T ])?[0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?(?:[.,][0-9]{1,9})?Z?,)?"
                               r"[0-9]{1,12},(?:[-+]?[0-9.]{1,25},){0,8}[A-Za-z]", _csv_text_row, on_raw=True),
    # a plain table's header starts with its clock column; its rows are numbers only
    # (or with the process's column first: "rank\tstep\tloss\tacc", a per-rank TSV)
    # (behind a launcher's own prefix too: torchrun's "[default0]:" / "[rank0]:", mpirun's "[1,0]<stdout>:")
    Rule("table.plain_header", _LAUNCHER_PREFIX + r"[ \t]*(?i:rank[ \t]+)?(?i:epoch|epochs|step|steps|iter|iteration)[ \t]+[A-Za-z]", _plain_header,
         on_raw=True),
    # (pandas prints a missing or non-finite cell "NaN")
    # (a short word is a flag column the header names: "clip  yes", "best  *"; a lone marker:
    # skorch's "+" under ``cp``)
    # (fastai's table ends in its "time" column: "00:14", "01:02:09")
    Rule("table.plain_row", _LAUNCHER_PREFIX + r"[ \t]*[-+]?(?:[0-9]|nan|inf)[0-9.eE+-]*(?:[ \t]+(?:[0-9]{1,3}:[0-9]{2}(?::[0-9]{2})?"
                            r"|[-+]?(?:[0-9]|[Nn]a[Nn]|inf)[0-9.eE+-]*"
                            r"|\[[0-9naif.eE+, \t-]{0,400}\]|[A-Za-z]{1,5}\b|[+*]))+[ \t]*\r?$",
         _plain_row, on_raw=True),
    Rule("table.progress_header", r"^[ \t]*Epoch[ \t]+(?i:gpu_mem)[ \t]+[A-Za-z]", _progress_header, on_raw=True),
    Rule(PROGRESS_ROW_RULE, r"^[ \t]*[0-9]{1,6}/[0-9]{1,6}[ \t]+(?:[0-9.]+[KMG]B?|[0-9]{1,6}/[0-9]{1,6})[ \t]+[-+]?(?:[0-9]|nan|inf)",
         _progress_row,
         on_raw=True),
    Rule("columns.bare", r"^[ \t]{0,8}(?:[0-9]{1,9}[:,]?[ \t]+){1,3}[-+]?(?:[0-9]+\.[0-9]*|[Nn]a[Nn]|[Ii]nf)", _columns,
         on_raw=True),
]
