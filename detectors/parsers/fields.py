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
from collections.abc import Iterable

__all__ = ["CANONICAL", "METRIC_KEYS", "SYNONYMS", "extract", "extract_records", "parse_number", "sum_of_parts"]

# canonical key → the spellings that mean it (matched case-insensitively, whole words)
SYNONYMS: dict[str, tuple[str, ...]] = {
    "step": ("global_step", "global_steps", "global step", "globalstep", "step", "steps", "num_updates", "update", "updates",
             "iteration", "iterations", "iter", "iters", "it",
             # the same in the languages training scripts are written in (Chinese, Japanese, Russian):
             # "步数: 120", "ステップ 120", "шаг 120/600" (Chinese "第 120 步" puts the number first: _NTH_STEP)
             "步数", "迭代", "ステップ", "шаг", "итерация"),
    "loss": ("lm loss", "lm_loss", "lm-loss", "train_loss_step", "train_loss", "train loss", "training loss",
             "training_loss", "total_loss", "total loss", "loss_step", "reduced_train_loss", "avg_loss",
             "avg loss", "average_loss", "average loss", "mean_loss",
             # the loss of the step's own minibatch: "Minibatch loss at step 500: 1.23" (the TensorFlow
             # courses' notMNIST loop); not AllenNLP's "batch_loss", printed beside its running "loss"
             "minibatch_loss", "minibatch loss", "loss_value", "cross_entropy", "cross entropy", "cross-entropy", "crossentropy", "xent", "all_loss", "loss_total", "overall_loss", "tot_loss", "sum_loss", "loss_sum", "full_loss", "loss/train/total", "loss/train", "loss/total", "loss",
             # the loss per target token (NVIDIA DeepLearningExamples' GNMT: "Loss/tok 9.6782 (10.2120)")
             "loss/tok", "loss/token", "loss per token", "loss_per_token", "loss_per_tok",
             "cost",  # the loss under its optimisation name: Marian's "Cost 87.32", Theano-era "Cost  25.91"
             "l1",  # a loss named by its norm: EDSR's "[L1: 5.96]", FlowNet2's "L1: 1120820.6, EPE: ..."
             # a likelihood model's loss, its negative log-likelihood, per dimension in bits (flows,
             # VAEs, autoregressive image models: SurVAE's "Bits/dim: 9.041", Glow's "bpd")
             "bits/dim", "bits per dim", "bits_per_dim", "bpd", "nll",
             # (the negative ELBO a VAE minimises, printed as such)
             "neg_elbo", "nelbo", "negative_elbo",
             # Chinese, Japanese and Russian scripts' own words for the (training) loss: "损失: 69.25",
             # "训练损失 nan", "損失: 0.52", "потери 40.74", "лосс: 2.3"
             "训练损失", "损失值", "损失", "損失", "потери", "потеря", "лосс"),
    "grad_norm": ("grad_norm", "grad norm", "grad-norm", "gradnorm", "gnorm", "total_norm", "gradient_norm",
                  "gradient norm", "grad_norm_total",
                  # (demucs' solver, and SCNet built on it: "Train Summary | Epoch 3 | Loss=0.1673 | Grad=inf")
                  "grad",
                  "梯度范数", "勾配ノルム", "норма градиента"),
    # a rank's own gradient norm before the all-reduce, and the reduced one, printed as such (a loop
    # that logs both, or rank 0's guard on the reduced norm): the own one is the rank's signal
    "local_grad_norm": ("local_grad_norm", "local grad norm", "local_gnorm", "local_gradient_norm"),
    # a rank's own loss printed beside the all-reduced one ("local_loss 0.8190 | loss nan"): the own
    # one is the rank's signal, the reduced one is every rank's alike
    "local_loss": ("local_loss", "local loss"),
    "global_grad_norm": ("global_grad_norm", "global grad norm", "global_gnorm", "global_gradient_norm",
                         "reduced_grad_norm", "allreduced_grad_norm", "all_reduced_grad_norm"),
    "loss_scale": ("lg_loss_scale", "log2_loss_scale", "loss_scale", "loss scale", "loss-scale", "lossscale",
                   "grad_scale", "grad scale",
                   "grad_scaler_scale", "amp_scaler", "cur_scale", "scaler_scale", "amp_scale", "scale"),
    # the loss smoothed over steps (an exponential or running average): the loss a line shows when it
    # prints no raw one ("  step |   ema_loss |  lr", "running_loss=2.31")
    "smoothed_loss": ("ema_loss", "loss_ema", "ema loss", "smoothed_loss", "smoothed loss", "smooth_loss",
                      "running_loss", "running loss", "moving_avg_loss", "loss_running"),
    "lr": ("learning_rate", "learning rate", "lr", "学习率", "学習率", "скорость обучения"),
    # how many steps the loss scaler has thrown away so far, a running count (DeepSpeed's "skipped=4",
    # a loop's "overflows = 3/33", "num_overflows: 12"): the rate it grows at is the overflow rate
    "skipped": ("skipped", "skipped_steps", "skipped steps", "skipped_updates", "num_skipped", "skip_count",
                "overflows", "num_overflows", "overflow_count", "overflow count", "n_overflows",
                # (the steps whose gradients the scaler found inf in: torch's and Paddle's GradScaler call the
                # flag found_inf, and a loop that counts them logs "found_inf_steps: 28")
                "found_inf_steps", "found inf steps",
                "пропущено шагов"),
    "epoch": ("epoch",),
    # a run's own reference: the lowest training loss it has seen ("Best Loss: 2.27")
    "best_loss": ("best_loss", "best loss", "min_loss", "min loss", "lowest loss", "lowest_loss"),
    # (Kaldi-lineage speech toolkits call the held-out set "cv": WeNet's "cv_loss", CAT's "mean_cv_loss")
    "eval_loss": ("eval_loss", "val_loss", "valid_loss", "validation_loss", "validation loss", "test_loss",
                  "cv_loss", "cv loss", "mean_cv_loss",
                  "验证损失", "検証損失", "валидационные потери"),
    # an error measure of a regression model: the held-out loss when the line is an evaluation's
    # ("val/rmsle nan", "[R2] Epoch 3 validation: msle nan"), never read as the training loss
    "error": ("mse", "msle", "rmse", "rmsle", "mae"),
    # how many held-out samples an evaluation averaged over: a mean over none is NaN by definition
    # (an empty validation shard: "{'val_loss': nan, 'val_n': 0}"), not a model gone non-finite
    "eval_count": ("val_n", "val_count", "val_samples", "num_val_samples", "n_val", "valid_n", "valid_samples",
                   "eval_n", "eval_count", "eval_samples", "num_eval_samples", "n_eval"),
    # a log-likelihood the run maximises (Kaldi/EESEN's CTC "Obj(log[Pzx]) = -8.45"): read as the
    # loss it stands for, its negative (see _close)
    "loglik": ("log_likelihood", "log likelihood", "log-likelihood", "loglikelihood", "loglik", "obj(log[pzx])",
               "mean_loglik", "avg_loglik", "mean_log_likelihood", "avg_log_likelihood",
               # a VAE's evidence lower bound, the log-likelihood it maximises in its place
               # ("elbo=-39.85 recon=39.73 kl=0.12"): its negative is the loss
               "elbo", "train_elbo", "mean_elbo", "avg_elbo"),
    # a perplexity is exp(cross-entropy): read as the loss it stands for (ln ppl, see _records)
    "ppl": ("ppl", "perplexity", "train_ppl", "train_perplexity"),
    "eval_ppl": ("validation perplexity", "validation ppl", "valid perplexity", "valid ppl", "val ppl",
                 "eval ppl", "test ppl", "dev ppl", "test avg ppl", "valid avg ppl", "val avg ppl"),
}
CANONICAL: dict[str, str] = {s: k for k, spellings in SYNONYMS.items() for s in spellings}
METRIC_KEYS = frozenset({"loss", "grad_norm", "loss_scale", "eval_loss", "smoothed_loss"})

