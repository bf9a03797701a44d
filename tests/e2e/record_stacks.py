"""Record ``py-spy dump`` outputs of real stuck torchrun jobs as fixtures.

    .venv/bin/python -m tests.e2e.record_stacks            # every scenario
    .venv/bin/python -m tests.e2e.record_stacks --only lock

Writes ``tests/detectors/fixtures/stacks/<scenario>/rank_<R>.txt``: the dump of each
rank's process exactly as py-spy printed it, except the ``Process N: <command line>`` and
``Python vX (<path>)`` header lines, whose host paths are replaced by neutral ones. The
expected verdicts live in the unit tests, written by hand from how each fault is injected.
"""

from __future__ import annotations

import argparse
import re
import tempfile
import time
from pathlib import Path

from monitor.stacks import RankProcesses, Sampler, StackSettings
from tests.e2e.stuckjob import stuck_job

OUT = Path(__file__).resolve().parents[1] / "detectors" / "fixtures" / "stacks"
SCENARIOS: dict[str, tuple[str, ...]] = {
    "queue": ("queue",),
    "lock": ("lock",),
    "extra_collective": ("extra_collective",),
    "slow": ("none", "--step-sleep", "6"),
}


def neutral(text: str) -> str:
    text = re.sub(r"^(Process \d+: ).*$", r"\1python3 -u /home/user/job/stuck.py", text, count=1, flags=re.M)
    return re.sub(r"^(Python v[\d.]+) \(.*\)$", r"\1 (/usr/bin/python3)", text, count=1, flags=re.M)


def record(name: str, args: tuple[str, ...]) -> None:
    with tempfile.TemporaryDirectory() as tmp, stuck_job(Path(tmp) / "logs", *args) as job:
        job.wait_steps(3 if name != "slow" else 1)
        time.sleep(4)  # the faulty rank is blocked by now; the others wait for it
        procs = RankProcesses(pattern=re.escape(job.tag)).refresh()
        assert len(procs) == 4, procs
        sampler = Sampler(StackSettings())
        exe = sampler.py_spy()
        assert exe is not None, "py-spy not installed"
        dest = OUT / name
        dest.mkdir(parents=True, exist_ok=True)
        for rp in procs:
            res, text = sampler.dump(exe, rp.pid, 10)
            assert res == "ok", (res, text)
            (dest / f"rank_{rp.rank}.txt").write_text(neutral(text))
        print(f"{name}: {len(procs)} dumps in {dest}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", choices=sorted(SCENARIOS))
    a = p.parse_args()
    for name, args in SCENARIOS.items():
        if a.only in (None, name):
            record(name, args)


if __name__ == "__main__":
    main()
