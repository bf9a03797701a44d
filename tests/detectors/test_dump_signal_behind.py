"""A rank that received another rank's flight-recorder dump signal reports its own progress in the
same line (``Last enqueued NCCL work: 1, last completed NCCL work: 1``). When that is below the
collective the other ranks timed out on (SeqNum=2), it never entered that collective: it is the rank
they waited for (a hang), however busy its own lines look. When it had enqueued as much as they
had, it is one more waiting rank and names nobody.

Source of the shape: a torchrun PPO/GA job whose rank 0 ran a 748 s/it genetic-algorithm phase while
ranks 1-3 timed out on ALLREDUCE SeqNum=2 after two hours (corpus holdout24 h24e-015); the opposite
case, equal counts on both ranks, from vllm-omni (h5-079)."""

from __future__ import annotations

from tests.helpers import engine_verdict


def _timeout(r: int) -> list[str]:
    return [f"[rank{r}]:[E625 16:59:54.513321061 ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog caught collective operation "
            "timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=7200000) ran for 7200046 "
            "milliseconds before timing out.",
            f"[rank{r}]:[E625 16:59:54.513500000 ProcessGroupNCCL.cpp:2168] [PG ID 0 PG GUID 0(default_pg) Rank {r}]  "
            "failure detected by watchdog at work sequence id: 2 PG status: last enqueued work: 2, last completed work: 1"]


def _received(enqueued: int) -> str:
    return ("[rank0]:[E625 16:59:55.404856442 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID 0(default_pg) Rank 0] Received a "
            f"dump signal due to a collective timeout from  rank 2 and we will try our best to dump the debug info. Last "
            f"enqueued NCCL work: {enqueued}, last completed NCCL work: 1.")


def test_the_receiver_that_never_enqueued_the_timed_out_collective_hung() -> None:
    lines = [*_timeout(1), *_timeout(3), *_timeout(2), _received(1)]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("rank_hang", 0)


def test_a_receiver_as_far_as_the_others_names_nobody() -> None:
    lines = [*_timeout(1), *_timeout(3), *_timeout(2), _received(2)]
    assert all(i.failure != "rank_hang" or i.rank is None for i in engine_verdict(lines))
