"""A multi-node runner puts the host's name before every line of its output (pdsh and DeepSpeed's
multi-node runner, clush, a user's `| sed "s/^/node-1: /"`): "worker-1: [rank3]: ...",
"trn-a01: W1206 ...", "10.0.87.143: NCCL WARN ...". The label is peeled off so the line under it
reads as it would alone (torchrun's failure summary, a rank tag); words such as "Epoch: " or
"RuntimeError: " are not host names. Lines of two real CPU torchrun agents (torch 2.13) whose
outputs a user pasted into one log, prefixed by node."""

from __future__ import annotations

import pytest

from detectors.prefixes import split_prefixes
from tests.helpers import engine_verdict


@pytest.mark.parametrize(("line", "body"), [
    ("worker-1: [rank3]: RuntimeError: x", "RuntimeError: x"),
    ("10.0.87.143: NCCL WARN x", "NCCL WARN x"),
    ("compute-dy-p4d24xlarge-5: step 3 loss 2.1", "step 3 loss 2.1"),
    ("Epoch: 1 loss 2", "Epoch: 1 loss 2"),
    ("RuntimeError: CUDA error: out of memory", "RuntimeError: CUDA error: out of memory"),
    ("val-loss: 3.2", "val-loss: 3.2"),
    # a user's own tag on two launchers' outputs pasted together
    ("hostB:   rank      : 3 (local_rank: 1)", "  rank      : 3 (local_rank: 1)"),
    ("node1: [0]:", "[0]:"),
    ("Host: gpu01", "Host: gpu01"),
    ("nodes: 4", "nodes: 4"),
])
def test_host_labels_are_peeled(line: str, body: str) -> None:
    assert split_prefixes(line, 2026).body == body


def _timeout(node: int, rank: int, op: str) -> list[str]:
    return [f"node-{node}: [rank{rank}]: Traceback (most recent call last):",
            f"node-{node}: [rank{rank}]:     opt.zero_grad(); loss.backward(); opt.step()",
            f"node-{node}: [rank{rank}]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/"
            f"unbound_buffer.cc:78] Timed out waiting 20000ms for {op} operation to complete"]


def _summary(node: int, rank: int, local: int, code: str) -> list[str]:
    return [f"node-{node}: [1]:", f"node-{node}:   time      : 2026-12-06_02:03:40", f"node-{node}:   host      : localhost",
            f"node-{node}:   rank      : {rank} (local_rank: {local})", f"node-{node}:   exitcode  : {code}"]


def test_the_rank_no_node_reported_is_the_hung_one() -> None:
    lines = ["node-1: (rank 3) node=1 local_rank=1 pid=30015 ready", "node-1: (rank 3) warming up custom kernel cache...",
             *_timeout(1, 2, "recv"), *_timeout(0, 1, "recv"), *_timeout(0, 0, "send"),
             "node-1: ============================================================", "node-1: Failures:",
             *_summary(1, 3, 1, "-15 (pid: 30015)  (SIGTERM)")]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("rank_hang", 3)


def test_a_summary_under_a_users_host_tag_names_its_rank() -> None:
    """Two torchrun agents' outputs tagged "hostA: " / "hostB: " by the user: hostB's summary
    names rank 3 (local_rank 1) killed by SIGSEGV, hostA's ranks only lost their peer."""
    lines = ["hostA: [rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] "
             "Connection closed by peer [127.0.0.1]:8599.",
             "hostB: E1206 21:46:06.839000 19070 torch/distributed/elastic/multiprocessing/api.py:1002] failed "
             "(exitcode: -11) local_rank: 1 (pid: 19204) of binary: /usr/bin/python3",
             "hostB: =======================================================", "hostB: Root Cause (first observed failure):",
             "hostB: [0]:", "hostB:   time      : 2026-12-06_21:46:06", "hostB:   host      : localhost",
             "hostB:   rank      : 3 (local_rank: 1)", "hostB:   exitcode  : -11 (pid: 19204)  (SIGSEGV)",
             "hostB:   error_file: <N/A>", "hostB:   traceback : Signal 11 (SIGSEGV) received by PID 19204",
             "hostB: ======================================================="]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("rank_segfault", 3)


def test_gloos_size_mismatch_abort_is_the_first_observed_aborted_workers() -> None:
    """Rank 0 aborts on gloo's enforce (the mismatched collective), rank 1 loses its peer and
    aborts too a moment later: both end with SIGABRT, torchrun observed rank 0 first."""
    def block(idx: int, rank: int, code: str) -> list[str]:
        return [f"[{idx}]:", "  time      : 2026-12-07_00:29:11", "  host      : localhost",
                f"  rank      : {rank} (local_rank: {rank})", f"  exitcode  : {code}"]
    lines = [f"ts=1796603351.4 rank={r} step={s} loss={1.2 - s / 200:.4f} elapsed=0.1s" for s in (25, 50, 75) for r in (0, 1)]
    lines += ["terminate called after throwing an instance of 'gloo::EnforceNotMet'",
              "  what():  [enforce fail at /__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:456] "
              "op.preamble.length <= op.nbytes. 1204 vs 4. Received data size doesn't match expected size. "
              "Is there a distributed collective mismatch in your code?",
              "[rank1]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:537] Read error "
              "[127.0.0.1]:35527: Connection reset by peer.",
              "terminate called without an active exception",
              "E1207 00:29:11.692000 28493 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: -6) "
              "local_rank: 0 (pid: 28502) of binary: /usr/bin/python3",
              "Failures:", *block(1, 1, "-6 (pid: 28503)  (SIGABRT)"),
              "Root Cause (first observed failure):", *block(0, 0, "-6 (pid: 28502)  (SIGABRT)")]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("nccl_error", 0)
