"""Ascend HCCL's own error lines in the CANN log: ``[ERROR] HCCL(pid,proc):time [file.cc:N] ...
errNo[0x...]``. The errNo's last byte is the HcclResult: a timeout (09) or a socket that never
connected (0b) is a waiter's report, anything else HCCL's own failure. Real lines from CANN's and
MindSpore's troubleshooting pages and a torch_npu log (none from the corpus threads)."""

from __future__ import annotations

from detectors.diagnosis import build_report
from tests.helpers import fed_state


def _top(lines: list[str]) -> tuple[str, str]:
    inc = build_report(fed_state(lines, "plog-1104629.log"))["incidents"][0]
    return inc["failure"], inc["severity"]


def test_a_rank_table_error_is_hccl_s_own_failure() -> None:
    lines = ["[ERROR] HCCL(1104629,test_one_side):2025-10-28-17:45:13.679.684 [param_check.cc:66] [1104629][InitGroupStage]"
             "[RanktableConfig]errNo[0x0000000005010001] path /ranktable.json is not a valid real path"]
    assert _top(lines)[0] == "nccl_error"


def test_a_bad_environment_variable_without_the_space() -> None:
    lines = ["[ERROR]HCCL(3729526,python3.11):2025-10-23-17:30:40.099.058 [externalinput.cc:169] [3729526][InitGroupStage]"
             "[EnvConfig]errNo[0x0000000005000001] In init env variable param, parse HCCL_RDMA_SL failed. errno[1]",
             "[ERROR]HCCL(3729526,python3.11):2025-10-23-17:30:40.099.063 [externalinput.cc:47] [3729526][InitExternalInput]"
             "call trace: hcclRet -> 1"]
    assert _top(lines)[0] == "nccl_error"


def test_a_socket_that_never_connected_is_a_waiter_s_timeout() -> None:
    lines = ["[ERROR] HCCL(130250,python):2021-10-14-00:50:50.787.375 [exchanger_network.cc:232][130250][138166][Wait]"
             "[AllClientSocketEstab]errNo[0x000000000500000b] client : device[1] rank[1] get socket timeout, total[4] remain[3]",
             "[ERROR] HCCL(130250,python):2021-10-14-00:50:50.787.435 [exchanger_network.cc:378][130250][138166]call trace: ret -> 4"]
    assert _top(lines)[0] == "collective_timeout"


def test_an_allreduce_timeout_is_a_waiter_s_timeout() -> None:
    lines = ["[ERROR] HCCL(17528,python3):2026-03-18-10:34:43.142.156 [hcom.cc:515] [18111][AllReduce][Result]"
             "errNo[0x0000000005010009] hcclComm AllReduce error, tag[HcomAllReduce_6629421139219749105_0], "
             "input_ptr[0x12e083e00200], output_ptr[0x12e086600400], count[10485888], data_type[float32], op[sum]"]
    assert _top(lines)[0] == "collective_timeout"
