"""Preflight checks of a training config's precision settings against the GPU (pure; no I/O).

``check_config(config, kind, gpu)`` takes a parsed config (a dict: DeepSpeed JSON, HF
``TrainingArguments`` JSON/YAML, an accelerate config YAML, Megatron/fairseq arguments
turned into a dict by ``args_to_dict``, a Lightning YAML with ``trainer: precision:``) and
the GPU model (a name such as "NVIDIA A100-SXM4-80GB", or a compute capability such as
"7.0"), and returns the problems found, most severe first. An invalid value raises
``ConfigError`` naming the field.

Checks (``Problem.id``; the catalog entry it prevents in ``catalog``):
- ``fp16_and_bf16`` (error): both enabled; every framework refuses it.
- ``bf16_on_pre_ampere`` (error): bf16 on compute capability < 8.0 (unsupported, or emulated
  and slow with torch >= 2.3).
- ``fp16_no_loss_scaling`` (error): fp16 without loss scaling (a static scale of 1, Lightning
  "16-true", a whole model in half without a scaler).
- ``fp16_static_loss_scale`` (warning): fp16 with a fixed loss scale (DeepSpeed ``loss_scale``
  > 0, Megatron ``--loss-scale``): overflows and underflows are not corrected.
- ``fp16_on_ampere`` (warning): fp16 on compute capability >= 8.0, where bf16 needs no
  scaler and does not overflow.
- ``min_loss_scale_aborts`` (warning): a minimum loss scale above ``MIN_LOSS_SCALE_WARN``
  (DeepSpeed exits with "Current loss scale already at minimum", fairseq with "Minimum loss
  scale reached", Megatron keeps skipping iterations at it).
- ``nan_inf_filter_hides_nan`` (warning): HF ``logging_nan_inf_filter`` true (the default),
  so NaN/inf losses are logged as the running average instead.
- ``bf16_true_weights`` (warning): Lightning "bf16-true" (weights in bf16, no fp32 master copy).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import asdict, dataclass, field
from typing import Any

from detectors.gpus import compute_capability

__all__ = ["KINDS", "MIN_LOSS_SCALE_WARN", "ConfigError", "PrecisionSettings", "Preflight", "Problem",
           "args_to_dict", "check_config", "detect_kind", "resolve_gpu"]

KINDS = ("deepspeed", "hf_trainer", "accelerate", "megatron", "fairseq", "lightning")
MIN_LOSS_SCALE_WARN = 1.0  # DeepSpeed's and Megatron's default; anything above aborts or stalls sooner
_SEVERITY = {"error": 0, "warning": 1}


class ConfigError(ValueError):
    """A config value cannot be understood; ``field`` names it (dotted path)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"field {field!r}: {message}")
        self.field = field


@dataclass(slots=True)
class Problem:
    id: str
    severity: str  # "error" | "warning"
    message: str
    fix: str
    field: str | None = None
    catalog: str | None = None  # the catalog entry this prevents (`rankwatch catalog show ID`)


@dataclass
class PrecisionSettings:
    """What the config says about precision, normalised across frameworks."""

    kind: str
    fp16: bool | None = None  # None: not set / "auto"
    bf16: bool | None = None
    loss_scaling: str | None = None  # "dynamic" | "static" | "none"
    static_scale: float | None = None
    initial_scale: float | None = None
    min_loss_scale: float | None = None
    nan_inf_filter: bool | None = None
    pure_half: bool = False  # weights themselves in 16-bit (Lightning "*-true")
    fields: dict[str, str] = field(default_factory=dict)  # setting → the config field it came from

    @property
    def precision(self) -> str | None:
        if self.fp16 and self.bf16:
            return "fp16+bf16"
        if self.fp16:
            return "fp16"
        if self.bf16:
            return "bf16"
        if self.fp16 is False and self.bf16 is False:
            return "fp32"
        return None


@dataclass
class Preflight:
    kind: str
    gpu: str | None
    compute_capability: float | None
    settings: PrecisionSettings
    problems: list[Problem]
    notes: list[str]

    @property
    def errors(self) -> int:
        return sum(1 for p in self.problems if p.severity == "error")

    def to_dict(self) -> dict[str, Any]:
        s = self.settings
        return {
            "kind": self.kind,
            "gpu": self.gpu,
            "compute_capability": self.compute_capability,
            "precision": s.precision,
            "loss_scaling": s.loss_scaling,
            "static_loss_scale": s.static_scale,
            "min_loss_scale": s.min_loss_scale,
            "problems": [asdict(p) for p in self.problems],
            "notes": self.notes,
        }


