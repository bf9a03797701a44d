"""``rankwatch check CONFIG``: read a training config and the GPU model, run the preflight checks.

The checks themselves are pure (``detectors/preflight.py``); this module reads the file
(JSON, YAML, or a text file of command-line arguments), follows a DeepSpeed config that
an HF/accelerate config points to, finds the GPU (``--gpu``, else ``nvidia-smi``), and
renders the result as text or JSON. Any unreadable or invalid input becomes one
``CheckError`` whose message names the file and, where it applies, the field.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from detectors.preflight import ConfigError, Preflight, args_to_dict, check_config, detect_kind

__all__ = ["CheckError", "CheckResult", "gpu_from_nvidia_smi", "load_config", "render_check_text", "run_check"]

MAX_CONFIG_BYTES = 16 << 20


class CheckError(Exception):
    """The config cannot be read or understood; the message names the file (and field)."""


@dataclass
class CheckResult:
    path: str
    preflight: Preflight
    gpu_source: str  # "--gpu", "nvidia-smi" or "none"

    def to_dict(self) -> dict[str, Any]:
        return {"config": self.path, "gpu_source": self.gpu_source, **self.preflight.to_dict()}


def load_config(path: Path) -> tuple[dict[str, Any], str]:
    """The config as a dict and its format ("json", "yaml" or "args")."""
    try:
        if path.is_dir():
            raise CheckError(f"{path}: is a directory, not a config file")
        data = path.read_bytes()
    except FileNotFoundError:
        raise CheckError(f"{path}: no such file") from None
    except OSError as exc:
        raise CheckError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise CheckError(f"{path}: {len(data)} bytes is too large for a config file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise CheckError(f"{path}: not a text file (invalid UTF-8)") from None
    suffix = path.suffix.lower()
    stripped = text.lstrip()
    if suffix == ".json" or (suffix not in (".yaml", ".yml") and stripped.startswith("{")):
        try:
            cfg = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CheckError(f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
        fmt = "json"
    elif suffix in (".yaml", ".yml") or (not stripped.startswith("-") and ":" in stripped.split("\n", 1)[0]):
        try:
            cfg = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
            raise CheckError(f"{path}: invalid YAML{where}: {getattr(exc, 'problem', None) or exc}") from None
        fmt = "yaml"
    else:
        try:
            cfg = args_to_dict(text)
        except ConfigError as exc:
            raise CheckError(f"{path}: {exc}") from None
        fmt = "args"
    if not isinstance(cfg, dict):
        raise CheckError(f"{path}: expected a mapping of settings at the top level, got {type(cfg).__name__}")
    return cfg, fmt


def _embed_deepspeed(cfg: dict[str, Any], kind: str, base: Path) -> None:
    """An HF/accelerate config that names a DeepSpeed config file: read it in for the checks."""
    ref: Any = None
    if kind == "hf_trainer" and isinstance(cfg.get("deepspeed"), str):
        ref = cfg["deepspeed"]
    elif kind == "accelerate" and isinstance(cfg.get("deepspeed_config"), dict):
        ref = cfg["deepspeed_config"].get("deepspeed_config_file")
    if not isinstance(ref, str) or not ref:
        return
    p = Path(ref)
    if not p.is_absolute():
        p = base / p
    if not p.is_file():
        return  # the checks of the main config still run; the note says what was skipped
    ds, _ = load_config(p)
    if kind == "hf_trainer":
        cfg["deepspeed"] = ds
    else:
        cfg["deepspeed_config"] = {**cfg["deepspeed_config"], "deepspeed_config_file_content": ds}


def gpu_from_nvidia_smi(timeout: float = 10.0) -> str | None:
    """The first GPU's name from ``nvidia-smi``, or None when it is missing or fails."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        out = subprocess.run([exe, "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    names = [line.strip() for line in out.stdout.splitlines() if line.strip()]
    return names[0] if out.returncode == 0 and names else None


def run_check(config: Path, gpu: str | None = None, kind: str | None = None) -> CheckResult:
    cfg, _ = load_config(config)
    kind = kind or detect_kind(cfg)
    if kind is None:
        raise CheckError(f"{config}: not a DeepSpeed, HF TrainingArguments, accelerate, Megatron/fairseq or Lightning "
                         "config (none of fp16, bf16, mixed_precision, trainer.precision, --fp16 was found)")
    _embed_deepspeed(cfg, kind, config.parent)
    source = "--gpu" if gpu else "none"
    if not gpu:
        gpu = gpu_from_nvidia_smi()
        source = "nvidia-smi" if gpu else "none"
    try:
        pre = check_config(cfg, kind, gpu)
    except ConfigError as exc:
        raise CheckError(f"{config}: {exc}") from None
    return CheckResult(str(config), pre, source)


_KIND_NAMES = {"deepspeed": "DeepSpeed config", "hf_trainer": "HF TrainingArguments", "accelerate": "accelerate config",
               "megatron": "Megatron-LM arguments", "fairseq": "fairseq arguments", "lightning": "Lightning config"}


def render_check_text(res: CheckResult) -> str:
    pre = res.preflight
    s = pre.settings
    gpu = (f"{pre.gpu} (compute capability {pre.compute_capability})" if pre.compute_capability is not None
           else (pre.gpu or "unknown"))
    lines = [f"rankwatch check {res.path}",
             f"  {_KIND_NAMES.get(pre.kind, pre.kind)} · GPU: {gpu}"
             + (f" [from {res.gpu_source}]" if res.gpu_source != "none" else ""),
             f"  precision: {s.precision or 'not set'} · loss scaling: {s.loss_scaling or 'n/a'}"
             + (f" ({s.static_scale:g})" if s.static_scale is not None else "")
             + (f" · min loss scale: {s.min_loss_scale:g}" if s.min_loss_scale is not None else ""), ""]
    for p in pre.problems:
        tag = "ERROR  " if p.severity == "error" else "WARNING"
        lines.append(f"{tag} {p.id}" + (f"  [{p.field}]" if p.field else ""))
        lines.append(f"        {p.message}")
        lines.append(f"        fix: {p.fix}")
        if p.catalog:
            lines.append(f"        see: rankwatch catalog show {p.catalog}")
        lines.append("")
    for n in pre.notes:
        lines.append(f"note: {n}")
    errors, warnings = pre.errors, len(pre.problems) - pre.errors
    lines.append("OK: no problems found." if not pre.problems else
                 f"{len(pre.problems)} problem(s): {errors} error(s), {warnings} warning(s).")
    return "\n".join(lines) + "\n"
