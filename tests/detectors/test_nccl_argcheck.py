"""NCCL's argument checks (``misc/argcheck.cc``) and use of a destroyed communicator: NCCL refuses
the call with ncclInvalidArgument and says why in a WARN line that carries no 'error' word."""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict


@pytest.mark.parametrize("lines", [
    # https://github.com/NVIDIA/nccl/issues/963 (multi-threaded send/recv on one-rank communicators)
    ["9306dc444753:248281:248306 [1] misc/argcheck.cc:39 NCCL WARN Recv : invalid root 0 (root should be in the "
     "0..0 range)",
     "9306dc444753:248281:248306 [1] NCCL INFO enqueue.cc:1450 -> 4",
     "9306dc444753:248281:248306 [1] NCCL INFO group.cc:106 -> 4"],
    # https://github.com/horovod/horovod/issues/3625 (Open MPI tags; the communicator never came up)
    ["[1,0]<stdout>:biomind:6502:6588 [0] misc/argcheck.cc:39 NCCL WARN AllReduce : invalid root 0 (root should be "
     "in the 0..-1 range)",
     "[1,0]<stdout>:biomind:6502:6588 [0] NCCL INFO enqueue.cc:1452 -> 4"],
    # https://github.com/NVIDIA/nccl/issues/1482 (a communicator destroyed twice)
    ["e53955024127:2088762:2088762 [1] init.cc:1969 NCCL WARN comm 0x55ec10690820 has already been destroyed"],
    # https://github.com/NVIDIA/nccl/issues/1558 (the check's text under a DistBackendError's 'Last error:')
    ["Broadcast : sendbuff (nil) is not a valid pointer"],
])
def test_an_nccl_argument_check_failure_is_an_nccl_error(lines: list[str]) -> None:
    found = engine_verdict(lines)
    assert found and found[0].failure == "nccl_error"


# a rank's tagged DistBackendError whose 'Last error:' detail is a job-wide configuration error
# (https://github.com/pytorch/torchtitan/issues/1224: two ranks on one GPU, reported by rank 2)
_TITAN = [
    "[rank2]:     work = group._allgather_base(output_tensor, input_tensor, opts)",
    "[rank2]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:77, "
    "invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.26.5",
    "[rank2]: ncclInvalidUsage: This usually reflects invalid usage of NCCL library.",
    "[rank2]: Last error:",
    "[rank2]: Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 6000",
]


def test_a_job_wide_detail_makes_the_reported_error_the_job_s() -> None:
    inc = engine_verdict(_TITAN)[0]
    assert (inc.failure, inc.rank) == ("nccl_error", None)
    # without the detail line, the rank that raised it is named
    assert [(i.failure, i.rank) for i in engine_verdict(_TITAN[:3])][:1] == [("nccl_error", 2)]
