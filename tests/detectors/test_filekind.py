"""detectors/filekind.py: what a file is, and what torchrun's error.json says (the part
``diagnose`` and the live tailer share). The error.json bytes are a recorded torchrun file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from detectors.filekind import Kind, binary_head, classify, error_json_events, read_error_json
from detectors.model import EventKind
from detectors.parse import default_parser
from detectors.parsers.base import FileState, JobParseState
from tests.conftest import REPO

GOLDEN = REPO / "tests" / "e2e" / "golden" / "exception-logdir" / "logs" / "torchrun"


@pytest.mark.parametrize(("name", "head", "kind"), [
    ("run/attempt_0/2/stderr.log", b"[rank2]: Traceback (most recent call last):\n", Kind.LOG),
    ("run/attempt_0/2/error.json", None, Kind.ERROR_JSON),
    ("ckpt/model.PT", None, Kind.SKIP),
    ("trainer_state.json", b"{}", Kind.SKIP),
    ("core", b"\x7fELF\x02\x01\x01\x00", Kind.SKIP),
    ("x.log", b"\x00\x01\x02\x03" * 1000, Kind.SKIP),
    ("rank0.log", b"", Kind.LOG),  # nothing written yet: a log
    ("job/train.py", b"raise RuntimeError('CUDA out of memory')\n", Kind.SKIP),  # source code: no log
    ("launch.sh", None, Kind.SKIP),
    ("slurm-4242.out", b"step 1 | loss 1.0\n", Kind.LOG),
    # a log that starts with a crash's NULs is still a log (its lines are read)
    ("rank0.log", b"\x00" * 1000 + b"\nstep 1 | loss 1.0 | grad_norm 1.0\n", Kind.LOG),
])
def test_classify(name: str, head: bytes | None, kind: Kind) -> None:
    assert classify(name, head)[0] is kind


def test_binary_head_needs_no_line_of_text() -> None:
    assert binary_head(b"\x00" * 4000) and not binary_head(b"\x00" * 4000 + b"\n2026-12-02 13:15:05 INFO step 6 loss 1.0\n")


def test_error_json_gives_the_rank_exception_with_its_timestamp() -> None:
    (path,) = GOLDEN.glob("*/attempt_0/2/error.json")
    raw = path.read_bytes()
    doc = json.loads(raw)
    rep = read_error_json(raw)
    assert rep is not None and rep.line.startswith("ValueError: corrupt sample in shard 3")
    assert rep.time == float(doc["message"]["extraInfo"]["timestamp"])
    fs = FileState(path="run/attempt_0/2/error.json", local_rank=2, attempt=0, job=JobParseState())
    events = error_json_events(default_parser(), raw, fs)
    assert events and all(ev.kind is EventKind.MATCH and ev.local_rank == 2 and ev.time == rep.time for ev in events)
    # half written (torchrun still writing it): not an error.json yet, nothing is said
    assert read_error_json(raw[: len(raw) // 2]) is None
    assert error_json_events(default_parser(), raw[: len(raw) // 2], fs) is None


def test_old_error_json_with_a_plain_message() -> None:
    rep = read_error_json(b'{"message": "RuntimeError: CUDA error: an illegal memory access was encountered\\nmore"}')
    assert rep is not None and rep.line == "RuntimeError: CUDA error: an illegal memory access was encountered"
    assert rep.time is None


def test_a_job_folders_script_is_not_read_as_its_log(tmp_path: Path) -> None:
    """A run folder holding the training script beside its log: the script's string literals (a
    guard's message, an error it raises) are no log lines; the diagnosis says it skipped it."""
    from monitor.diagnose import diagnose_paths

    (tmp_path / "job").mkdir()
    (tmp_path / "job" / "train.py").write_text(
        'if not torch.isfinite(gn):\n'
        '    log.warning(f"[rank {rank}] step {step:3d} | WARNING non-finite grad norm on {bad} rank(s), skipping")\n'
        'raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")\n')
    (tmp_path / "combined.log").write_text("".join(f"[rank 0] step {s} | loss {2.0 - s / 100:.3f}\n" for s in range(30)))
    report = diagnose_paths([str(tmp_path)], job="j").report
    assert [i for i in report["incidents"] if i["severity"] != "info"] == []
    assert "skipped job/train.py: not a text log: source code (.py)" in report["notes"]
