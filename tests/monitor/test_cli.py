"""The CLI as a user runs it: a real subprocess, real files, exit codes and messages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO


def rw(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "monitor", *args], cwd=REPO, input=stdin.decode() if stdin else None,
        capture_output=True, text=True, timeout=120,
    )


def test_missing_path_clear_message_exit_2(tmp_path: Path) -> None:
    r = rw("diagnose", str(tmp_path / "missing"))
    assert r.returncode == 2
    assert "no such file or directory" in r.stderr and "Traceback" not in r.stderr


def test_empty_directory(tmp_path: Path) -> None:
    r = rw("diagnose", str(tmp_path))
    assert r.returncode == 2 and "no readable log files" in r.stderr and "Traceback" not in r.stderr


def test_binary_only_directory(tmp_path: Path) -> None:
    (tmp_path / "dump.bin").write_bytes(bytes(range(256)) * 64)
    (tmp_path / "x.log").write_bytes(b"\x00\x01\x02\x03" * 1000)
    r = rw("diagnose", str(tmp_path))
    assert r.returncode == 2 and "binary" in r.stderr and "Traceback" not in r.stderr


def test_malformed_file_is_diagnosed_not_crashed(tmp_path: Path) -> None:
    data = (
        b"\xff\xfe\xfa garbage \x00\x00 line\n" + b"x" * 3_000_000 + b"\n"
        + b"[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.18 GiB of which 1.00 MiB is free.\n"
        + b"[rank1]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600081 milli"
    )
    (tmp_path / "console.log").write_bytes(data)
    r = rw("diagnose", str(tmp_path), "--format", "json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    top = rep["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"]) == ("cuda_oom", 3)
    assert [c["rank"] for c in top["collateral"]] == [1]
    assert top["initiator"]["evidence"][0]["line"] == 3


def test_json_contract_and_fail_on(tmp_path: Path) -> None:
    (tmp_path / "rank0.log").write_text("step 1 | loss 2.0 | grad_norm 1.0\nstep 2 | loss nan | grad_norm nan\n")
    (tmp_path / "rank1.log").write_text("step 1 | loss 2.1 | grad_norm 1.0\nstep 2 | loss 2.0 | grad_norm nan\nstep 3 | loss nan | grad_norm nan\n")
    r = rw("diagnose", str(tmp_path), "--format", "json", "--fail-on", "nonfinite_loss")
    assert r.returncode == 3, r.stderr
    rep = json.loads(r.stdout)
    assert set(rep) >= {"job", "ranks", "context", "incidents"}
    assert rep["ranks"] == [0, 1]
    inc = rep["incidents"][0]
    assert set(inc) >= {"id", "status", "severity", "failure", "title", "hardware", "initiator", "collateral", "root_cause", "fix", "verify"}
    assert inc["failure"] == "nonfinite_loss" and inc["initiator"]["rank"] == 0 and inc["initiator"]["step"] == 2
    assert inc["status"] == "final" and inc["severity"] == "critical" and inc["hardware"] is False
    assert inc["initiator"]["evidence"][0] == {"path": "rank0.log", "line": 2, "text": "step 2 | loss nan | grad_norm nan"}
    assert {(c["rank"], c["step"]) for c in inc["collateral"]} == {(1, 2)}
    # the same bytes give the same ids
    again = json.loads(rw("diagnose", str(tmp_path), "--format", "json").stdout)
    assert again["incidents"][0]["id"] == inc["id"]


def test_healthy_job_has_no_incidents(tmp_path: Path) -> None:
    (tmp_path / "rank0.log").write_text("".join(f"step {i} | loss {2.0 - i * 0.01:.3f} | grad_norm 1.0\n" for i in range(1, 60)))
    r = rw("diagnose", str(tmp_path), "-f", "json")
    assert r.returncode == 0 and json.loads(r.stdout)["incidents"] == []


def test_stdin_and_markdown(tmp_path: Path) -> None:
    paste = b"[rank7]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
    r = rw("diagnose", "-", "--format", "markdown", stdin=paste)
    assert r.returncode == 0, r.stderr
    assert "cuda_illegal_memory_access" in r.stdout and "Initiating rank:** 7" in r.stdout


def test_unknown_fail_on_id() -> None:
    r = rw("diagnose", "-", "--fail-on", "bogus", stdin=b"x\n")
    assert r.returncode == 2 and "unknown failure id" in r.stderr


def test_catalog_list_and_show() -> None:
    r = rw("catalog", "list", "--format", "json")
    assert r.returncode == 0
    ids = {e["id"] for e in json.loads(r.stdout)}
    assert {"amp_bf16_vs_fp16", "rank_hang", "gpu_xid"} <= ids
    shown = rw("catalog", "list")
    for fid in ids:
        assert fid in shown.stdout
    r = rw("catalog", "show", "amp_bf16_vs_fp16", "--format", "markdown")
    assert r.returncode == 0 and "## Fix" in r.stdout
    assert rw("catalog", "show", "nope").returncode == 2


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_output_file(tmp_path: Path, fmt: str, real_logs: Path) -> None:
    out = tmp_path / "report"
    r = rw("diagnose", str(real_logs / "036-funasr-rank2-oom-peers-timeout"), "--format", fmt, "--output", str(out))
    assert r.returncode == 0, r.stderr
    assert "cuda_oom" in out.read_text()
