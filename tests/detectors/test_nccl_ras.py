"""NCCL's RAS status report (NCCL 2.24+, ``ncclras``): a communicator whose ranks launched
different numbers of a collective (format from NVIDIA/nccl src/ras/client_support.cc). The
ranks behind it stopped (a hang); the ranks the report lists are the ones ahead, waiting."""

from __future__ import annotations

from tests.helpers import engine_verdict

_REPORT = [
    "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors",
    "    0         1         4         8        32        32   RUNNING  MISMATCH",
    "#0-0 (fa93daea854b060b) MISMATCH",
    "  Communicator ranks have different AllGather operation counts",
    "  30 ranks have launched up to operation 640",
    "  2 ranks have launched up to operation 641",
    "  Rank 12 -- GPU 4 managed by process 323032 on node 10.137.190.124",
    "  Rank 13 -- GPU 5 managed by process 323033 on node 10.137.190.124",
]


def test_a_collective_count_mismatch_is_a_hang_naming_none_of_the_ranks_ahead() -> None:
    top = engine_verdict(_REPORT)[0]
    assert (top.failure, top.rank) == ("rank_hang", None)
