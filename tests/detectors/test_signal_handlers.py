"""Native signal handlers' reports of a fatal signal: glog's and absl's ``*** SIG... received by PID``.

Real lines: absl's handler in torch_xla's TPU all-reduce crash (huggingface/transformers thread,
corpus holdout18 h18b-004) and a JAX TPU pod's init crash (h18b-009) print ``(@(nil)), see
<symbol>``; glog's in PaddleDetection trainers (h18b-014) prints a SIGBUS with its address.
"""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict


@pytest.mark.parametrize("line", [
    "*** SIGSEGV (@(nil)), see gl__________60#s15 received by PID 209 (TID 5204) on cpu 0; stack trace: ***",
    "*** SIGSEGV (@(nil)), see gl__________41#s15 received by PID 11743 (TID 12350) on cpu 17; stack trace: ***",
    "W1128 08:53:27.594719 27220 init.cc:234] *** SIGBUS (@0x7f8261c6b000) received by PID 27220 (TID 0x7f844423e740) "
    "from PID 1640411136; stack trace: ***",
])
def test_a_failure_signal_handlers_report_is_the_process_crashing(line: str) -> None:
    lines = [line, "PC: @ 0x7f0a62182524 (unknown) torch_xla::tensor_methods::all_reduce()",
             "@ 0x7f09ab75621a 1152 (unknown)"]
    assert engine_verdict(lines)[0].failure == "rank_segfault"


def test_the_same_signal_in_several_processes_names_no_rank() -> None:
    lines = [f"*** SIGSEGV (@(nil)), see gl__________60#s15 received by PID {pid} (TID 5{pid}) on cpu 0; stack trace: ***"
             for pid in (209, 210, 207)]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("rank_segfault", None)