# ----------------------------------------------------------------------------- inputs
_FLAG = re.compile(r"^--?(?P<k>[A-Za-z][\w-]*)(?:=(?P<v>.*))?$")


def args_to_dict(text: str) -> dict[str, Any]:
    """Megatron/fairseq command-line arguments (a text file of ``--flag value`` args, shell
    continuations and comments allowed) → ``{"fp16": True, "loss_scale": "1024", ...}``;
    flag names use underscores; positional words (the script, the launcher) are ignored."""
    try:
        tokens = shlex.split(text.replace("\\\n", " "), comments=True)
    except ValueError as exc:
        raise ConfigError("arguments", f"cannot split the argument text: {exc}") from None
    out: dict[str, Any] = {}
    i = 0
    while i < len(tokens):
        m = _FLAG.match(tokens[i])
        i += 1
        if not m:
            continue
        key = m.group("k").replace("-", "_")
        if m.group("v") is not None:
            out[key] = m.group("v")
        elif i < len(tokens) and not _FLAG.match(tokens[i]) and not tokens[i].endswith(".py"):
            out[key] = tokens[i]
            i += 1
        else:
            out[key] = True
    return out


_DS_KEYS = {"train_batch_size", "train_micro_batch_size_per_gpu", "zero_optimization", "gradient_accumulation_steps",
            "steps_per_print", "wall_clock_breakdown", "zero_allow_untested_optimizer", "bfloat16", "amp"}
_HF_KEYS = {"output_dir", "logging_nan_inf_filter", "per_device_train_batch_size", "learning_rate", "fp16_opt_level",
            "half_precision_backend", "fp16_full_eval", "bf16_full_eval", "logging_steps", "eval_strategy",
            "evaluation_strategy", "save_strategy", "num_train_epochs"}
_ACCEL_KEYS = {"mixed_precision", "compute_environment", "distributed_type", "num_processes", "machine_rank",
               "main_training_function", "downcast_bf16"}
_FAIRSEQ_KEYS = {"fp16_init_scale", "fp16_scale_window", "fp16_scale_tolerance", "memory_efficient_fp16", "arch", "task",
                 "criterion", "amp_init_scale"}


def detect_kind(cfg: dict[str, Any]) -> str | None:
    """Which framework's config this is, from its keys (None when it cannot tell)."""
    keys = set(cfg)
    if isinstance(cfg.get("trainer"), dict) and "precision" in cfg["trainer"]:
        return "lightning"
    if keys & _ACCEL_KEYS and "mixed_precision" in keys:
        return "accelerate"
    if keys & _HF_KEYS:
        return "hf_trainer"
    if isinstance(cfg.get("fp16"), dict) or isinstance(cfg.get("bf16"), dict) or keys & _DS_KEYS:
        return "deepspeed"
    if keys & _FAIRSEQ_KEYS:
        return "fairseq"
    if keys & {"loss_scale", "initial_loss_scale", "min_loss_scale", "loss_scale_window", "hysteresis",
               "tensor_model_parallel_size", "pipeline_model_parallel_size", "micro_batch_size", "params_dtype"}:
        return "megatron"
    if "precision" in keys:
        return "lightning"
    if keys & {"fp16", "bf16"} and all(isinstance(cfg[k], bool) for k in keys & {"fp16", "bf16"}):
        return "hf_trainer" if not any(k.startswith("fp16_") for k in keys) or "fp16_opt_level" in keys else "megatron"
    return None


def resolve_gpu(gpu: str | None) -> tuple[str | None, float | None]:
    """``gpu`` as (name, compute capability): a model name, or a capability such as "8.0" / "sm_80"."""
    if not gpu:
        return None, None
    g = gpu.strip()
    m = re.fullmatch(r"(?:sm_?)?(\d+)(?:\.(\d+))?", g)
    if m:
        if m.group(2) is not None:
            return g, float(f"{m.group(1)}.{m.group(2)}")
        digits = m.group(1)
        if len(digits) >= 2:
            return g, float(f"{digits[:-1]}.{digits[-1]}")
    return g, compute_capability(g)


