"""Preflight checks (detectors/preflight.py) on real-format config files (fixtures/configs/).

Layouts: DeepSpeed's documented config JSON (deepspeed.ai/docs/config-json: "fp16" block with
loss_scale / initial_scale_power / loss_scale_window / hysteresis / min_loss_scale, "bf16"
block, "auto" values of the HF integration), HF ``TrainingArguments`` field names (JSON as
written by ``TrainingArguments.to_json_string`` and YAML), accelerate's ``accelerate config``
YAML keys, Megatron-LM ``pretrain_gpt.py`` and fairseq-train argument files, and a
LightningCLI YAML (``trainer: precision:``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from detectors.preflight import ConfigError, args_to_dict, check_config, detect_kind, resolve_gpu
from monitor.check import CheckError, load_config, run_check

CONFIGS = Path(__file__).resolve().parent / "fixtures" / "configs"
A100, V100, P40 = "NVIDIA A100-SXM4-80GB", "Tesla V100-SXM2-16GB", "Tesla P40"

CASES = [
    # file, gpu, kind, precision, problem ids (in order: errors first)
    ("ds_fp16_static.json", A100, "deepspeed", "fp16", ["fp16_static_loss_scale", "fp16_on_ampere"]),
    ("ds_fp16_static.json", V100, "deepspeed", "fp16", ["fp16_static_loss_scale"]),
    ("ds_fp16_no_scaling.json", V100, "deepspeed", "fp16", ["fp16_no_loss_scaling"]),
    ("ds_fp16_dynamic_high_min.json", V100, "deepspeed", "fp16", ["min_loss_scale_aborts"]),
    ("ds_bf16.json", A100, "deepspeed", "bf16", []),
    ("ds_bf16.json", V100, "deepspeed", "bf16", ["bf16_on_pre_ampere"]),
    ("ds_both.json", A100, "deepspeed", "fp16+bf16", ["fp16_and_bf16", "fp16_on_ampere"]),
    ("hf_training_args.json", A100, "hf_trainer", "fp16", ["fp16_on_ampere", "nan_inf_filter_hides_nan"]),
    ("hf_args.yaml", A100, "hf_trainer", "bf16", []),
    ("hf_args.yaml", "7.5", "hf_trainer", "bf16", ["bf16_on_pre_ampere"]),
    ("accelerate_default_config.yaml", A100, "accelerate", "bf16", []),
    ("accelerate_default_config.yaml", V100, "accelerate", "bf16", ["bf16_on_pre_ampere"]),
    ("accelerate_deepspeed.yaml", V100, "accelerate", "fp16", ["fp16_static_loss_scale"]),
    ("megatron_pretrain_gpt_args.txt", A100, "megatron", "fp16", ["fp16_static_loss_scale", "fp16_on_ampere"]),
    ("fairseq_train_args.txt", V100, "fairseq", "fp16", ["min_loss_scale_aborts"]),
    ("lightning_cli.yaml", V100, "lightning", "fp16", ["fp16_no_loss_scaling"]),
    ("lightning_bf16_true.yaml", A100, "lightning", "bf16", ["bf16_true_weights"]),
]


@pytest.mark.parametrize(("name", "gpu", "kind", "precision", "ids"), CASES,
                         ids=[f"{c[0]}-{c[1].split()[-1]}" for c in CASES])
def test_config_files(name: str, gpu: str, kind: str, precision: str, ids: list[str]) -> None:
    res = run_check(CONFIGS / name, gpu=gpu)
    pre = res.preflight
    assert (pre.kind, pre.settings.precision) == (kind, precision)
    assert [p.id for p in pre.problems] == ids
    for p in pre.problems:
        assert p.severity in ("error", "warning") and p.message and p.fix and p.catalog
    assert res.gpu_source == "--gpu"


def test_problem_details_name_the_field_and_the_fix() -> None:
    pre = run_check(CONFIGS / "ds_fp16_static.json", gpu=A100).preflight
    static, ampere = pre.problems
    assert static.field == "fp16.loss_scale" and "128" in static.message and '"loss_scale": 0' in static.fix
    assert ampere.field == "fp16.enabled" and '"bf16": {"enabled": true}' in ampere.fix
    assert pre.settings.loss_scaling == "static" and pre.settings.static_scale == 128
    pre = run_check(CONFIGS / "ds_fp16_dynamic_high_min.json", gpu=V100).preflight
    (p,) = pre.problems
    assert "Current loss scale already at minimum" in p.message and p.field == "fp16.min_loss_scale"
    pre = run_check(CONFIGS / "fairseq_train_args.txt", gpu=V100).preflight
    assert "Minimum loss scale reached" in pre.problems[0].message and pre.problems[0].field == "--min-loss-scale"


def test_hf_deepspeed_auto_takes_the_trainer_flags() -> None:
    pre = run_check(CONFIGS / "hf_training_args.json", gpu=V100).preflight
    assert [p.id for p in pre.problems] == ["nan_inf_filter_hides_nan"]
    assert pre.settings.kind == "deepspeed" and pre.settings.fp16 is True and pre.settings.loss_scaling == "dynamic"


def test_unknown_gpu_skips_hardware_checks_with_a_note() -> None:
    pre = check_config({"fp16": {"enabled": True}}, None, None)
    assert pre.problems == [] and "GPU unknown" in pre.notes[0]
    pre = check_config({"fp16": {"enabled": True}}, None, "Some Future GPU 9000")
    assert "not in rankwatch's table" in pre.notes[0]


def test_gpu_names_and_capabilities() -> None:
    assert resolve_gpu("NVIDIA H100 80GB HBM3") == ("NVIDIA H100 80GB HBM3", 9.0)
    assert resolve_gpu("7.5") == ("7.5", 7.5)
    assert resolve_gpu("sm_80") == ("sm_80", 8.0)
    assert resolve_gpu(P40)[1] == 6.1
    assert resolve_gpu(None) == (None, None)


@pytest.mark.parametrize(("name", "field"), [("ds_invalid_loss_scale.json", "fp16.loss_scale"),
                                             ("lightning_invalid.yaml", "trainer.precision")])
def test_invalid_values_name_file_and_field(name: str, field: str) -> None:
    with pytest.raises(CheckError) as exc:
        run_check(CONFIGS / name, gpu=A100)
    assert str(exc.value).startswith(str(CONFIGS / name)) and f"field {field!r}" in str(exc.value)


def test_config_errors_are_specific() -> None:
    with pytest.raises(ConfigError, match=r"'fp16\.enabled'.*'yes'"):
        check_config({"fp16": {"enabled": "yes"}}, "deepspeed", A100)
    with pytest.raises(ConfigError, match=r"'fp16'.*expected an object"):
        check_config({"fp16": True, "zero_optimization": {}}, "deepspeed", A100)
    with pytest.raises(ConfigError, match="'mixed_precision'"):
        check_config({"mixed_precision": "fp17", "distributed_type": "NO"}, None, A100)
    with pytest.raises(ConfigError, match="not a DeepSpeed"):
        check_config({"hello": 1}, None, A100)


def test_unreadable_files(tmp_path: Path) -> None:
    bad = tmp_path / "ds.json"
    bad.write_text('{"fp16": {"enabled": true,}\n')
    with pytest.raises(CheckError, match=r"invalid JSON at line 1, column"):
        load_config(bad)
    (tmp_path / "c.yaml").write_text("trainer:\n  precision: [16\n")
    with pytest.raises(CheckError, match="invalid YAML"):
        load_config(tmp_path / "c.yaml")
    with pytest.raises(CheckError, match="no such file"):
        load_config(tmp_path / "missing.json")
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(CheckError, match="expected a mapping"):
        load_config(tmp_path / "list.json")


def test_args_text_to_dict() -> None:
    d = args_to_dict("torchrun --nproc_per_node 8 pretrain_gpt.py \\\n --fp16 --loss-scale=512 # static\n --bf16 --lr 1e-4")
    assert d == {"nproc_per_node": "8", "fp16": True, "loss_scale": "512", "bf16": True, "lr": "1e-4"}
    assert detect_kind(d) == "megatron"
