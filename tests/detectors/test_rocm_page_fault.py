"""ROCm's GPU page fault, ``Memory access fault by GPU node-N ... on address A``: the AMD
analogue of CUDA's illegal memory access, printed with the agent handle by recent runtimes
and without it by older ones (and by HSA outside PyTorch). Every line is a real one."""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict

_FAULTS = [
    # recent runtime, with the agent handle (ROCm/pytorch#797)
    "Memory access fault by GPU node-2 (Agent handle: 0x56468ab3bb50) on address 0x7fe55fb03000. "
    "Reason: Page not present or supervisor privilege.",
    # ROCm 1.7, an OpenCL kernel on an RX 470 (https://github.com/ROCm/ROCm/issues/383)
    "Memory access fault by GPU node-1 on address 0x901b09000. Reason: Page not present or supervisor privilege.",
    # a user's troubleshooting notes for an MI50 fine-tune, the address unset
    "Memory access fault by GPU node-1 on address (nil). Reason: Page not present or supervisor privilege.",
]


@pytest.mark.parametrize("line", _FAULTS)
def test_page_fault_is_an_illegal_access(line: str) -> None:
    inc = engine_verdict(["INFO:tensorflow:loss = 1.00229, step = 901, precision = 0.703125", line,
                          "Aborted (core dumped)"])
    assert [i.failure for i in inc][:1] == ["cuda_illegal_memory_access"]


def test_prose_about_faults_is_not_one() -> None:
    assert engine_verdict(["the run hit a Memory access fault by GPU node-1 earlier, see above"]) == []
