"""Every real excerpt in ../shared/real-logs/ (read in place) against its case.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from monitor.diagnose import diagnose_paths
from tests.conftest import SHARED

# case.json failure classes → the catalog ids that name that class
CLASS_IDS: dict[str, set[str]] = {
    "loss_scale_collapse": {"loss_scale_collapse"},
    "fp16_overflow": {"fp16_overflow_skips", "amp_bf16_vs_fp16"},
    "gpu_hardware_error": {"gpu_xid", "gpu_ecc_error", "cuda_illegal_memory_access"},
    "rank_crash": {"rank_killed", "rank_exception", "launcher_teardown"},
    "nan_loss": {"nonfinite_loss", "amp_bf16_vs_fp16"},
    "bf16_unsupported": {"bf16_unsupported_gpu"},
    "cuda_oom": {"cuda_oom"},
    "nccl_timeout_collateral": {"collective_timeout", "peer_connection_lost"},
}

CASES = sorted(p.parent.name for p in (SHARED / "real-logs").glob("*/case.json"))


def _summary(report: dict) -> str:
    return "\n".join(
        f"  {i['severity']} {i['failure']} rank={i['initiator']['rank']} step={i['initiator']['step']}"
        for i in report["incidents"]
    ) or "  (no incidents)"


@pytest.mark.parametrize("case", CASES or ["<none>"])
def test_real_log_case(case: str, real_logs: Path) -> None:
    if case == "<none>":
        pytest.skip("no cases in ../shared/real-logs")
    spec = json.loads((real_logs / case / "case.json").read_text())
    report = diagnose_paths([str(real_logs / case)]).report
    incs = report["incidents"]
    summary = _summary(report)
    cls = spec["failure_class"]
    if cls == "benign_warmup_overflow":
        loud = [i for i in incs if i["severity"] in ("warning", "critical")]
        assert not loud, f"{case}: benign warm-up must not raise warning/critical:\n{summary}"
        return
    assert cls in CLASS_IDS, f"unknown failure class {cls} in {case}"
    assert incs, f"{case}: expected a {cls} incident, got none"
    top = incs[0]
    assert top["failure"] in CLASS_IDS[cls], f"{case}: top incident should be one of {CLASS_IDS[cls]}:\n{summary}"
    rank = top["initiator"]["rank"]
    expected = spec.get("expected_initiating_rank")
    assert rank == expected, f"{case}: initiator rank {rank}, expected {expected}:\n{summary}"
    blamed = {i["initiator"]["rank"] for i in incs if i["severity"] in ("warning", "critical")} - {None}
    bad = blamed & (set(spec.get("collateral_ranks", [])) - {expected})
    assert not bad, f"{case}: blames collateral rank(s) {bad}:\n{summary}"
    if spec.get("must_not_blame_rank") is not None:
        assert spec["must_not_blame_rank"] not in blamed, f"{case}: blames rank {spec['must_not_blame_rank']}:\n{summary}"
