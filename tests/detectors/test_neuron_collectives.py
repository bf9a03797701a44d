"""AWS Neuron's collective library (ENC) failing to build a communicator is the Neuron
counterpart of an NCCL error. Real lines from two Neuron users' notes (not the corpus threads)."""

from __future__ import annotations

from detectors.diagnosis import build_report
from tests.helpers import fed_state


def _top(lines: list[str]) -> str:
    return build_report(fed_state(lines, "neuron.log"))["incidents"][0]["failure"]


def test_multi_instance_global_comm_failure() -> None:
    # a 2023 multi-instance attempt without the EFA/OFI plugin
    lines = ["2023-May-21 14:27:33.0045 102203:102204 [0] init.cc:655 CCOM WARN Unable to run multi-instance workload.  "
             "Ofi plugin is not installed or EFA is not enabled",
             "2023-May-21 14:27:33.0045 102203:102204 ERROR   ENC:ncclInitGlobalComm                      failed "
             "neuronInitGlobalComm request to NCCL",
             "2023-May-21 14:27:33.0045 102203:102204 ERROR   ENC:enc_init_global_comm                    [nec_dev 0] "
             "failed to create global comm"]
    assert _top(lines) == "nccl_error"


def test_replica_group_init_failure() -> None:
    # a 2026 TP=16 run's log ("DP 2 TP 16 PP 1")
    lines = ["2026-Jan-14 11:23:49.987594 95431:108485 ERROR   ENC:enc_init_comm                           [rank 0] "
             "failed (2) to init a collective algorithm for provided replica group."]
    assert _top(lines) == "nccl_error"


def test_neuron_s_info_lines_are_not_errors() -> None:
    lines = ["2023-May-21 14:27:33.0045 102203:102204 [0] init.cc:655 CCOM WARN Unable to run multi-instance workload.  "
             "Ofi plugin is not installed or EFA is not enabled"]
    assert not build_report(fed_state(lines, "neuron.log"))["incidents"]
