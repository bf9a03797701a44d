"""Horovod's SHUT_DOWN_ERROR is what every surviving rank raises once another rank's exception
has shut Horovod down: a consequence (``peer_connection_lost``), never the initiating failure.
The initiator is the exception before it, or the process mpirun names as the first to exit."""

from __future__ import annotations

import pytest

from detectors.catalog import load_catalog
from tests.helpers import engine_verdict

COLLATERAL = {e.id for e in load_catalog().entries.values() if e.role == "collateral"}


@pytest.mark.parametrize("lines", [
    # https://github.com/horovod/horovod/issues/534 (TF 1.x, the wording after horovod/horovod#350)
    ["AbortedError (see above for traceback): Horovod has been shut down. This was caused by an exception on one of "
     "the ranks or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished execution. "
     "If the shutdown was caused by an exception, you should see the exception in the log before the first shutdown "
     "message."],
    # https://github.com/NVIDIA/DeepLearningExamples/issues/972 (TensorFlow's op_kernel warnings, one per tensor)
    ["2021-07-22 05:04:29.589233: W tensorflow/core/framework/op_kernel.cc:1651] OP_REQUIRES failed at mpi_ops.cc:316 "
     ": Unknown: Horovod has been shut down. This was caused by an exception on one of the ranks or an attempt to "
     "allreduce, allgather or broadcast a tensor after one of the ranks finished execution. If the shutdown was caused "
     "by an exception, you should see the exception in the log before the first shutdown message."] * 2,
    # the wording before horovod/horovod#350 (horovod/common/operations.cc, Horovod 0.12)
    ["tensorflow.python.framework.errors_impl.AbortedError: Horovod has been shut down. This has been caused by an "
     "exception on one of the rank or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks "
     "has finished execution."],
])
def test_horovod_shut_down_is_a_consequence(lines: list[str]) -> None:
    found = engine_verdict(lines)
    assert found and found[0].failure in COLLATERAL and found[0].rank is None


def test_mpirun_names_the_rank_that_exited_first_not_the_one_that_was_shut_down() -> None:
    # Open MPI --tag-output lines of rank 1 ([1,1]<stderr>, as in horovod/horovod#3412) and mpirun's
    # summary naming process [[jobid,1],0] (the block of horovod/horovod#298 and #3412)
    lines = [
        '[1,1]<stderr>:  File "/opt/conda/lib/python3.6/site-packages/horovod/torch/mpi_ops.py", line 436, in synchronize',
        "[1,1]<stderr>:    mpi_lib.horovod_torch_wait_and_clear(handle)",
        "[1,1]<stderr>:RuntimeError: Horovod has been shut down. This was caused by an exception on one of the ranks or "
        "an attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished execution. If the "
        "shutdown was caused by an exception, you should see the exception in the log before the first shutdown message.",
        "-------------------------------------------------------",
        "Primary job  terminated normally, but 1 process returned",
        "a non-zero exit code. Per user-direction, the job has been aborted.",
        "-------------------------------------------------------",
        "--------------------------------------------------------------------------",
        "mpirun detected that one or more processes exited with non-zero status, thus causing",
        "the job to be terminated. The first process to do so was:",
        "",
        "  Process name: [[50371,1],0]",
        "  Exit code:    1",
        "--------------------------------------------------------------------------",
    ]
    found = engine_verdict(lines)
    assert found and found[0].rank == 0
    assert 1 in {c["rank"] for c in found[0].collateral}
