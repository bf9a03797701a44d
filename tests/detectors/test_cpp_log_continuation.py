"""c10's C++ logger prints a rank-tagged record's header once (``[rank0]:[W NPUStream.cpp:365]
Warning: ... [Error]: ``) and the rest of its message on the next lines, untagged: those lines
are that rank's. Real lines from hiyouga/LlamaFactory#4372 (torch_npu, an AI CPU exception)."""

from __future__ import annotations

from tests.helpers import engine_verdict

_HEAD = "[rank0]:[W NPUStream.cpp:365] Warning: NPU warning, error code is 507018[Error]: "
_BODY = [
    "[Error]: The aicpu execution is abnormal. ",
    "        Rectify the fault based on the error information in the ascend log.",
    "EH9999: Inner Error!",
    "        rtDeviceSynchronize execute failed, reason=[aicpu exception][FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53]",
]
_BEFORE = [
    "EH9999: 2024-06-19-23:19:23.433.674  wait for compute device to finish failed, runtime result = 507018."
    "[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:161]",
    "        TraceBack (most recent call last):",
    " (function npuSynchronizeDevice)",
]


def _top(lines: list[str]) -> tuple[str, int | None]:
    inc = engine_verdict(lines)[0]
    return inc.failure, inc.rank


def test_the_untagged_message_lines_are_the_tagged_record_s() -> None:
    assert _top([*_BEFORE, _HEAD, *_BODY]) == ("cuda_illegal_memory_access", 0)


def test_a_finished_record_claims_nothing_below() -> None:
    # the same header with its message ending on its own line (the '[Error]: ' tail removed)
    head = _HEAD.replace("507018[Error]: ", "507018.")
    assert _top([*_BEFORE, head, *_BODY]) == ("cuda_illegal_memory_access", None)


def test_lines_far_below_are_not_the_record_s() -> None:
    filler = [f"        detail line {i}" for i in range(8)]
    assert _top([_HEAD, *filler, *_BODY]) == ("cuda_illegal_memory_access", None)
