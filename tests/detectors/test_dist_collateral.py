"""What peers print after another rank dies stays collateral: the socket EOF / reset reports of
c10d's recvBytes and gloo never make the speaker an initiator."""

from __future__ import annotations

import pytest

from detectors.diagnosis import build_report
from tests.helpers import engine_verdict, fed_state


def report(text: str) -> dict:
    return build_report(fed_state(text.splitlines()))


_PEER_LINES = [
    # pytorch/pytorch#153586: torch 2.8's wording of recvBytes reading EOF
    "[W514 18:33:36.536327028 TCPStore.cpp:138] [c10d] recvValueWithTimeout failed on SocketImpl(fd=3, "
    "addr=[localhost]:34658, remote=[localhost]:1234): Failed to recv, got 0 bytes. Connection was likely closed. "
    "Did the remote server shutdown or crash?",
    # ... and the older one (the same PR's diff), raised as DistNetworkError
    "[rank0]: torch.distributed.DistNetworkError: failed to recv, got 0 bytes",
    # tdrussell/diffusion-pipe#333
    "[rank6]:[W729 10:15:17.529361055 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=76, "
    "addr=[localhost]:60950, remote=[localhost]:29500): Connection reset by peer",
    # sgl-project/sglang#1127 (gloo, with the peer's address)
    "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [10.233.87.118]:43139",
    # c10d's recvBytes before torch 2.8 (no address)
    "[rank2]: torch.distributed.DistNetworkError: Connection closed by peer",
]


@pytest.mark.parametrize("line", _PEER_LINES)
def test_a_peers_socket_eof_is_a_lost_peer_not_its_own_failure(line: str) -> None:
    top = report(line + "\n")["incidents"][0]
    assert top["failure"] == "peer_connection_lost"
    assert top["initiator"]["rank"] is None


def test_after_a_native_abort_the_peers_reports_are_collateral() -> None:
    text = ("[rank1]: free(): invalid pointer\n"
            "[rank1]: Fatal Python error: Aborted\n"
            "[rank0]: Traceback (most recent call last):\n"
            + _PEER_LINES[4].replace("[rank2]", "[rank0]") + "\n"
            "[rank0]: Exception raised from recvBytes at ../torch/csrc/distributed/c10d/Utils.hpp:672 (most recent call first):\n"
            "[rank2]: " + _PEER_LINES[3] + "\n")
    incs = report(text)["incidents"]
    assert (incs[0]["failure"], incs[0]["initiator"]["rank"]) == ("native_abort", 1)
    assert {c["rank"]: c["failure"] for c in incs[0]["collateral"]} == {0: "peer_connection_lost", 2: "peer_connection_lost"}
    assert [i for i in incs if i["initiator"]["rank"] in (0, 2) and i["severity"] != "info"] == []


# Slurm's srun epilogue (public job logs quoted in GitHub repositories; the task is SLURM_PROCID)
_SRUN_STEP = (
    "AssertionError: Expected throughput to be at least 560000.0, instead found 289619.6825559826\n"
    "srun: error: sn30-r1-h1: task 0: Exited with exit code 1\n"
    "srun: Terminating job step 30399.0\n"
    "slurmstepd: error: *** STEP 30399.0 ON sn30-r1-h1 CANCELLED AT 2024-04-03T09:40:00 ***\n"
    "srun: error: sn30-r1-h1: tasks 1,3-5: Terminated\n"
    "srun: error: sn30-r1-h1: tasks 2,6-7: Killed\n"
    "srun: Force Terminated job step 30399.0\n"
)


def test_srun_names_the_task_that_failed_first_and_the_rest_is_teardown() -> None:
    incs = report(_SRUN_STEP)["incidents"]
    assert (incs[0]["failure"], incs[0]["initiator"]["rank"], incs[0]["initiator"]["rank_from"]) == ("rank_exception", 0, "launcher")
    # the tasks srun killed while terminating the step are not killed ranks of their own
    assert [i for i in incs if i["failure"] == "rank_killed"] == []


def test_srun_killing_several_tasks_names_none_of_them() -> None:
    # several ranks killed at once (the node's OOM killer): rank_killed, no single rank
    text = "srun: error: scyllacpu20: tasks 62,78: Killed\nsrun: error: scyllacpu21: tasks 130,149,154: Killed\n"
    top = report(text)["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"]) == ("rank_killed", None)


def test_srun_tasks_are_nodes_when_srun_started_torchrun() -> None:
    # one torchrun per node under srun: task 1 is the second node's agent, not rank 1
    text = ("[default3]:[rank11]: step 10 loss 2.1\n"
            "srun: error: gpu-node-2: task 1: Killed\n")
    top = report(text)["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"]) == ("rank_killed", None)
    # ... while without an agent the same line names rank 1
    top = report("srun: error: gpu-node-2: task 1: Killed\n")["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"]) == ("rank_killed", 1)


def test_a_world_size_said_in_words_makes_the_silent_peer_of_two_the_one_that_died() -> None:
    # rank 0's own --log-dir file only (corpus holdout25 g25e-011): "world size 2" in its first line,
    # then its lost connection; rank 1 never appears
    lines = ["Rank 0: starting, world size 2", *[f"Rank 0: step {s} loss 0.{80 - s}" for s in range(0, 35, 5)],
             "[rank0]: Traceback (most recent call last):",
             "[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:537] Read error "
             "[127.0.0.1]:42895: Connection reset by peer. This is typically caused by a remote worker hanging or bugs "
             "in the application."]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("rank_killed", 1)
