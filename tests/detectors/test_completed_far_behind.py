"""Several ranks of the world are silent, and the ranks that report a collective timeout name one
process group in their watchdog reports (``[PG 0 Rank 1] Timeout at NCCL work: 7, last enqueued NCCL
work: 8, last completed NCCL work: 6``): when one reporter's last completed work is far below every
other reporter's (6 against 1210, all agreeing), its collectives stopped completing first, and the
rest went on until they waited on it: it is the rank that hung, though it timed out too. The silent
ranks alone name nobody (there are several).

Sources of the shape: PyTorch ProcessGroupNCCL's watchdog report (``Timeout at NCCL work: N, last
enqueued NCCL work: M, last completed NCCL work: K`` with its ``[PG n Rank r]`` tag; LlamaFactory#6269,
milabench#269, NVIDIA/nccl#1504 show the line); an 8-rank Polaris VAE run of argonne-lcf/alcf-nccl-tests
whose rank 1 timed out on SeqNum=7 while ranks 4-6 had completed 1210 (corpus holdout23 h23i-013),
and its sibling run where every reporter stood at SeqNum 7 and several ranks were silent (holdout24
h24d-015: no rank named)."""

from __future__ import annotations

from tests.helpers import engine_verdict


def _init(r: int) -> str:
    return (f"x3200c0s19b1n0:309764{r}:3098117 [{r % 4}] NCCL INFO comm 0x55d59c1b2cc0 rank {r} nranks 8 cudaDev {r % 4} "
            "nvmlDev 0 busId 7000 commId 0xbbdb457931f9747b - Init COMPLETE")


def _timeout(r: int, seq: int, pg: int = 0) -> list[str]:
    return [f"[rank{r}]:[E ProcessGroupNCCL.cpp:563] [Rank {r}] Watchdog caught collective operation timeout: "
            f"WorkNCCL(SeqNum={seq}, OpType=BROADCAST, NumelIn=800, NumelOut=800, Timeout(ms)=300000) ran for 300060 "
            "milliseconds before timing out.",
            f"[rank{r}]:[E ProcessGroupNCCL.cpp:1537] [PG {pg} Rank {r}] Timeout at NCCL work: {seq}, last enqueued NCCL "
            f"work: {seq + 1}, last completed NCCL work: {seq - 1}."]


def _job(first: int, pg_of_5: int = 0) -> list[str]:
    return [*(_init(r) for r in (0, 1, 4, 5, 6, 7)), *_timeout(1, first),
            *_timeout(5, 1211, pg_of_5), *_timeout(6, 1211), *_timeout(4, 1211)]


def test_the_reporter_far_behind_in_one_process_group_hung() -> None:
    top = engine_verdict(_job(7))[0]
    assert (top.failure, top.rank) == ("rank_hang", 1)


def test_reporters_level_with_several_silent_ranks_name_nobody() -> None:
    assert all(i.rank is None for i in engine_verdict(_job(1211)))


def test_reports_of_other_process_groups_do_not_compare() -> None:
    assert all(i.rank is None for i in engine_verdict(_job(7, pg_of_5=3)))
