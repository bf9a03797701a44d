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
