"""An illegal memory access that a process reports after its own allocation failed is the
allocation's consequence (the kernel touched memory that was never mapped); one reported
before any OOM is a failure of its own. Real lines from deepseek-ai/DeepEP#157 (NVSHMEM's
symmetric heap: cuMemCreate fails with status 2, NVSHMEMX_ERROR_OUT_OF_MEMORY, then the
barrier faults)."""

from __future__ import annotations

from tests.helpers import engine_verdict

_OOM = "/nvshmem/src/host/mem/mem_heap.cpp:1509: non-zero status: 2 cuMemCreate failed "
_HEAP = "/nvshmem/src/host/mem/mem_heap.cpp:1590: non-zero status: 7 allocate_physical_memory_to_heap failed"
_IMA = "[/nvshmem/src/host/coll/barrier/barrier.cpp:21] cuda failed with an illegal memory access was encountered "


def test_the_access_after_the_failed_allocation_is_its_consequence() -> None:
    inc = engine_verdict([_OOM, "", _OOM, "", _HEAP, "", _HEAP, "", _IMA, _IMA])
    assert [i.failure for i in inc][:1] == ["cuda_oom"]


def test_an_access_before_any_oom_is_its_own_failure() -> None:
    # the same lines in the other order (reordered): the fault came first
    inc = engine_verdict([_IMA, _IMA, _OOM, _HEAP])
    assert [i.failure for i in inc][:1] == ["cuda_illegal_memory_access"]
