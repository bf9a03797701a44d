"""What peers print after another rank dies stays collateral: the socket EOF / reset reports of
c10d's recvBytes and gloo never make the speaker an initiator."""

from __future__ import annotations

import pytest

from detectors.detect import JobState
from detectors.diagnosis import build_report
from detectors.parse import default_parser
from detectors.parsers.base import FileState, JobParseState


def report(text: str) -> dict:
    st = JobState(job="t")
    fs = FileState("console.log", year=2026, job=JobParseState())
    for i, line in enumerate(text.splitlines(), 1):
        for ev in default_parser().parse_line(line, i, fs):
            st.add(ev)
    return build_report(st)


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
