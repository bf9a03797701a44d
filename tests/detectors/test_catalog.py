"""The catalog loads, validates, and is complete enough to act on."""

from __future__ import annotations

import re

import pytest
import yaml

from detectors.catalog import (
    Catalog,
    CatalogError,
    Entry,
    Stack,
    _parse,
    entry_to_dict,
    load_catalog,
    validate_entry,
)
from detectors.scanner import Scanner, available_engines

REQUIRED = {
    "amp_bf16_vs_fp16", "loss_scale_collapse", "fp16_overflow_skips", "nonfinite_loss", "grad_norm_explosion",
    "loss_spike", "bf16_unsupported_gpu", "cuda_oom", "rank_exception", "rank_killed", "rank_hang",
    "collective_timeout", "peer_connection_lost", "launcher_teardown", "nccl_error", "gpu_xid", "gpu_ecc_error",
    "cuda_illegal_memory_access",
}
# issue #8: the seed's symptoms and the crash/hardware/distributed entries beyond the design set
ISSUE_8 = {
    "bf16_accuracy_gap", "amp_no_speedup", "bf16_memory_overhead", "fp16_early_instability", "host_oom",
    "rank_segfault", "nccl_version_mismatch", "gpu_fallen_off_bus", "dataloader_stall",
}
DEPTH_FIELDS = ("title", "summary", "mechanism", "symptoms", "root_causes", "verify", "observe", "confirm",
                "prevention", "scale_notes", "affected", "references")


def test_catalog_has_every_design_id() -> None:
    cat = load_catalog()
    assert {e.id for e in cat} >= REQUIRED


def test_catalog_has_the_issue_8_entries_and_25_or_more() -> None:
    ids = {e.id for e in load_catalog()}
    assert ids >= ISSUE_8, f"missing: {sorted(ISSUE_8 - ids)}"
    assert len(ids) >= 25


@pytest.mark.parametrize("entry", sorted(load_catalog(), key=lambda e: e.id), ids=lambda e: e.id)
def test_every_entry_at_full_depth(entry: Entry) -> None:
    """The encyclopedia: every entry has every depth field, a PyTorch fix, and related ids that exist."""
    for name in DEPTH_FIELDS:
        value = getattr(entry, name)
        assert value, f"{entry.id}: {name} is empty"
        if isinstance(value, str):
            assert value.strip(), f"{entry.id}: {name} is blank"
        else:
            assert all(str(v).strip() for v in value), f"{entry.id}: {name} has a blank item"
    fix = entry.fix.get(Stack.PYTORCH)
    assert fix is not None and fix.change.strip() and fix.why.strip(), f"{entry.id}: no pytorch fix"
    cat = load_catalog()
    for r in entry.related:
        assert r in cat and r != entry.id, f"{entry.id}: related id {r!r} does not exist (or is itself)"
    assert all(ref.startswith("https://") for ref in entry.references), f"{entry.id}: references must be URLs"


def test_no_placeholder_text() -> None:
    for e in load_catalog():
        dumped = yaml.safe_dump(entry_to_dict(e))
        assert "TODO" not in dumped, f"{e.id} still has TODO text"


def test_seed_entry_depth() -> None:
    e = load_catalog()["amp_bf16_vs_fp16"]
    text = yaml.safe_dump(entry_to_dict(e)).lower()
    for needle in ("65504", "loss scal", "ampere", "v100", "mantissa"):
        assert needle in text, f"seed entry should explain {needle!r}"
    assert {"pytorch", "hf_trainer", "deepspeed", "megatron", "lightning"} <= {s.value for s in e.fix}
    assert len(e.symptoms) >= 4


@pytest.mark.parametrize("engine", available_engines())
def test_fingerprints_compile_on_every_engine(engine: str) -> None:
    pats = [f.pattern for e in load_catalog() for f in e.fingerprints]
    Scanner(pats, engine=engine)


def test_invalid_entry_names_field() -> None:
    good = entry_to_dict(load_catalog()["cuda_oom"])
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
    dangling = validate_entry(dict(entry_to_dict(e), related=["no_such_failure"]))
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


def test_catalog_cache_round_trip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A catalog loaded from the cache equals the validated one; pydantic and PyYAML are not
    needed for it; a damaged entry is validated again and replaced."""
    import subprocess
    import sys

    from detectors.catalog import set_catalog_cache
    from monitor.scancache import FileDatabaseCache

    validated = list(load_catalog())
    set_catalog_cache(FileDatabaseCache(tmp_path, "catalog", "json"))
    try:
        assert list(load_catalog()) == validated  # validated, then stored
        (entry,) = tmp_path.glob("catalog-*.json")
        stored = entry.read_bytes()
        load_catalog.cache_clear()
        assert list(load_catalog()) == validated  # loaded
        entry.write_bytes(b'[{"id": "cuda_oom"}]')  # valid JSON, not a catalog
        load_catalog.cache_clear()
        assert list(load_catalog()) == validated
        assert entry.read_bytes() == stored
    finally:
        set_catalog_cache(None)
    # a fresh process that finds the entry imports neither pydantic nor yaml to load the catalog
    probe = ("import sys; from pathlib import Path; from detectors.catalog import load_catalog, set_catalog_cache; "
             "from monitor.scancache import FileDatabaseCache; "
             f"set_catalog_cache(FileDatabaseCache(Path({str(tmp_path)!r}), 'catalog', 'json')); "
             "n = len(load_catalog()); print(n, 'pydantic' in sys.modules, 'yaml' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.split() == [str(len(validated)), "False", "False"]


def test_catalog_cache_key_follows_the_files() -> None:
    """An edited YAML file is a different key: a stale cached catalog is never used."""
    from detectors.catalog import _cache_key

    files = [("a.yaml", b"id: a\n"), ("b.yaml", b"id: b\n")]
    assert _cache_key(files) == _cache_key(list(files))
    assert _cache_key(files) != _cache_key([("a.yaml", b"id: a \n"), files[1]])
    assert _cache_key(files) != _cache_key(files[:1])