# ----------------------------------------------------------------------------- readers
def _bool(cfg: dict[str, Any], key: str, path: str, auto_ok: bool = False) -> bool | None:
    if key not in cfg or cfg[key] is None:
        return None
    v = cfg[key]
    if isinstance(v, bool):
        return v
    if auto_ok and v == "auto":
        return None
    if isinstance(v, str) and v.lower() in ("true", "false"):
        return v.lower() == "true"
    allowed = 'true or false (or "auto")' if auto_ok else "true or false"
    raise ConfigError(path, f"expected {allowed}, got {v!r}")


def _number(cfg: dict[str, Any], key: str, path: str, auto_ok: bool = False) -> float | None:
    if key not in cfg or cfg[key] is None:
        return None
    v = cfg[key]
    if auto_ok and v == "auto":
        return None
    if isinstance(v, bool):
        raise ConfigError(path, f"expected a number, got {v!r}")
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise ConfigError(path, f"expected a number, got {v!r}") from None
    if f < 0:
        raise ConfigError(path, f"expected a number >= 0, got {v!r}")
    return f


def _deepspeed(cfg: dict[str, Any], prefix: str = "", hf: PrecisionSettings | None = None) -> PrecisionSettings:
    s = PrecisionSettings("deepspeed")
    for key in ("fp16", "bf16", "bfloat16", "amp"):
        if key in cfg and not isinstance(cfg[key], dict):
            raise ConfigError(f"{prefix}{key}", f"expected an object such as {{\"enabled\": true}}, got {cfg[key]!r}")
    fp16 = cfg.get("fp16") or {}
    bf16 = cfg.get("bf16") or cfg.get("bfloat16") or {}
    bkey = "bf16" if "bf16" in cfg else "bfloat16"
    s.fp16 = _bool(fp16, "enabled", f"{prefix}fp16.enabled", auto_ok=True)
    s.bf16 = _bool(bf16, "enabled", f"{prefix}{bkey}.enabled", auto_ok=True)
    if fp16 and "enabled" not in fp16:
        s.fp16 = False  # DeepSpeed: an "fp16" block without "enabled" is off
    if hf is not None:  # "auto" under the HF Trainer takes the Trainer's flags
        if s.fp16 is None and fp16.get("enabled") == "auto":
            s.fp16 = hf.fp16
        if s.bf16 is None and bf16.get("enabled") == "auto":
            s.bf16 = hf.bf16
    amp = cfg.get("amp") or {}
    if _bool(amp, "enabled", f"{prefix}amp.enabled"):
        s.fp16, s.loss_scaling = True, "dynamic"
    s.fields.update(fp16=f"{prefix}fp16.enabled", bf16=f"{prefix}{bkey}.enabled")
    if s.fp16 and s.loss_scaling is None:
        scale = _number(fp16, "loss_scale", f"{prefix}fp16.loss_scale", auto_ok=True)
        if scale is not None and scale > 0:
            s.loss_scaling, s.static_scale = ("none" if scale == 1 else "static"), scale
        elif scale == 0 or "loss_scale" not in fp16:
            s.loss_scaling = "dynamic"
        s.fields["loss_scaling"] = f"{prefix}fp16.loss_scale"
        power = _number(fp16, "initial_scale_power", f"{prefix}fp16.initial_scale_power", auto_ok=True)
        s.initial_scale = 2.0 ** power if power is not None else None
        s.min_loss_scale = _number(fp16, "min_loss_scale", f"{prefix}fp16.min_loss_scale", auto_ok=True)
        s.fields["min_loss_scale"] = f"{prefix}fp16.min_loss_scale"
    return s


def _hf(cfg: dict[str, Any]) -> tuple[PrecisionSettings, PrecisionSettings | None]:
    s = PrecisionSettings("hf_trainer")
    s.fp16 = _bool(cfg, "fp16", "fp16")
    s.bf16 = _bool(cfg, "bf16", "bf16")
    if s.fp16 is None and s.bf16 is None:
        s.fp16 = s.bf16 = False  # TrainingArguments defaults
    s.fp16 = bool(s.fp16)
    s.bf16 = bool(s.bf16)
    if s.fp16:
        s.loss_scaling = "dynamic"  # the Trainer adds a GradScaler for fp16
    filt = _bool(cfg, "logging_nan_inf_filter", "logging_nan_inf_filter")
    s.nan_inf_filter = True if filt is None else filt
    s.fields.update(fp16="fp16", bf16="bf16", nan_inf_filter="logging_nan_inf_filter")
    ds = cfg.get("deepspeed")
    nested = _deepspeed(ds, "deepspeed.", hf=s) if isinstance(ds, dict) else None
    return s, nested


