"""A process group's set-up that one rank never reached: the store's words, not a rank's.

1. PyTorch 2.4+'s c10d prints its client-socket timeout in milliseconds ("timed out after
   25000ms while trying to connect to (host, port)"; before, "after 1800s"): the TCPStore
   client never reached the store, an ``nccl_error`` of the job's set-up either way. The ms line
   is the shape of ``torch/csrc/distributed/c10d/socket.cpp`` in torch 2.5-2.9 (as in
   nvidia-cosmos/cosmos-transfer1#80's ``waitForInput ... timed out after 1800000ms``); the
   seconds line is lllyasviel/ControlNet#382's.
2. Gloo's full-mesh rendezvous: every rank posts its address under
   ``<process group prefix>//cpu//<device>/<rank>`` and waits for the others'. The ranks that
   joined time out on the key of the one that did not ("DistStoreError: wait timeout after
   1800000ms, keys: /default_pg/0//54//cpu//0/2" from rank 0 while rank 2 "failed to start", in
   vllm-project/vllm-ascend#2248). A set-up failure that no line ties to a rank is that rank's
   (inferred), and a launcher's one failed worker (the first waiter to exit) does not claim the
   job's set-up line.
"""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict

_BANNER = [
    "W1206 01:40:24.643000 9181 torch/distributed/run.py:874] *****************************************",
    "W1206 01:40:24.643000 9181 torch/distributed/run.py:874] Setting OMP_NUM_THREADS environment variable for each "
    "process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal "
    "performance in your application as needed.",
    "W1206 01:40:24.643000 9181 torch/distributed/run.py:874] *****************************************",
]
_CONNECT = ("[E1206 01:40:48.661274938 socket.cpp:1028] [c10d] The client socket has timed out after 25000ms while "
            "trying to connect to (10.0.0.7, 34072).")


def _waiter(key_rank: int) -> list[str]:
    return [
        "Traceback (most recent call last):",
        '  File "/home/user/job/train.py", line 9, in <module>',
        '    dist.init_process_group("gloo", timeout=timedelta(seconds=25))',
        '  File "/opt/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 2169, '
        "in _new_process_group_helper",
        "    backend_class = ProcessGroupGloo(",
        f"torch.distributed.DistStoreError: wait timeout after 25000ms, keys: /default_pg/0//cpu//0/{key_rank}",
    ]


_LAUNCHER = [
    "E1206 01:40:53.519000 9181 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: 1) "
    "local_rank: 0 (pid: 9197) of binary: /opt/venv/bin/python3.11",
]


@pytest.mark.parametrize("line", [
    _CONNECT,
    "[E socket.cpp:793] [c10d] The client socket has timed out after 1800s while trying to connect to (127.0.0.1, 48391).",
])
def test_the_store_client_timeout_in_either_unit_is_a_set_up_failure(line: str) -> None:
    top = engine_verdict([line])[0]
    assert (top.failure, top.rank) == ("nccl_error", None)


def test_the_rank_every_waiter_waited_for_is_the_one_that_never_arrived() -> None:
    top = engine_verdict([*_BANNER, _CONNECT, *_waiter(2), *_waiter(2), *_LAUNCHER])[0]
    assert (top.failure, top.rank) == ("nccl_error", 2)
    assert top.data.get("rank_from") == "store_key" and top.data.get("inferred") is True
    assert any("waiting for rank 2's key" in line for line in top.narrative)


def test_waiters_that_name_different_ranks_name_no_one() -> None:
    top = engine_verdict([*_BANNER, _CONNECT, *_waiter(2), *_waiter(3)])[0]
    assert (top.failure, top.rank) == ("nccl_error", None)


def test_the_launchers_one_failed_worker_does_not_claim_the_jobs_set_up_line() -> None:
    # the first waiter to exit is the launcher's only failed worker; the keys here name no rank
    waiter = [*_waiter(2)[:-1], "torch.distributed.DistStoreError: wait timeout after 25000ms, keys: /default_pg/0//cuda//0"]
    top = engine_verdict([*_BANNER, _CONNECT, *waiter, *_LAUNCHER])[0]
    assert (top.failure, top.rank) == ("nccl_error", None)


def test_an_untagged_set_up_failure_takes_the_rank_the_waiters_waited_for() -> None:
    # two launchers' jobs told different world sizes (3 and 4): the rank past its own size fails in
    # gloo's context ("rank < size. 3 vs 3", no rank tag before the group exists) and the ranks of
    # the other size wait for its key
    failing = [*_waiter(3)[:-1],
               "RuntimeError: [enforce fail at /__w/pytorch/pytorch/third_party/gloo/gloo/context.cc:23] rank < size. 3 vs 3"]
    top = engine_verdict([*_BANNER, *failing, *_waiter(3), *_waiter(3)])[0]
    assert (top.failure, top.rank) == ("nccl_error", 3)
