"""torchrun's failure summary read through srun's ``--label`` prefix.

Two torchrun agents started by ``srun --label`` (one task per node) print their summaries with
the task label in front of the indented fields (``1:   rank      : 4 (local_rank: 0)``). The
label is kept in the body by the prefix reader there (a number, a colon and indentation read
like a numbered row), so the summary's fields went unread and the node's task number stood in for
the first failed worker. The lines are torch 2.5's summary under Slurm (corpus h27a-006, a
DeepSpeed-Ulysses job whose every rank ran out of memory on the same allocation).
"""

from __future__ import annotations

from tests.helpers import engine_verdict


def _oom(rank: int, gpu: int) -> str:
    return (f"1: [rank{rank}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.06 GiB. GPU {gpu} has a "
            "total capacity of 39.38 GiB of which 2.19 GiB is free. Including non-PyTorch memory, this process has "
            "37.18 GiB memory in use.")


_SUMMARY = [
    "1: Root Cause (first observed failure):",
    "1: [0]:",
    "1:   time      : 2026-03-24_14:43:26",
    "1:   host      : hercules.example.edu",
    "1:   rank      : 4 (local_rank: 0)",
    "1:   exitcode  : 1 (pid: 457148)",
    "1:   error_file: <N/A>",
    "1: ============================================================",
    "srun: error: hercules: task 1: Exited with exit code 1",
]


def test_the_summary_behind_the_label_names_the_first_failed_worker() -> None:
    lines = [_oom(5, 1), _oom(6, 2), _oom(4, 0), _oom(7, 3), *_SUMMARY]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("cuda_oom", 4)
