"""JAX/XLA's coordination service (multi-controller JAX on TPU and GPU): a sync barrier of the
running job that some tasks never reached is a hang of those tasks (as PyTorch's monitoredBarrier
report is; round 17 changed this from a waiter's report), the client's start-up barrier a waiter's
report, and the leader's "task N ... heartbeat timeout" names the process that stopped."""

from __future__ import annotations

from detectors.diagnosis import build_report
from tests.helpers import engine_verdict, fed_state


def _incidents(lines: list[str]) -> list[dict]:
    return build_report(fed_state(lines, "host0.log"))["incidents"]


def test_a_sync_barrier_some_tasks_never_reached_is_their_hang() -> None:
    # https://github.com/marin-community/levanter/issues/432 (levanter's multihost_broadcast_sync)
    lines = [
        '  File "/home/virginiaadams/levanter/src/levanter/utils/jax_utils.py", line 75, in multihost_broadcast_sync',
        '    client.wait_at_barrier(f"multihost_broadcast_sync{_sync_counter}", timeout_in_ms=int(timeout * 1000.0))',
        "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: multihost_broadcast_sync0. Timed out task names:",
        "/job:jax_worker/replica:0/task:3",
        "/job:jax_worker/replica:0/task:0",
        "",
        "Additional GRPC error information from remote target unknown_target_for_coordination_leader while calling /tensorflow.CoordinationService/Barrier:",
    ]
    top = _incidents(lines)[0]
    assert top["failure"] == "rank_hang"
    assert top["initiator"]["rank"] is None  # two tasks listed: no one rank


def test_the_start_up_barrier_is_a_waiters_report() -> None:
    # ayaka14732/llama-2-jax#20 (corpus h12b-030): the other seven processes never connected
    lines = ["jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: "
             "PjRT_Client_Connect. Timed out task names:", *(f"/job:jax_worker/replica:0/task:{t}" for t in range(1, 8))]
    top = _incidents(lines)[0]
    assert (top["failure"], top["initiator"]["rank"]) == ("collective_timeout", None)


def test_the_leader_names_the_task_whose_heartbeats_stopped() -> None:
    # https://github.com/jax-ml/jax/issues/23599 (qGentry's comment, XLA's tsl path, 2024)
    lines = ["2024-10-09 15:47:38.568412: E external/xla/xla/tsl/distributed_runtime/coordination/coordination_service.cc:1170] "
             "/job:jax_worker/replica:0/task:0 has been set to ERROR in coordination service: UNAVAILABLE: Task "
             "/job:jax_worker/replica:0/task:0 heartbeat timeout. This indicates that the remote task has failed, got "
             "preempted, or crashed unexpectedly. Check the task logs for an earlier error to debug further. "
             "[type.googleapis.com/tensorflow.CoordinationServiceError='']"]
    top = _incidents(lines)[0]
    assert top["failure"] == "rank_killed"
    assert top["initiator"]["rank"] == 0


def test_the_task_number_is_the_rank_whoever_logs_it() -> None:
    # the same line shape with TensorFlow's 2022 path and another task number (the leader, task 0,
    # logs it about task 5): the rank is the task named, not the speaker
    lines = ["2022-11-15 16:03:15.140058: E external/org_tensorflow/tensorflow/core/distributed_runtime/coordination/"
             "coordination_service.cc:954] /job:jax_worker/replica:0/task:5 has been set to ERROR in coordination "
             "service: UNAVAILABLE: Task /job:jax_worker/replica:0/task:5 heartbeat timeout. This indicates that the "
             "remote task has failed, got preempted, or crashed unexpectedly. [type.googleapis.com/tensorflow.CoordinationServiceError='']"]
    top = _incidents(lines)[0]
    assert (top["failure"], top["initiator"]["rank"]) == ("rank_killed", 5)


def test_a_task_that_reconnected_as_a_new_incarnation_had_died_and_is_named() -> None:
    # a multi-host JAX/Grain training log (corpus holdout24 h24b-012): the coordination service saw
    # task 1 connect again as a new process, aborted every task, and this survivor terminated itself
    lines = [
        "2025-04-05 18:39:10.837611: E external/xla/xla/tsl/distributed_runtime/coordination/coordination_service.cc:962]"
        " /job:jax_worker/replica:0/task:1 unexpectedly tried to connect with a different incarnation. It has likely restarted.",
        "E0405 18:39:10.837983     387 coordination_service_agent.cc:455] Polled an error from coordination service (this "
        "can be an error from this or another task).",
        "2025-04-05 18:39:10.838153: F external/xla/xla/pjrt/distributed/client.h:80] Terminating process because the JAX "
        "distributed service detected fatal errors. This most likely indicates that another task died; see the other task "
        "logs for more details.",
    ]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("rank_killed", 1)