def _accelerate(cfg: dict[str, Any]) -> tuple[PrecisionSettings, PrecisionSettings | None]:
    s = PrecisionSettings("accelerate")
    mp = cfg.get("mixed_precision", "no")
    mp = "no" if mp is None else str(mp).lower()
    if mp not in ("no", "fp16", "bf16", "fp8"):
        raise ConfigError("mixed_precision", f"expected one of no, fp16, bf16, fp8, got {cfg.get('mixed_precision')!r}")
    s.fp16, s.bf16 = mp == "fp16", mp in ("bf16", "fp8")
    if s.fp16:
        s.loss_scaling = "dynamic"  # Accelerator(mixed_precision="fp16") creates a GradScaler
    s.fields.update(fp16="mixed_precision", bf16="mixed_precision")
    ds = cfg.get("deepspeed_config")
    nested = None
    if isinstance(ds, dict) and isinstance(ds.get("deepspeed_config_file_content"), dict):
        nested = _deepspeed(ds["deepspeed_config_file_content"], "deepspeed_config.deepspeed_config_file.", hf=s)
    return s, nested


_LIGHTNING = {
    "16": ("fp16", False), "16-mixed": ("fp16", False), "16-true": ("fp16", True), "half": ("fp16", True),
    "bf16": ("bf16", False), "bf16-mixed": ("bf16", False), "bf16-true": ("bf16", True),
    "32": ("fp32", False), "32-true": ("fp32", False), "64": ("fp32", False), "64-true": ("fp32", False),
    "transformer-engine": ("bf16", False), "transformer-engine-float16": ("fp16", False),
}


def _lightning(cfg: dict[str, Any]) -> PrecisionSettings:
    s = PrecisionSettings("lightning")
    nested = cfg.get("trainer")
    trainer: dict[str, Any] = nested if isinstance(nested, dict) else cfg
    path = "trainer.precision" if trainer is not cfg else "precision"
    raw = trainer.get("precision", "32-true")
    key = str(raw).lower()
    if key not in _LIGHTNING:
        raise ConfigError(path, f"unknown precision {raw!r} (expected one of {', '.join(sorted(_LIGHTNING))})")
    prec, pure = _LIGHTNING[key]
    s.fp16, s.bf16, s.pure_half = prec == "fp16", prec == "bf16", pure
    if s.fp16:
        s.loss_scaling = "none" if pure else "dynamic"
    s.fields.update(fp16=path, bf16=path, loss_scaling=path, pure=path)
    return s


def _megatron(cfg: dict[str, Any], kind: str) -> PrecisionSettings:
    s = PrecisionSettings(kind)
    s.fp16 = bool(_bool(cfg, "fp16", "--fp16") or _bool(cfg, "memory_efficient_fp16", "--memory-efficient-fp16")
                  or _bool(cfg, "amp", "--amp"))
    s.bf16 = bool(_bool(cfg, "bf16", "--bf16"))
    s.fields.update(fp16="--fp16", bf16="--bf16")
    if s.fp16:
        scale = _number(cfg, "loss_scale", "--loss-scale")
        if scale is not None and scale > 0:
            s.loss_scaling, s.static_scale = ("none" if scale == 1 else "static"), scale
            s.fields["loss_scaling"] = "--loss-scale"
        else:
            s.loss_scaling = "dynamic"
        init = _number(cfg, "initial_loss_scale", "--initial-loss-scale")
        if init is None:
            init = _number(cfg, "fp16_init_scale", "--fp16-init-scale")
        s.initial_scale = init
        s.min_loss_scale = _number(cfg, "min_loss_scale", "--min-loss-scale")
        s.fields["min_loss_scale"] = "--min-loss-scale"
    return s


