from __future__ import annotations

from pathlib import Path

import pytest

from monitor.inputs import InputError, discover, path_ranks


@pytest.mark.parametrize(
    ("rel", "want"),
    [
        ("none_k3x9z1qa/attempt_0/3/stderr.log", (None, 3, 0)),
        ("run/attempt_2/0/stdout.log", (None, 0, 2)),
        ("rank3.log", (3, None, None)),
        ("node1/rank_11.log", (11, None, None)),
        ("train-rank-3.out", (3, None, None)),
        ("logs/local_rank_5.txt", (None, 5, None)),
        ("rank7/output.log", (7, None, None)),
        ("combined.log", (None, None, None)),
        ("rankwatch/job.log", (None, None, None)),
        ("slurm-12345.out", (None, None, None)),
    ],
)
def test_path_ranks(rel: str, want: tuple) -> None:
    assert path_ranks(rel) == want


def test_discover_skips_binary_and_reports_it(tmp_path: Path) -> None:
    (tmp_path / "rank0.log").write_text("step 1 | loss 1.0\n")
    (tmp_path / "core").write_bytes(b"\x7fELF" + b"\x00" * 100)
    (tmp_path / "weights.pt").write_bytes(b"\x80\x02" + b"\x00" * 10)
    files, notes = discover([str(tmp_path)])
    assert [f.display for f in files] == ["rank0.log"]
    assert any("core" in n for n in notes) and any("weights.pt" in n for n in notes)


def test_missing_path_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        discover([str(tmp_path / "nope")])


def test_attack_fifo_in_a_directory_is_skipped_never_opened(tmp_path: Path) -> None:
    """Issue #14 defect 6: `diagnose` on a directory holding a FIFO used to block forever."""
    import os
    import subprocess
    import sys

    from tests.conftest import REPO

    (tmp_path / "rank_0.log").write_text("[rank0]: torch.OutOfMemoryError: CUDA out of memory.\n")
    os.mkfifo(tmp_path / "rank_1.log")
    os.symlink(tmp_path / "rank_1.log", tmp_path / "link.log")
    files, notes = discover([str(tmp_path)])
    assert [f.display for f in files] == ["rank_0.log"]
    assert sorted(notes) == ["skipped link.log: not a regular file (a FIFO)", "skipped rank_1.log: not a regular file (a FIFO)"]
    # the CLI as a user runs it: it finishes (the timeout only guards the suite) and says what it skipped
    r = subprocess.run([sys.executable, "-m", "monitor", "diagnose", str(tmp_path), "-f", "json"], cwd=REPO,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "cuda_oom" in r.stdout


def test_attack_fifo_given_by_name_is_refused_without_opening(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "pipe.log")
    with pytest.raises(InputError, match="not a regular file"):
        discover([str(tmp_path / "pipe.log")])
