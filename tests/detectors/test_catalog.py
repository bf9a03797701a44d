"""The catalog loads, validates, and is complete enough to act on."""

from __future__ import annotations

import re

import pytest
import yaml

from detectors.catalog import Catalog, CatalogError, Entry, _parse, load_catalog
from detectors.scanner import Scanner, available_engines

REQUIRED = {
    "amp_bf16_vs_fp16", "loss_scale_collapse", "fp16_overflow_skips", "nonfinite_loss", "grad_norm_explosion",
    "loss_spike", "bf16_unsupported_gpu", "cuda_oom", "rank_exception", "rank_killed", "rank_hang",
    "collective_timeout", "peer_connection_lost", "launcher_teardown", "nccl_error", "gpu_xid", "gpu_ecc_error",
    "cuda_illegal_memory_access",
}


def test_catalog_has_every_design_id() -> None:
    cat = load_catalog()
    assert REQUIRED <= {e.id for e in cat}


def test_no_placeholder_text() -> None:
    for e in load_catalog():
        dumped = yaml.safe_dump(e.model_dump(mode="json"))
        assert "TODO" not in dumped, f"{e.id} still has TODO text"


def test_seed_entry_depth() -> None:
    e = load_catalog()["amp_bf16_vs_fp16"]
    text = yaml.safe_dump(e.model_dump(mode="json")).lower()
    for needle in ("65504", "loss scal", "ampere", "v100", "mantissa"):
        assert needle in text, f"seed entry should explain {needle!r}"
    assert {"pytorch", "hf_trainer", "deepspeed", "megatron", "lightning"} <= {s.value for s in e.fix}
    assert len(e.symptoms) >= 4


@pytest.mark.parametrize("engine", available_engines())
def test_fingerprints_compile_on_every_engine(engine: str) -> None:
    pats = [f.pattern for e in load_catalog() for f in e.fingerprints]
    Scanner(pats, engine=engine)


def test_invalid_entry_names_field() -> None:
    good = load_catalog()["cuda_oom"].model_dump(mode="json")
    bad = dict(good, severity="fatal")
    with pytest.raises(CatalogError, match="severity"):
        _parse("cuda_oom.yaml", yaml.safe_dump(bad))
    with pytest.raises(CatalogError, match="does not match the file name"):
        _parse("other.yaml", yaml.safe_dump(good))
    unsafe = dict(good, fingerprints=[{"pattern": r"(a)\1", "description": "backref"}])
    with pytest.raises(CatalogError, match="linear-time"):
        _parse("cuda_oom.yaml", yaml.safe_dump(unsafe))
    with pytest.raises(CatalogError, match="YAML"):
        _parse("cuda_oom.yaml", "id: [unclosed")


def test_duplicate_and_dangling_ids_rejected() -> None:
    e = load_catalog()["cuda_oom"]
    with pytest.raises(CatalogError, match="duplicate"):
        Catalog([e, e])
    dangling = Entry.model_validate(dict(e.model_dump(mode="json"), related=["no_such_failure"]))
    with pytest.raises(CatalogError, match="no_such_failure"):
        Catalog([dangling])


def test_fingerprints_do_not_fire_on_healthy_noise() -> None:
    """Ordinary healthy lines of a training log match no failure fingerprint."""
    healthy = [
        "host:1:2 [0] NCCL INFO Channel 00/32 :    0   1   2   3",
        "host:1:2 [0] NCCL INFO Using network IB",
        "{'loss': 2.1034, 'grad_norm': 1.2957763671875, 'learning_rate': 4.8e-05, 'epoch': 0.1}",
        "[2024-11-02 08:01:44,907] [INFO] [logging.py:96:log_dist] [Rank 0] step=1000, skipped=0, lr=[2.9e-05]",
        "Loading checkpoint shards: 100%|██████████| 61/61 [05:45<00:00,  5.66s/it]",
        "[rank: 0] Seed set to 42",
        "GPU available: True (cuda), used: True",
    ]
    fps = [(e.id, re.compile(f.pattern)) for e in load_catalog() for f in e.fingerprints]
    for line in healthy:
        hits = [fid for fid, rx in fps if rx.search(line)]
        assert not hits, f"{line!r} matched {hits}"
