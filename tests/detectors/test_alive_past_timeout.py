"""A rank that keeps printing after its peers' collective timed out was not in that collective:
it was still busy elsewhere (spinning on a lock, retrying a download, waiting on a queue), so
it is the one they waited for (correlate ``noted_ranks`` → hang). Its lines carry its rank in
the launcher's line tag but no metric, so only the file's last notes (parse.py
``_last_notes``) show it at all.

The tags are the launchers' own: Open MPI's ``mpirun --tag-output`` (``[jobid,rank]<stderr>:``),
Slurm's ``srun --label`` (``1: ``) and torchrun's ``--tee 3`` (``[rank1]:``). The messages are
the shapes of a rank waiting on a dataset cache's lock file (absl logging, as HF datasets' and
torch hub's file locks make a rank wait) and gloo's own timeout (torch 2.x,
``unbound_buffer.cc``)."""

from __future__ import annotations

import pytest

from detectors.oddrank import last_own_lines
from tests.helpers import engine_verdict, fed_whole_and_chunked

_TAGS = {
    "mpirun": lambda r: f"[1,{r}]<stderr>:",
    "srun": lambda r: f"{r}: ",
    "torchrun": lambda r: f"[rank{r}]:",
}

_GLOO = ("RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] "
         "Timed out waiting 30000ms for recv operation to complete")


def _timeout(tag: str) -> list[str]:
    return [f"{tag}Traceback (most recent call last):",
            f'{tag}  File "/home/user/train/train.py", line 25, in main',
            f"{tag}    dist.barrier()",
            f'{tag}  File "/opt/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 5356, in barrier',
            f"{tag}    work.wait()",
            f"{tag}{_GLOO}"]


def _job(launcher: str, busy: int, ranks: int = 3, busy_after: bool = True) -> list[str]:
    """``ranks`` ranks prepare a dataset cache; every one but ``busy`` enters the barrier and
    times out there, while ``busy`` waits on the cache's lock (and, with ``busy_after``, still
    says so after its peers' timeouts)."""
    tag = _TAGS[launcher]
    out: list[str] = []
    for r in range(ranks):
        out.append(f"{tag(r)}I1207 20:46:24.4{r}7266 1399935 train.py:13] rank {r}/{ranks} joined process group")
        out.append(f"{tag(r)}I1207 20:46:24.4{r}7578 1399935 train.py:18] rank {r}: preparing dataset cache")
        if r != busy:
            out.append(f"{tag(r)}I1207 20:46:24.4{r}7685 1399935 train.py:24] rank {r}: dataset ready, entering barrier")
    for s in (0, 10, 20):
        out.append(f"{tag(busy)}I1207 20:46:{24 + s}.440587 1399935 train.py:22] rank {busy}: cache locked by "
                   f"another process, waiting ({s}s)")
    for r in range(ranks):
        if r != busy:
            out += _timeout(tag(r))
    if busy_after:
        out.append(f"{tag(busy)}I1207 20:47:04.465642 1399935 train.py:22] rank {busy}: cache locked by "
                   "another process, waiting (40s)")
    return out


@pytest.mark.parametrize("launcher", sorted(_TAGS))
@pytest.mark.parametrize("busy", [1, 2])
def test_the_rank_still_printing_after_the_timeouts_is_the_one_waited_for(launcher: str, busy: int) -> None:
    top = engine_verdict(_job(launcher, busy))[0]
    assert (top.failure, top.rank) == ("rank_hang", busy)


def test_a_rank_last_heard_before_the_timeouts_is_not_singled_out() -> None:
    # rank 1's last line came before its peers gave up: it may as well be in the barrier, its
    # report not in the excerpt
    top = engine_verdict(_job("mpirun", 1, busy_after=False))[0]
    assert top.failure == "collective_timeout"
    assert top.rank is None


@pytest.mark.parametrize("size", [1, 4, 9])
def test_chunking_does_not_change_it(size: int) -> None:
    whole, live = fed_whole_and_chunked(_job("srun", 2), size)
    assert [(i.failure, i.rank) for i in whole.verdict()] == [(i.failure, i.rank) for i in live.verdict()]
    assert (whole.verdict()[0].failure, whole.verdict()[0].rank) == ("rank_hang", 2)


def test_a_timeout_report_cut_after_its_glog_header_is_no_note() -> None:
    # verl's FSDP SFT job (dist-037 in the corpus): the paste ends in rank 6's watchdog report cut
    # before its header's closing bracket. That is the start of a failure's report, like its
    # peers', not a note of a rank still at work
    lines = [
        "[rank7]:[E419 10:42:28.858931807 ProcessGroupNCCL.cpp:616] [Rank 7] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=4486, OpType=ALLTOALL, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
        "ran for 600045 milliseconds before timing out.",
        "[rank3]:[E419 10:42:28.883292273 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=4486, OpType=ALLTOALL, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
        "ran for 600011 milliseconds before timing out.",
        "[rank6]:[E419 10:42:28.887728774 ProcessGroupNCCL.cpp",
    ]
    assert ("g", 6) not in last_own_lines(lines)
    top = engine_verdict(lines)[0]
    assert top.failure == "collective_timeout"
    assert top.rank is None
