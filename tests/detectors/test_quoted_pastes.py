"""Logs pasted inside a markdown blockquote (``> `` before every line, as GitHub threads and
e-mail replies quote them) read like the log itself; and torch < 2.0's bare ``RuntimeError:
Socket Timeout`` (c10d's store / gloo socket wait, later ``DistStoreError``) is a process that
waited on its peers. Real lines from dmlc/dgl#3629 (DistDGL's trainers, an all_reduce at start-up)."""

from __future__ import annotations

from detectors.prefixes import split_prefixes
from tests.helpers import engine_verdict

_DGL = [
    ">   File \"train_dist.py\", line 171, in pad_data",
    ">     dist.all_reduce(num_nodes, dist.ReduceOp.MAX)",
    ">   File \"/opt/conda/lib/python3.8/site-packages/torch/distributed/distributed_c10d.py\", line 1285, in all_reduce",
    ">     work = default_pg.allreduce([tensor], opts)",
    "> RuntimeError: Socket Timeout",
]


def test_quote_marks_are_not_the_log_s() -> None:
    assert split_prefixes("> RuntimeError: Socket Timeout").body == "RuntimeError: Socket Timeout"
    assert split_prefixes(">   File \"x.py\", line 3").body == "  File \"x.py\", line 3"  # the indentation stays
    assert split_prefixes("> > [rank1]: RuntimeError: x").rank == 1  # a nested quote, then the rank tag


def test_a_quoted_socket_timeout_is_a_collective_wait() -> None:
    assert [i.failure for i in engine_verdict(_DGL)][:1] == ["collective_timeout"]
    assert [i.failure for i in engine_verdict([x[2:] for x in _DGL])][:1] == ["collective_timeout"]


def test_other_socket_messages_are_not_a_wait() -> None:
    # a lower-case 'socket timeout' from an HTTP client is another library's exception
    assert [i.failure for i in engine_verdict(["RuntimeError: socket timeout while fetching the dataset index"])] == [
        "rank_exception"]