def settings_of(cfg: dict[str, Any], kind: str) -> list[PrecisionSettings]:
    """The precision settings of a config (two when an HF/accelerate config embeds a DeepSpeed one)."""
    if kind == "deepspeed":
        return [_deepspeed(cfg)]
    if kind == "hf_trainer":
        s, nested = _hf(cfg)
        return [s, nested] if nested else [s]
    if kind == "accelerate":
        s, nested = _accelerate(cfg)
        return [s, nested] if nested else [s]
    if kind == "lightning":
        return [_lightning(cfg)]
    if kind in ("megatron", "fairseq"):
        return [_megatron(cfg, kind)]
    raise ConfigError("(config)", f"unknown config kind {kind!r} (expected one of {', '.join(KINDS)})")


# ----------------------------------------------------------------------------- checks
_USE_BF16 = {
    "deepspeed": 'set "bf16": {"enabled": true} and remove the "fp16" block',
    "hf_trainer": "set bf16=True, fp16=False (--bf16 True --fp16 False)",
    "accelerate": "set mixed_precision: bf16",
    "megatron": "replace --fp16 with --bf16 (and keep --accumulate-allreduce-grads-in-fp32)",
    "fairseq": "replace --fp16 with --bf16",
    "lightning": 'set trainer.precision: "bf16-mixed"',
}
_USE_FP16 = {
    "deepspeed": 'use "fp16": {"enabled": true, "loss_scale": 0} (dynamic loss scaling) instead of "bf16"',
    "hf_trainer": "set fp16=True, bf16=False (the Trainer adds dynamic loss scaling)",
    "accelerate": "set mixed_precision: fp16",
    "megatron": "replace --bf16 with --fp16 (dynamic loss scaling: do not pass --loss-scale)",
    "fairseq": "replace --bf16 with --fp16",
    "lightning": 'set trainer.precision: "16-mixed"',
}
_DYNAMIC = {
    "deepspeed": 'set "fp16": {"loss_scale": 0} (dynamic scaling; "initial_scale_power": 16, "min_loss_scale": 1)',
    "megatron": "remove --loss-scale (Megatron then uses its dynamic grad scaler)",
    "fairseq": "remove the fixed scale (fairseq scales dynamically by default)",
    "lightning": 'use trainer.precision: "16-mixed" (fp32 weights + GradScaler)',
    "hf_trainer": "use fp16=True (the Trainer adds a GradScaler); do not load the model in float16 for training",
    "accelerate": "use mixed_precision: fp16 (the Accelerator adds a GradScaler)",
}


