"""TensorFlow's collective executor (MultiWorkerMirroredStrategy) aborting its collectives: a
communication failure (the gRPC transport gone, workers that disagree about a group) is an
``nccl_error``; a deadline exceeded is a waiter's timeout; an input's end ('Out of range: End of
sequence') is neither. NCCL's bootstrap retrying a connect with no route to its peer is the
failure itself, not a transient. Lines as the threads named pasted them."""

from __future__ import annotations

from tests.helpers import engine_verdict

# mlcommons/training#272 (corpus holdout22 h22c-021): every replica's ring all-reduce at step 3400
_RING = ["2019-05-20 12:05:41.289749: E tensorflow/core/common_runtime/ring_reducer.cc:369] Aborting RingReduce with "
         "Unavailable: OS Error",
         "2019-05-20 12:05:41.289831: W tensorflow/core/common_runtime/base_collective_executor.cc:203] "
         "BaseCollectiveExecutor::StartAbort Unavailable: OS Error"]
# tensorflow/tensorflow#33979 (corpus h22c-020): workers that disagree about a collective group
_GROUP = ["2019-11-04 16:59:38.489335: W tensorflow/core/common_runtime/base_collective_executor.cc:216] "
          "BaseCollectiveExecutor::StartAbort Internal: Collective Op  has group_size 8 and group_key2 but that group "
          "has size 4"]
# a TF 2.12 MultiWorkerMirroredStrategy job (corpus h13b-025)
_DEADLINE = ["2023-05-25 11:10:57.934361: E tensorflow/core/common_runtime/base_collective_executor.cc:249] "
             "BaseCollectiveExecutor::StartAbort DEADLINE_EXCEEDED: Deadline Exceeded"]
_END = ["2021-03-01 10:00:00.000000: W tensorflow/core/common_runtime/base_collective_executor.cc:217] "
        "BaseCollectiveExecutor::StartAbort Out of range: End of sequence"]


def test_a_collective_aborted_on_a_communication_failure_is_an_nccl_error() -> None:
    assert [i.failure for i in engine_verdict(_RING)][:1] == ["nccl_error"]
    assert [i.failure for i in engine_verdict(_GROUP)][:1] == ["nccl_error"]


def test_a_deadline_is_a_timeout_and_an_inputs_end_is_nothing() -> None:
    assert [i.failure for i in engine_verdict(_DEADLINE)][:1] == ["collective_timeout"]
    assert all(i.failure not in ("nccl_error", "collective_timeout") for i in engine_verdict(_END))


def test_no_route_to_the_peer_is_no_transient() -> None:
    # hiyouga/LlamaFactory#8045 (corpus h22b-007): the worker node never reaches the master
    lines = [f"zgiot:1183664:1184669 [0] NCCL INFO socketPollConnect: connect returned No route to host, retrying "
             f"({n}/34) after sleep for {n}00 msec" for n in range(30, 35)]
    assert [(i.failure, i.severity) for i in engine_verdict(lines)][:1] == [("nccl_error", "critical")]


def test_a_jax_sync_barrier_some_tasks_never_reached_is_a_hang() -> None:
    # marin-community/levanter#432 (corpus h15a-033): two tasks never reached the sync barrier
    head = "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: {}. Timed out task names:"
    sync = [head.format("multihost_broadcast_sync0"), "/job:jax_worker/replica:0/task:3", "/job:jax_worker/replica:0/task:0"]
    assert [i.failure for i in engine_verdict(sync)][:1] == ["rank_hang"]
    # the client's start-up barrier: the other processes never connected (corpus h12b-030)
    connect = [head.format("PjRT_Client_Connect"), *(f"/job:jax_worker/replica:0/task:{t}" for t in range(1, 8))]
    assert all(i.failure != "rank_hang" for i in engine_verdict(connect))
