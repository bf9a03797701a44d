"""Two communication set-up failures whose words the engine read as something else.

1. gloo's TCP pair that never connected ("[.../gloo/transport/tcp/pair.cc:NNN] Connect timeout
   [addr]:port", gloo's backstop in pair.h/pair.cc, kept as the initiator's connect timeout in
   pytorch/gloo#521): the transport never formed, an ``nccl_error`` (the corpus files gloo's
   transport failures there), not the program's own exception. Shapes: caffe2's RuntimeError
   (facebookarchive/caffe2#360) and PyTorch's vendored gloo path (``../third_party/gloo/...``).
   A "Read timeout" on a connected pair stays a timeout.
2. A set-up whose failure is one rank's own NCCL error (``unhandled cuda error`` raised through
   ``new_group`` / ``_new_process_group_helper``): the ``remote process exited`` and
   ``Connection closed by remote peer`` that the next rank then raises through the same set-up
   frames are that failure seen from the other side, not the set-up failing a second time.
   The traceback shape is Megatron-DeepSpeed's ``initialize_model_parallel`` under torch 2.9 with
   NCCL 2.27 (a two-node pdsh launch, prefixes as pdsh writes them).
"""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict


@pytest.mark.parametrize("line", [
    "RuntimeError: [/opt/caffe2/third_party/gloo/gloo/transport/tcp/pair.cc:611] Connect timeout [172.17.27.13]:27023",
    "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:799] Connect timeout [10.1.4.22]:51873",
])
def test_a_gloo_pair_that_never_connected_is_a_transport_failure(line: str) -> None:
    lines = [
        "Traceback (most recent call last):",
        '  File "train.py", line 315, in Train',
        "    workspace.RunNetOnce(train_model.param_init_net)",
        line,
    ]
    assert engine_verdict(lines)[0].failure == "nccl_error"


def test_a_read_timeout_on_a_connected_pair_stays_a_timeout() -> None:
    line = "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Read timeout [10.1.4.22]:51873"
    assert engine_verdict([line])[0].failure != "nccl_error"


def _raised_in_new_group(node: str, rank: int, error: list[str]) -> list[str]:
    p = f"{node}: [rank{rank}]:"
    return [
        f"{p} Traceback (most recent call last):",
        f'{p}   File "/home/u/Megatron-DeepSpeed/megatron/core/parallel_state.py", line 212, in initialize_model_parallel',
        f"{p}     group = torch.distributed.new_group(ranks)",
        f'{p}   File "/usr/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 5366, in _new_group_with_tag',
        f"{p}     pg, pg_store = _new_process_group_helper(",
        f'{p}   File "/usr/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 2134, in _new_process_group_helper',
        f"{p}     eager_backend.eager_connect_single_device(device_id)",
    ] + [f"{p} {e}" for e in error]


_OWN = [
    "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:230, "
    "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.27.5",
    "ncclUnhandledCudaError: Call to CUDA function failed.",
    "Last error:",
    "Failed to CUDA calloc async 4 bytes",
]
_REMOTE = [
    "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:230, "
    "remote process exited or there was a network error, NCCL version 2.27.5",
    "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
    "Last error:",
    "socketProgress: Connection closed by remote peer v100x16-1.example.com<42766>",
]


def test_the_rank_whose_set_up_failed_with_its_own_error_is_named() -> None:
    top = engine_verdict(_raised_in_new_group("localhost", 0, _OWN) + _raised_in_new_group("localhost", 1, _REMOTE))[0]
    assert (top.failure, top.rank) == ("nccl_error", 0)


def test_a_lost_peer_in_set_up_with_nothing_else_failing_is_still_the_set_up_failing() -> None:
    top = engine_verdict(_raised_in_new_group("localhost", 1, _REMOTE))[0]
    assert top.failure == "nccl_error"
