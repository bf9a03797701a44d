"""A peer's dropped connection that NCCL returns up through communicator set-up (``bootstrap.cc`` /
``init.cc`` -> code, same process) came before any collective ran: the connection itself failed, an
``nccl_error``, not a consequence of another rank's failure. NCCL 2.3 and older print their lines
without the word "NCCL" (``host:pid:tid [3] include/socket.h:194 WARN Call to recv failed ...``,
``host:pid:tid [3] INFO bootstrap.cu:169 -> 2``): the same prefix. Lines as Horovod users pasted them
(horovod/horovod, TensorFlow 1.x MNIST under mpirun, NCCL 2.3); the cut lines are the shapes a narrow
terminal or a pasted excerpt leaves."""

from __future__ import annotations

from tests.helpers import engine_verdict


def _chain(proc: str, dev: int, frames: list[str]) -> list[str]:
    return [f"{proc} [{dev}] include/socket.h:194 WARN Call to recv failed : Connection reset by peer",
            *(f"{proc} [{dev}] INFO {f} -> 2" for f in frames)]


_SETUP = ["transport/net_ib.cu:555", "transport/net_ib.cu:628", "include/net.h:30", "bootstrap.cu:169", "init.cu:422"]


def test_a_reset_returned_through_set_up_is_an_nccl_error() -> None:
    lines = [*_chain("gpu-ser015:2123:2230", 3, _SETUP), "", *_chain("gpu-ser015:2121:2233", 1, _SETUP)]
    top = engine_verdict(lines)[0]
    assert top.failure == "nccl_error"


def test_a_reset_returned_through_the_transport_only_stays_a_lost_peer() -> None:
    lines = _chain("gpu-ser015:2123:2230", 3, ["transport/net_ib.cu:555", "include/net.h:30", "enqueue.cc:120"])
    top = engine_verdict(lines)[0]
    assert top.failure == "peer_connection_lost"


def test_the_set_up_frames_of_another_process_do_not_count() -> None:
    lines = [*_chain("gpu-ser015:2123:2230", 3, ["transport/net_ib.cu:555"]),
             "gpu-ser015:4444:4445 [0] INFO bootstrap.cu:169 -> 2"]
    assert engine_verdict(lines)[0].failure == "peer_connection_lost"


def test_a_connect_warn_cut_at_the_end_of_its_line_is_an_nccl_error() -> None:
    lines = ["worker:101542:101934 [0] NCCL INFO Call to connect returned Connection timed out, retrying",
             "worker:101542:101934 [0] include/socket.h:403 NCCL WARN Connect to f"]
    assert engine_verdict(lines)[0].failure == "nccl_error"


def test_a_gloo_timeout_cut_after_its_wait_is_a_collective_timeout() -> None:
    line = "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800"
    assert engine_verdict([line])[0].failure == "collective_timeout"