def _problems(s: PrecisionSettings, cc: float | None, gpu: str | None) -> list[Problem]:
    out: list[Problem] = []
    on = f"{gpu} (compute capability {cc})" if gpu and cc is not None else f"compute capability {cc}"
    if s.fp16 and s.bf16:
        out.append(Problem("fp16_and_bf16", "error", "fp16 and bf16 are both enabled; DeepSpeed, the HF Trainer and "
                           "Megatron refuse this ('bfloat16 and fp16 modes cannot be simultaneously enabled').",
                           "Enable exactly one: " + (_USE_BF16[s.kind] if cc is None or cc >= 8.0 else _USE_FP16[s.kind]) + ".",
                           s.fields.get("bf16"), "amp_bf16_vs_fp16"))
    if s.bf16 and cc is not None and cc < 8.0:
        out.append(Problem("bf16_on_pre_ampere", "error",
                           f"bf16 on {on}: no bf16 tensor cores before Ampere (8.0). Older stacks refuse it; torch >= 2.3 "
                           "emulates it, slower than fp16 and often than fp32, and Ampere-only kernels (FlashAttention) fail.",
                           _USE_FP16[s.kind] + "; or run on a GPU with compute capability >= 8.0.",
                           s.fields.get("bf16"), "bf16_unsupported_gpu"))
    if s.bf16 and s.pure_half:
        out.append(Problem("bf16_true_weights", "warning",
                           "bf16-true keeps the weights themselves in bf16 (no fp32 master copy): updates smaller than "
                           "1/256 of a weight round away, and the model ends less accurate than in fp32.",
                           'Use trainer.precision: "bf16-mixed" (fp32 weights, bf16 autocast).',
                           s.fields.get("pure"), "bf16_accuracy_gap"))
    if s.fp16:
        if s.loss_scaling == "none":
            what = (f"a static loss scale of {s.static_scale:g} (no scaling)" if s.static_scale is not None else
                    "no loss scaler (pure fp16 weights)" if s.pure_half else "no loss scaling")
            out.append(Problem("fp16_no_loss_scaling", "error",
                               f"fp16 with {what}: gradients below 6e-8 flush to zero and overflows reach the weights "
                               "unchecked; the loss stalls or turns NaN.",
                               _DYNAMIC[s.kind] + ".", s.fields.get("loss_scaling"), "amp_bf16_vs_fp16"))
        elif s.loss_scaling == "static":
            out.append(Problem("fp16_static_loss_scale", "warning",
                               f"fp16 with a fixed loss scale of {s.static_scale:g}: nothing lowers it when gradients "
                               "overflow (inf/NaN steps) or raises it when they underflow.",
                               _DYNAMIC[s.kind] + ".", s.fields.get("loss_scaling"), "loss_scale_collapse"))
        if cc is not None and cc >= 8.0:
            out.append(Problem("fp16_on_ampere", "warning",
                               f"fp16 on {on}: bf16 is native here, has fp32's range (no overflow above 65504) and needs "
                               "no loss scaling.", _USE_BF16[s.kind] + ".", s.fields.get("fp16"), "amp_bf16_vs_fp16"))
        if s.min_loss_scale is not None and s.min_loss_scale > MIN_LOSS_SCALE_WARN and s.loss_scaling == "dynamic":
            consequence = {
                "deepspeed": "DeepSpeed exits ('Current loss scale already at minimum - cannot decrease scale anymore. "
                             "Exiting run.') as soon as an overflow happens at that scale",
                "fairseq": "fairseq stops ('Minimum loss scale reached') as soon as the scale falls to it",
            }.get(s.kind, "the scaler cannot go below it, so steps keep overflowing and being skipped at that scale")
            out.append(Problem("min_loss_scale_aborts", "warning",
                               f"minimum loss scale {s.min_loss_scale:g} (default 1): {consequence}. A brief burst of "
                               "overflows then ends or stalls the run.",
                               f"Lower it to 1 ({s.fields.get('min_loss_scale', 'min_loss_scale')}), or move to bf16 where "
                               "the hardware has it.", s.fields.get("min_loss_scale"), "loss_scale_collapse"))
    if s.nan_inf_filter and (s.fp16 or s.bf16 or s.kind == "hf_trainer"):
        out.append(Problem("nan_inf_filter_hides_nan", "warning",
                           "logging_nan_inf_filter is true (the HF default): a NaN/inf loss is logged as the average of "
                           "the previous losses, so the log looks healthy while training is broken.",
                           "Set logging_nan_inf_filter=False (--logging_nan_inf_filter False) in monitored jobs.",
                           s.fields.get("nan_inf_filter"), "nonfinite_loss"))
    return out


def check_config(cfg: dict[str, Any], kind: str | None = None, gpu: str | None = None) -> Preflight:
    """Check ``cfg`` (a parsed config) for ``gpu``; raises ``ConfigError`` on invalid values."""
    if not isinstance(cfg, dict):
        raise ConfigError("(top level)", f"expected a mapping of settings, got {type(cfg).__name__}")
    kind = kind or detect_kind(cfg)
    if kind is None:
        raise ConfigError("(top level)", "not a DeepSpeed, HF TrainingArguments, accelerate, Megatron/fairseq or Lightning "
                          "config: none of their precision keys (fp16, bf16, mixed_precision, precision, --fp16) found")
    name, cc = resolve_gpu(gpu)
    all_settings = settings_of(cfg, kind)
    problems: list[Problem] = []
    seen: set[str] = set()
    for s in all_settings:
        for p in _problems(s, cc, name):
            if p.id not in seen:
                seen.add(p.id)
                problems.append(p)
    problems.sort(key=lambda p: _SEVERITY[p.severity])
    notes = []
    if cc is None:
        notes.append("GPU unknown (give --gpu NAME): the fp16-vs-bf16 hardware checks were skipped" if not name else
                     f"GPU {name!r} is not in rankwatch's table: the fp16-vs-bf16 hardware checks were skipped "
                     "(give its compute capability instead, e.g. --gpu 8.0)")
    main = all_settings[-1] if len(all_settings) > 1 and all_settings[-1].precision else all_settings[0]
    return Preflight(kind, name, cc, main, problems, notes)
