"""docker compose's service prefix before every line of a replica's output (compose v2
``trainer-worker-1  | ``, v1 ``trainer_worker_1  | ``), and the same with a container's name after
the pod's, as Kubernetes log tailers print several pods interleaved (``train-worker-1 trainer |
``): peeled like a host label, so the lines behind it read as they would alone. A table row's
own first cell (``step 10 | loss 2.3``, ``| step | loss |``) is no such prefix: the name must
end in its replica's number, right before the spaces and the pipe.

Formats: docker compose's log multiplexer (``docker compose up`` / ``docker compose logs``,
"<service>-<n>  | "), and torchrun's failed-workers report (torch 2.x) of a second node's agent,
whose root cause is the rank that died (corpus holdout31 g31d-004, g31-001)."""

from __future__ import annotations

import pytest

from detectors.prefixes import split_prefixes
from tests.helpers import engine_verdict, torchrun_summary


@pytest.mark.parametrize(("line", "body"), [
    ("trainer-worker-1  | [rank0] step 5 loss 0.59", "step 5 loss 0.59"),
    ("trainer_worker_1  | hello", "hello"),
    ("train-worker-1 trainer |   rank      : 3 (local_rank: 1)", "  rank      : 3 (local_rank: 1)"),
    ("step 10 | loss 2.3", "step 10 | loss 2.3"),
    ("epoch 1 | loss 2.3 | lr 1e-3", "epoch 1 | loss 2.3 | lr 1e-3"),
    ("| step | loss |", "| step | loss |"),
])
def test_the_prefix_is_peeled_and_table_rows_are_not(line: str, body: str) -> None:
    assert split_prefixes(line).body == body


def test_a_second_nodes_summary_behind_the_prefix_names_its_root_cause() -> None:
    # node 1's agent (ranks 2, 3): rank 3 died of SIGSEGV; node 0's ranks only lost their peer
    peers = [f"train-worker-0 trainer | [rank{r}]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/"
             f"tcp/pair.cc:537] Read error [127.0.0.1]:49359: Connection reset by peer" for r in (0, 1)]
    summary = torchrun_summary(1, {0: -15, 1: -11}, {0: 13509, 1: 13510})
    # (its blocks name global ranks 2 and 3 on this node)
    summary = [ln.replace("rank      : 0 (local_rank: 0)", "rank      : 2 (local_rank: 0)")
               .replace("rank      : 1 (local_rank: 1)", "rank      : 3 (local_rank: 1)") for ln in summary]
    lines = ["train-worker-0 trainer | 2026-12-07 22:49:17,642 [rank0] INFO train: Starting training: world_size=4",
             *peers, *[f"train-worker-1 trainer | {ln}" for ln in summary]]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("rank_segfault", 3)
