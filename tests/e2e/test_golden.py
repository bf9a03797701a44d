"""Diagnose real torchrun jobs: recorded golden cases, and one fresh run with the installed torch.

Every ``golden/<scenario>-<layout>/`` holds the logs of a real 4-rank torchrun job and an
``expected.json`` whose truth comes from how the fault was injected (see generate.py), never
from the engine. The report must name that failure and initiating rank first, must not blame
a collateral rank, and a healthy job must have nothing above ``info``.

Cases the engine diagnoses wrongly today are listed in ``KNOWN_ENGINE_MISSES`` with what it
says instead; they run as strict xfails, so a fix shows up as XPASS (and fails the run until
the entry is removed). Their expected.json keeps the truth.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .frameworks.checks import check_case as check_framework_case
from .frameworks.record import JOBS as FRAMEWORK_JOBS
from .generate import SCENARIOS

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
GOLDEN = HERE / "golden"
CASES = sorted(p.parent for p in GOLDEN.glob("*/expected.json"))
# real HF Trainer / Lightning / accelerate / Fabric / Ignite / Keras / Ray Train / TRL / skorch /
# structlog / Hydra / MMEngine / wandb jobs (frameworks/record.py):
# their truth is in JOBS, not SCENARIOS
FRAMEWORK_CASES = {job.name: job for job in FRAMEWORK_JOBS}

# case -> what the engine reports instead of the truth (for the lead; see the module doc).
KNOWN_ENGINE_MISSES: dict[str, str] = {
    # the 7 misses the real HF Trainer 5.25 / Lightning 2.6.6 jobs showed at first look (16/22, then
    # 4/5) and 5 of the 7 the accelerate / Fabric / Ignite / Keras jobs showed (25/32; issue #12)
    # were fixed in the engine, each as a class
    "sigkill-keras-console": "no incident at all: the single Keras process (no launcher) just stops "
                             "mid-epoch, the log holds no exit code, no 'Killed', no traceback",
    # first look, round 5 (fresh3: Ray Train 2.60, TRL 1.16, skorch 1.4, structlog 26.1; 19/25 right): its 6 misses
    # were fixed in the engine, each as a class (the orchestrator's pid table and error sections, folded
    # lines, plain tables named by their header; tests/detectors/test_orchestrator_lines.py)
    # first look, fw4 (Hydra 1.3, MMEngine 0.10.7, wandb 0.31 offline; 15/16 right): its miss (nan-mmengine-console)
    # was fixed in the engine as two classes (a loop-named iteration counter, a world size under an env dump's
    # name; tests/detectors/test_loop_counters.py)
}


def with_known_misses(cases: list[Path]) -> list[Any]:
    """Parametrise over ``cases``; known engine misses become strict xfails."""
    return [pytest.param(c, id=c.name, marks=pytest.mark.xfail(strict=True, reason=KNOWN_ENGINE_MISSES[c.name]))
            if c.name in KNOWN_ENGINE_MISSES else pytest.param(c, id=c.name) for c in cases]
SEVERITY_ORDER = {"critical": 2, "warning": 1, "info": 0}
EXPECTED_KEYS = {"scenario", "layout", "style", "failure", "initiator_rank", "collateral_ranks",
                 "max_severity", "command", "torch", "notes"}


def diagnose(logs: Path, *, in_process: bool = False) -> dict[str, Any]:
    """Run ``python -m monitor diagnose LOGS --format json`` from the repo root; return the report.
    ``in_process``: the same command through the CLI's own entry point in this interpreter (typer's
    runner: the same code from argument parsing to the printed JSON, without a fresh interpreter's
    start-up for each of the recorded cases; the fresh runs below go through a real subprocess)."""
    if in_process:
        from typer.testing import CliRunner

        from monitor.cli import app

        res = CliRunner().invoke(app, ["diagnose", str(logs), "--format", "json"])
        assert res.exit_code == 0, f"diagnose {logs} exited {res.exit_code}\n{res.output[-4000:]}\n{res.exception!r}"
        out: dict[str, Any] = json.loads(res.stdout)
        return out
    cmd = [sys.executable, "-m", "monitor", "diagnose", str(logs), "--format", "json"]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, (
        f"`{' '.join(cmd)}` exited {proc.returncode}\n--- stderr ---\n{proc.stderr[-4000:]}")
    try:
        report: dict[str, Any] = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        raise AssertionError(f"diagnose did not print JSON ({exc}):\n{proc.stdout[:2000]}") from None
    return report


def summarize(report: dict[str, Any]) -> str:
    """One line per incident, for assertion messages."""
    lines = [f"context: {report.get('context')}"]
    for i, inc in enumerate(report.get("incidents", [])):
        ini = inc.get("initiator") or {}
        coll = [(c.get("rank"), c.get("failure"), c.get("step")) for c in inc.get("collateral") or []]
        lines.append(f"  #{i} {inc.get('severity')} {inc.get('failure')} "
                     f"initiator=rank {ini.get('rank')} step {ini.get('step')} collateral={coll}")
    if len(lines) == 1:
        lines.append("  (no incidents)")
    return "\n".join(lines)


def check_report(report: dict[str, Any], expected: dict[str, Any]) -> None:
    """Assert the report matches the ground truth of one recorded case."""
    incidents = report["incidents"]
    what = (f"{expected['scenario']}-{expected['layout']}: expected failure={expected['failure']} "
            f"initiator={expected['initiator_rank']} collateral={expected['collateral_ranks']}\n"
            f"report:\n{summarize(report)}")

    severities = [inc["severity"] for inc in incidents]
    assert all(s in SEVERITY_ORDER for s in severities), f"unknown severity in {severities}\n{what}"
    ranked = [SEVERITY_ORDER[s] for s in severities]
    assert ranked == sorted(ranked, reverse=True), f"incidents not most important first\n{what}"

    if expected["failure"] is None:
        loud = [inc["failure"] for inc in incidents if SEVERITY_ORDER[inc["severity"]] > 0]
        assert not loud, f"healthy job, but warning/critical incidents {loud}\n{what}"
        return

    assert incidents, f"no incident reported\n{what}"
    top = incidents[0]
    assert top["failure"] == expected["failure"], f"wrong failure first\n{what}"
    assert top["initiator"]["rank"] == expected["initiator_rank"], f"wrong initiating rank\n{what}"
    collateral = set(expected["collateral_ranks"])
    blamed = [(inc["failure"], inc["initiator"]["rank"]) for inc in incidents
              if SEVERITY_ORDER[inc["severity"]] > 0 and inc["initiator"]["rank"] in collateral]
    assert not blamed, f"a collateral rank is named as an initiator: {blamed}\n{what}"


def load_expected(case: Path) -> dict[str, Any]:
    expected: dict[str, Any] = json.loads((case / "expected.json").read_text())
    return expected


def test_golden_set_is_complete() -> None:
    """Every scenario is recorded in each of its layouts, with a well-formed expected.json."""
    generated = {f"{sc.name}-{layout}" for sc in SCENARIOS.values() for layout in sc.layouts}
    # a framework job named like a generated case would overwrite it in golden/ and be judged as the job
    assert not generated & set(FRAMEWORK_CASES), sorted(generated & set(FRAMEWORK_CASES))
    want = generated | set(FRAMEWORK_CASES)
    have = {case.name for case in CASES}
    assert want == have, (f"missing: {sorted(want - have)}, unexpected: {sorted(have - want)}; "
                          "regenerate with `.venv/bin/python -m tests.e2e.generate`")
    for case in CASES:
        expected = load_expected(case)
        assert set(expected) == EXPECTED_KEYS, f"{case.name}: keys {sorted(expected)}"
        assert any((case / "logs").rglob("*.log")), f"{case.name}: no logs recorded"
        if job := FRAMEWORK_CASES.get(case.name):
            assert (expected["failure"], expected["initiator_rank"], expected["collateral_ranks"]) == (
                job.failure, job.initiator, list(job.collateral)), case.name
            continue
        sc = SCENARIOS[expected["scenario"]]
        assert (expected["failure"], expected["initiator_rank"]) == (sc.failure, sc.initiator_rank), case.name
        assert (expected["style"], expected["collateral_ranks"]) == (sc.style, list(sc.collateral_ranks)), case.name
    assert set(KNOWN_ENGINE_MISSES) <= have, f"stale KNOWN_ENGINE_MISSES: {sorted(set(KNOWN_ENGINE_MISSES) - have)}"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_logs_show_the_fault(case: Path) -> None:
    """The recorded logs still show the injected fault as the scenario defines it."""
    if job := FRAMEWORK_CASES.get(case.name):
        check_framework_case(case / "logs", job)
        return
    sc = SCENARIOS[load_expected(case)["scenario"]]
    for check in sc.checks:
        check(case / "logs", sc)


@pytest.mark.parametrize("case", with_known_misses(CASES))
def test_golden_case_diagnosis(case: Path) -> None:
    check_report(diagnose(case / "logs", in_process=True), load_expected(case))


FRESH = ["exception-logdir", "hang-console", "nan-hf-logdir"]  # a few representative cases only


@pytest.mark.e2e
@pytest.mark.parametrize("case_name", [
    pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN_ENGINE_MISSES[n]))
    if n in KNOWN_ENGINE_MISSES else n for n in FRESH])
def test_fresh_torchrun_run_is_diagnosed(case_name: str, tmp_path: Path) -> None:
    """Run the generator for real (torchrun, 4 gloo ranks) and diagnose what it recorded."""
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not importable; install the e2e extra: pip install -e '.[e2e]'")
    cmd = [sys.executable, "-m", "tests.e2e.generate", "--only", case_name, "--out", str(tmp_path)]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (f"generator failed ({proc.returncode}):\n"
                                  f"{proc.stdout[-2000:]}\n{proc.stderr[-12000:]}")
    case = tmp_path / case_name
    check_report(diagnose(case / "logs"), load_expected(case))


def test_recorded_tracebacks_cite_the_job_kit_as_it_is() -> None:
    """A recorded framework job's traceback quotes ``jobkit.py``'s source line under each of its
    frames: the module the jobs share must keep those lines where the recordings say they are
    (append to it, or re-record the cases whose tracebacks run through it)."""
    import re

    kit = (HERE / "frameworks" / "jobkit.py").read_text(encoding="utf-8").splitlines()
    frame = re.compile(r'frameworks/jobkit\.py", line (\d+), in \w+')
    cited, wrong = 0, []
    for log in sorted(GOLDEN.rglob("*.log")):
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
        for i, line in enumerate(lines[:-1]):
            m = frame.search(line)
            if m is None:
                continue
            cited += 1
            n = int(m.group(1))
            want = kit[n - 1].strip() if n <= len(kit) else "<past the end>"
            if want not in lines[i + 1]:  # (behind any prefix; Ray adds its fold mark after it)
                wrong.append(f"{log.relative_to(HERE)}:{i + 2}: line {n} is {want!r}, the log quotes {lines[i + 1].strip()!r}")
    assert cited > 0
    assert not wrong, "\n".join(wrong[:10])
