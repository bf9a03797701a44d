"""``rankwatch eval``: score the engine on a corpus of labelled real log excerpts.

A corpus is a directory tree; every folder holding a ``case.json`` (the schema of
``../shared/real-logs``) is one case and the log files beside it are its input. A case is
right when the engine's verdict agrees with the label:

- ``healthy`` / ``benign_warmup_overflow``: no warning or critical incident at all;
- any other class: the top incident's failure is one of the ids that name the class, its
  initiating rank equals ``expected_initiating_rank`` (``null`` included: naming a rank
  the log cannot show is a miss), and no collateral rank is blamed by a loud incident.

Scoring is separate from the engine: the class → ids table below is the only place that
knows the label vocabulary.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from monitor.diagnose import diagnose_paths

__all__ = ["CLASS_IDS", "QUIET_CLASSES", "Case", "CaseResult", "EvalResult", "evaluate", "judge"]

# label vocabulary (case.json ``failure_class``) → catalog ids that name that class
CLASS_IDS: dict[str, frozenset[str]] = {
    "nan_loss": frozenset({"nonfinite_loss", "amp_bf16_vs_fp16"}),
    "fp16_overflow": frozenset({"fp16_overflow_skips", "amp_bf16_vs_fp16"}),
    "loss_scale_collapse": frozenset({"loss_scale_collapse"}),
    "training_instability": frozenset({"loss_spike", "grad_norm_explosion"}),
    "bf16_unsupported": frozenset({"bf16_unsupported_gpu"}),
    "cuda_oom": frozenset({"cuda_oom"}),
    "rank_crash": frozenset({"rank_killed", "rank_exception", "rank_segfault", "native_abort", "host_oom", "dataloader_stall",
                             "cuda_illegal_memory_access",
                             "launcher_teardown"}),
    "rank_hang": frozenset({"rank_hang"}),
    "nccl_timeout_collateral": frozenset({"collective_timeout", "peer_connection_lost"}),
    "nccl_error": frozenset({"nccl_error", "nccl_version_mismatch"}),
    "gpu_hardware_error": frozenset({"gpu_xid", "gpu_ecc_error", "cuda_illegal_memory_access", "gpu_fallen_off_bus"}),
}
QUIET_CLASSES = frozenset({"healthy", "benign_warmup_overflow"})
_LOUD = ("warning", "critical")


class Case(BaseModel):
    """The part of ``case.json`` that scoring reads (the rest is for people)."""

    model_config = ConfigDict(extra="allow")

    failure_class: str
    expected_initiating_rank: int | None = None
    collateral_ranks: list[int] = []
    must_not_blame_rank: int | None = None


@dataclass
class CaseResult:
    name: str
    cls: str
    ok: bool
    why: str
    got: str
    named_unknown: bool = False  # a rank was named where the truth is "unknown"


@dataclass
class EvalResult:
    results: list[CaseResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def per_class(self) -> dict[str, tuple[int, int]]:
        tot: Counter[str] = Counter()
        ok: Counter[str] = Counter()
        for r in self.results:
            tot[r.cls] += 1
            ok[r.cls] += r.ok
        return {c: (ok[c], tot[c]) for c in sorted(tot)}

    @property
    def accuracy(self) -> float:
        return sum(r.ok for r in self.results) / len(self.results) if self.results else 0.0

    def min_class_accuracy(self, min_cases: int = 5) -> float:
        accs = [ok / n for ok, n in self.per_class().values() if n >= min_cases]
        return min(accs) if accs else 1.0


def _summary(incs: list[dict[str, Any]]) -> str:
    return "; ".join(f"{i['severity']} {i['failure']} rank={i['initiator']['rank']}" for i in incs[:3]) or "no incidents"


def judge(case: Case, report: dict[str, Any]) -> tuple[bool, str, bool]:
    """(right?, why not, named a rank where the truth is unknown?)"""
    incs = report["incidents"]
    loud = [i for i in incs if i["severity"] in _LOUD]
    cls = case.failure_class
    if cls in QUIET_CLASSES:
        return (not loud, "a healthy/benign run raised a warning or critical incident" if loud else "", False)
    ids = CLASS_IDS.get(cls)
    if ids is None:
        return False, f"unknown failure class {cls!r}", False
    if not incs:
        return False, "no incident", False
    top = incs[0]
    rank = top["initiator"]["rank"]
    named_unknown = case.expected_initiating_rank is None and rank is not None
    if top["failure"] not in ids:
        return False, f"top incident {top['failure']}, expected one of {sorted(ids)}", named_unknown
    # a rank the engine marks as inferred (a single node's ``GPU 3``) where the truth is
    # "unknown" is a hint, not a wrong answer: it is counted in ``named_unknown`` instead
    hint = case.expected_initiating_rank is None and bool(top["initiator"].get("inferred"))
    if rank != case.expected_initiating_rank and not hint:
        return False, f"initiator rank {rank}, expected {case.expected_initiating_rank}", named_unknown
    blamed = {i["initiator"]["rank"] for i in loud} - {None}
    bad = blamed & (set(case.collateral_ranks) - {case.expected_initiating_rank})
    if case.must_not_blame_rank is not None and case.must_not_blame_rank in blamed:
        bad.add(case.must_not_blame_rank)
    if bad:
        return False, f"blames collateral rank(s) {sorted(bad)}", named_unknown
    return True, "", named_unknown


def find_cases(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.rglob("case.json"))


def evaluate(root: Path) -> EvalResult:
    out = EvalResult()
    for d in find_cases(root):
        name = str(d.relative_to(root)) if d != root else d.name
        try:
            case = Case.model_validate_json((d / "case.json").read_text(encoding="utf-8"))
        except ValidationError as exc:
            err = exc.errors()[0]
            field_ = ".".join(str(x) for x in err["loc"]) or "(document)"
            out.errors.append(f"{name}: case.json: {field_}: {err['msg']}")
            continue
        except (OSError, ValueError) as exc:
            out.errors.append(f"{name}: case.json: {str(exc).splitlines()[0]}")
            continue
        logs = [str(p) for p in sorted(d.iterdir()) if p.name != "case.json" and not p.name.startswith(".")]
        if not logs:
            out.errors.append(f"{name}: no log files beside case.json")
            continue
        report = diagnose_paths(logs, job=d.name).report
        ok, why, named = judge(case, report)
        out.results.append(CaseResult(name, case.failure_class, ok, why, _summary(report["incidents"]), named))
    return out


def render(res: EvalResult) -> str:
    lines = [f"{'class':28} {'right':>7} {'cases':>6} {'acc':>7}"]
    for cls, (ok, n) in res.per_class().items():
        lines.append(f"{cls:28} {ok:>7} {n:>6} {ok / n:>7.1%}")
    n = len(res.results)
    lines.append(f"{'all':28} {sum(r.ok for r in res.results):>7} {n:>6} {res.accuracy:>7.1%}")
    unknown = [r for r in res.results if CLASS_IDS.get(r.cls) is not None]
    named = sum(r.named_unknown for r in unknown)
    lines.append(f"rank named where the truth is unknown: {named} case(s)")
    misses = [r for r in res.results if not r.ok]
    if misses:
        lines.append("")
        lines.append("misses:")
        lines += [f"  {r.name} [{r.cls}]: {r.why} (got: {r.got})" for r in misses]
    if res.errors:
        lines.append("")
        lines.append("unreadable cases:")
        lines += [f"  {e}" for e in res.errors]
    return "\n".join(lines)


def as_json(res: EvalResult) -> str:
    return json.dumps({
        "accuracy": res.accuracy,
        "per_class": {c: {"right": ok, "cases": n} for c, (ok, n) in res.per_class().items()},
        "misses": [{"case": r.name, "class": r.cls, "why": r.why, "got": r.got} for r in res.results if not r.ok],
        "named_rank_where_unknown": sum(r.named_unknown for r in res.results),
        "errors": res.errors,
    }, indent=2)