# PaddleOCR/PaddleDetection format with "{:x<6f}", which pads "nan" to "nanxxx"
# Python's zero-padded formats ("{:07.5f}") pad "nan" to "0000nan": tried before the plain numbers
# (a whole number with thousands separators, "195,153", "1,048,576": OLMo's "train/Perplexity=195,153";
# never a leading 0, "0,123" is no thousands, and a comma before a key, "loss=1,lr=0.1", is a separator)
_NUM = (r"[-+]?0{0,12}(?:nan|inf(?:inity)?)(?:x{1,8})?(?![a-z])|[-+]?[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?(?![\d.,])"
        r"|[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_THOUSANDS = re.compile(r"[-+]?[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?")
# the key alternatives: longest first so "loss scale" wins over "loss"; a namespace such as
# "train/", "trainer.", "losses/" (ignored) or "eval/", "val_" (→ eval) may precede the key
_SEP = re.compile(r"[ _-]")
_LOOKUP: dict[str, str] = {_SEP.sub(" ", s): k for s, k in CANONICAL.items()}
_ALTS = "|".join("[ _-]".join(map(re.escape, s.split(" "))) for s in sorted(_LOOKUP, key=len, reverse=True))
# MXNet's Speedometer and fit() join the namespace with a hyphen: "Train-cross-entropy=nan",
# "Validation-accuracy=0.51", "Train-RCNNL1Loss=nan"
_EVAL_NS = r"(?P<evns>eval|val|valid|validation|test)[/._-]"
# (Chainer's reporter names what its optimizer's target reports "main/": "main/loss", and its
# Evaluator's "validation/main/loss", in ESPnet1's and every Chainer example's PrintReport and log)
_NS = r"(?:(?:train|training|trainer|losses?|metrics?|optim|optimizer|actor|critic)[/._-]|main/)"
# a loss *component*: ``lap_loss``, ``bbox loss``, ``loss_rpn_cls``, MXNet's glued ``RPNL1Loss``
# (any key the table does not know that names a part of the loss); tried after the known keys at
# every position
# (and "loss" inside an underscore-joined name: TensorFlowTTS's "train_mel_loss_before", EDVR's
# "L1_Charbonnier_loss_color")
_COMP = (r"[A-Za-z][A-Za-z0-9_]{0,40}[ _-][Ll]oss|[A-Za-z][A-Za-z0-9]{0,40}(?:_[A-Za-z0-9]{1,20}){0,4}_[Ll]oss_[a-z]{1,12}"
         # (never the loss scale's own name, "loss_scaling=32768.0": no part of the loss)
         r"|[Ll]oss[_-](?![Ss]cal)[A-Za-z][A-Za-z0-9_]{0,40}|[A-Za-z][A-Za-z0-9]{0,40}[a-z0-9]Loss"
         # (a CamelCase term after the word: "LossTrajs: 1.48", "LossKL"; never "LossScale")
         r"|(?-i:[Ll]oss(?!Scal)[A-Z][A-Za-z0-9]{0,30})")

def _field(key: str) -> re.Pattern[str]:
    """The key/value pattern around ``key`` (the alternation that names the key and, when it
    can, a loss component)."""
    return re.compile(
        # a key starts a word; "1/Step:" is a tqdm counter glued to the next update's text, not a path
        rf"(?:(?<![\w/.-])|(?<=\d/))(?:{_EVAL_NS}(?:main/)?|{_NS})?{key}"
        # how the value was averaged, in parentheses after the key ("loss(avg50) 2.2671", "loss (ema)
        # 0.41"): the same metric, as a header cell's qualifier is (metrics._CELL_QUALIFIER)
        r"(?:\s?\((?:avg|mean|ema|ma|smooth|smoothed|running|moving)[a-z_ ]{0,8}\d{0,6}\))?"
        # (or which value of the norm it is: "grad_norm (pre-clip) 8.474", the norm before clipping)
        r"(?:\s?\((?:pre-?clip(?:ping)?|before clip(?:ping)?|unclipped|raw)\))?"
        r"(?P<den>/(?:(?:max|total|num)_?(?:steps?|iters?|iterations?)|total))?"
        # "Average loss at step 2000: 4.37" (TensorFlow's word2vec tutorial and its many copies),
        # "Minibatch loss at step 500: 1.23", "loss at batch 5 = tensor(17.47, ...)": the counter
        # the value was taken at, between the key and its value
        r"(?:\s{1,4}(?:at|@)\s{1,4}(?P<atk>step|batch|iter|iteration|epoch|update)\s{0,4}(?P<atn>\d{1,9})(?![\d.]))?"
        # the key ends at a word boundary (loss_scale is not loss), then a separator: ":" "=" "|"
        # "is" or spaces; or "_" when a whole number token follows (WaveGlow's "loss_-4.0655")
        # (and the full-width colon of Chinese and Japanese text: "损失：69.25")
        r"(?:(?![\w-])['\"\]]?(?:\s{0,16}(?:[:=|]|：|\bis\b)\s{0,16}|\s{1,12})|_(?=[-+]?\.?\d[\d.eE+-]{0,30}(?:[\s,;|]|$)))"
        # "Train loss 12001 0.166141" (NVIDIA Tacotron2/WaveGlow): the iteration between key and value
        r"(?:(?P<inner>\d{1,9})\s{1,4}(?=[-+]?\d*\.\d|nan|inf))?"
        # "loss: total: nan, xy: 11.83, wh: 1146.7" (YOLOv3-TF): the key's total, its parts after it
        r"(?:total\s{0,4}[:=]\s{0,4})?"
        # (a percentage is a progress, not a value: "Train step: 45%"; nor is a duration: "cost 278.35s")
        rf"['\"]?(?:tensor\(\[?|\[\s{{0,8}})?(?P<v>{_NUM})(?![\d.]*(?:\s?%|s\b))(?:\s{{0,2}}/\s{{0,2}}(?P<tot>\d+))?",
        re.IGNORECASE,
    )


_FIELD = _field(rf"(?:(?P<key>{_ALTS})|(?P<comp>{_COMP}))")
# the same without the component alternative (tried at every word start, it is most of the
# cost): used when no "loss" on the line can be part of a component (see _may_have_parts)
_FIELD_NO_PARTS = _field(rf"(?P<key>{_ALTS})(?P<comp>(?!))?")


def parse_number(text: str) -> float | None:
    t = text.strip().strip("'\"").lower().rstrip("x")
    if t.lstrip("+-").startswith("0"):  # "0000nan": a zero-padded non-finite value
        rest = t.lstrip("+-").lstrip("0")
        if rest.startswith(("nan", "inf")):
            t = t[:len(t) - len(t.lstrip("+-"))] + rest
    if "," in t and _THOUSANDS.fullmatch(t):
        t = t.replace(",", "")
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
    return extract_records(text)[0]


# Chinese's ordinal step: "第 120 步" / "第 120/600 步" (the number before the word), read as "step 120"
_NTH_STEP = re.compile(r"第\s{0,2}(\d{1,9})(?:\s{0,2}/\s{0,2}\d{1,9})?\s{0,2}步(?!数)")


def extract_records(text: str) -> list[dict[str, float]]:
    """The records of one physical line: usually one; several when tqdm's ``\r`` updates
    were glued into one line by a paste (``Step: 895. … Total loss: 0.37: 100%|▉| Step: 896.
    … Total loss: 0.35``). A new record starts where the line's first step key comes back
    with another value; each record's first occurrence of a key wins."""
    if "步" in text:
        text = _NTH_STEP.sub(r"step \1", text)
    return _records(text, _FIELD if _may_have_parts(text) else _FIELD_NO_PARTS)


def _records(text: str, rx: re.Pattern[str]) -> list[dict[str, float]]:
    # findall's tuples instead of match objects (the hot path of a diagnosis)
    gi = rx.groupindex
    i_key, i_comp, i_evns, i_den = gi["key"] - 1, gi["comp"] - 1, gi["evns"] - 1, gi["den"] - 1
    i_v, i_inner = gi["v"] - 1, gi["inner"] - 1
    i_atk, i_atn = gi["atk"] - 1, gi["atn"] - 1
    records: list[dict[str, float]] = []
    out: dict[str, float] = {}
    parts: dict[str, float] = {}
    step_key: str | None = None
    for g in rx.findall(text):
        comp = g[i_comp]
        if comp:
            _component(comp, g[i_evns], g[i_den], g[i_v], parts)
            continue
        spelled = g[i_key]
        # casefold: a case-insensitive match may hold non-ASCII letters that fold to ASCII (the long s)
        found = _KEY_CACHE.get(spelled)
        if found is None:
            found = _LOOKUP.get(_SEP.sub(" ", spelled.casefold()))
            if found is None:
                continue
            if len(_KEY_CACHE) < 4096:  # case variants of hostile input must not grow it
                _KEY_CACHE[spelled] = found
        key = found
        if key == "step" and step_key is None:
            step_key = spelled
        elif (key == "step" and spelled == step_key and "step" in out and (METRIC_KEYS & out.keys() or parts or "ppl" in out)
              and (v := parse_number(g[i_v])) is not None and v != out["step"]):
            _close(out, parts)
            records.append(out)
            out, parts = {}, {}
        evns = bool(g[i_evns])
        if key in ("ppl", "eval_ppl"):
            # "ppl: 35173.75; xent: 10.47" (OpenNMT), "Validation perplexity: 493.0": kept aside,
            # the loss it stands for is set in _close when the line prints no loss of its own
            if evns:
                key = "eval_ppl"
            p = parse_number(g[i_v])
            if p is not None and (p > 0 or math.isnan(p)) and key not in out:
                out[key] = p
            continue
        if evns:
            if key not in ("loss", "error") or (key == "error" and "eval_loss" in out):
                continue  # eval/grad_norm and the like are not training signals
            key = "eval_loss"
        if key in out:
            if key == "loss" and spelled[:7].lower() == "reduced" and not math.isfinite(out["loss"]):
                # NeMo's bar: "loss=nan" (a placeholder) beside the all-reduced loss, which would
                # be NaN too if any rank's were: the reduced value is the loss
                v = parse_number(g[i_v])
                if v is not None and math.isfinite(v):
                    out["loss"] = v
            continue
        v = parse_number(g[i_v])
        if v is None:
            continue
        if g[i_atn] and key != "step":
            out.setdefault("epoch" if g[i_atk].lower() == "epoch" else "step", float(g[i_atn]))
        inner = g[i_inner]
        if inner:
            if key == "step":
                v = float(inner)  # "Step 100 0.53 s/it": the step is the integer
            else:
                out.setdefault("step", float(inner))
        if key == "step" and (not math.isfinite(v) or v < 0 or v != int(v)):
            continue  # "iter time: 0.81" is not a step counter
        if key == "loss_scale" and spelled.lower().startswith(("lg", "log2")) and math.isfinite(v):
            v = 2.0 ** max(min(v, 1000.0), -1000.0)  # OpenAI diffusion codebases log log2(scale)
        out[key] = v
    _close(out, parts)
    records.append(out)
    if len(records) > 1 and not METRIC_KEYS & records[-1].keys():
        records[-2:] = [{**records[-1], **records[-2]}]  # a step key came back without metrics
    return records


_KEY_CACHE: dict[str, str] = {}  # a key as written → its canonical name


def _may_have_parts(text: str) -> bool:
    """Could ``_COMP`` match anywhere: a "loss" with a word joined before it ("lap_loss",
    "bbox loss") or a word after it ("loss_rpn_cls")? Plain keys ("'loss': ", "| loss ")
    never need the slower pattern."""
    low = text.lower()
    i = low.find("loss")
    while i >= 0:
        after = low[i + 4:i + 11]
        if not _SCALE_AFTER.match(after):  # "loss scale" / "loss_scale" is a key of its own
            if i >= 2 and low[i - 1] in " _-" and (low[i - 2].isalnum() or low[i - 2] == "_"):
                j = i - 1
                while j > 0 and (low[j - 1].isalnum() or low[j - 1] == "_"):
                    j -= 1
                if low[j:i - 1] not in _KEY_WORDS:  # "lm loss", "train_loss" are keys, not parts
                    return True
            if after[:1] in ("_", "-") and after[1:2].isalpha():
                return True
            if text[i + 4:i + 5].isupper() and not low.startswith("scal", i + 4):
                return True  # "LossTrajs", "LossKL", KotlinDL's "lossValue"
            if i >= 2 and low[i - 1].isalnum() and (low[i - 2].isalnum() or low[i - 1].isdigit()):
                return True  # a word glued before it ("RPNL1Loss", "RCNNLogLoss")
        i = low.find("loss", i + 4)
    return False


_SCALE_AFTER = re.compile(r"[ _-]?scal")
# the words that make a known key with "loss" ("lm loss", "train_loss", "total loss" ...)
_KEY_WORDS = frozenset(s.rsplit(" ", 1)[0].rsplit(" ", 1)[-1] for s in _LOOKUP if s.endswith(" loss"))


def _close(out: dict[str, float], parts: dict[str, float]) -> None:
    own_loss = out.pop("local_loss", None)
    if own_loss is not None:
        out["loss"] = own_loss  # the rank's own loss beside the reduced one: this rank's signal
        out["own_loss"] = 1.0
    own = out.pop("local_grad_norm", None)
    if own is not None:
        out["grad_norm"] = own  # the rank's own norm beside the reduced one: this rank's signal
        out["own_grad"] = 1.0
    reduced = out.pop("global_grad_norm", None)
    if reduced is not None and "grad_norm" not in out and not METRIC_KEYS & out.keys():
        # only the reduced norm on the line: every rank's at once, no rank's own (see "reduced")
        out["grad_norm"] = reduced
        out["reduced"] = 1.0
    # a perplexity is e^(cross-entropy) (2^ in bits): its log is the loss in nats, the scale the
    # spike rules judge (a doubled loss is a squared perplexity); the training "ppl" stays as
    # printed (a perplexity beyond any vocabulary), an eval one only as its loss
    eval_ppl = out.pop("eval_ppl", None)
    if eval_ppl is not None and "eval_loss" not in out and not math.isinf(eval_ppl):
        out["eval_loss"] = math.log(eval_ppl) if eval_ppl == eval_ppl else math.nan
    smoothed = out.pop("smoothed_loss", None)
    if smoothed is not None and "loss" not in out and not parts:
        out["loss"] = smoothed  # no raw loss on the line: its smoothed one is what it shows of it
    loglik = out.pop("loglik", None)
    if loglik is not None and "loss" not in out and not parts:
        out["loss"] = -loglik  # the negative log-likelihood: the loss the objective stands for
    ppl = out.get("ppl")
    if ppl is not None and "loss" not in out and not parts and not math.isinf(ppl):
        # (an infinite perplexity is exp() overflowing: the loss is beyond 709 nats, not infinite)
        out["loss"] = math.log(ppl) if ppl == ppl else math.nan  # a NaN perplexity is a NaN loss
    if "loss" not in out and "local_loss" in parts and set(parts) <= _SCOPE_PARTS:
        # "local_loss 0.07504 | global_loss nan": the rank's own loss beside its all-reduce (not
        # two terms of one loss)
        out["loss"] = parts["local_loss"]
        return
    if "loss" not in out and parts:
        if not out and len(parts) == 1 and all(map(math.isfinite, parts.values())):
            # one finite component alone on its line ("| > loss_mel: 16.8  (17.38)"): a line of a
            # metric block printed one metric per line (Coqui, mmcv's dumps), not the loss; a
            # non-finite part still is (a NaN in any part is a NaN total)
            return
        out["loss"] = sum_of_parts(parts.values())


_SCOPE_PARTS = frozenset({"local_loss", "global_loss", "reduced_loss", "all_reduced_loss", "allreduced_loss", "world_loss",
                          "synced_loss", "gathered_loss"})
_EVAL_WORDS = frozenset({"val", "valid", "validation", "eval", "evaluation", "test", "dev"})
# settings, not values of the loss: ``loss_weight=1.0`` in a printed config, ``loss_scale_window``
_SETTING = re.compile(r"weight|scale|window|coef|factor|ratio|lambda|alpha|beta|gamma|temp|thresh|clip|margin"
                      r"|mult|eps|type|(?:^|[_ ])(?:fn|func|function)$|freq|interval|every|_w$|_lr$", re.IGNORECASE)


def _component(comp: str, evns: str, den: str, value: str, parts: dict[str, float]) -> None:
    """A loss component (``bbox loss: 51090``): kept aside; a line that prints components
    but no total (``content_loss:0.0 lap_loss:6.5e8 rec_loss:3.4e4``) gets their sum as its
    loss, so a blow-up or a NaN in any part shows in the loss."""
    name = comp.lower()
    if evns or _SEP.split(name, 1)[0] in _EVAL_WORDS or den or _SETTING.search(name):
        return
    v = parse_number(value)
    if v is not None and name not in parts:
        parts[name] = v


def sum_of_parts(parts: Iterable[float]) -> float:
    """A loss made of parts (components, a group's terms): their sum; when one is not finite, NaN
    if any is NaN, else the infinity (a non-finite part makes the total so)."""
    vals = list(parts)
    if all(map(math.isfinite, vals)):
        return math.fsum(vals)
    return math.nan if any(math.isnan(v) for v in vals) else next(v for v in vals if math.isinf(v))
