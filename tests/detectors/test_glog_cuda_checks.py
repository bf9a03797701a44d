"""Caffe / Caffe2's glog CUDA check (``CUDA_CHECK``): ``Check failed: error == cudaSuccess (N vs. 0)
<cudaGetErrorString>``, a fatal line (``F`` level) that aborts the process."""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict


@pytest.mark.parametrize(("line", "failure"), [
    # https://github.com/MhLiao/TextBoxes_plusplus/issues/132
    ("F0903 14:31:26.106397 92421 syncedmem.cpp:56] Check failed: error == cudaSuccess (2 vs. 0)  out of memory", "cuda_oom"),
    # https://github.com/BVLC/caffe/issues/1415
    ("F1107 19:06:31.027757 17160 syncedmem.cpp:51] Check failed: error == cudaSuccess (2 vs. 0)  out of memory", "cuda_oom"),
    # Caffe2 (Detectron): several threads' fatal lines glued together, no "(4 vs. 0)"
    ("> F0628 19:13:22.730959  3624 context_gpu.h:107] Check failed: error == cudaSuccess unspecified launch "
     "failureF0628 19:13:22.730976  3635 context_gpu.h:107] Check failed: error == cudaSuccess unspecified launch failure",
     "cuda_illegal_memory_access"),
])
def test_a_failed_glog_cuda_check_is_read_by_its_error(line: str, failure: str) -> None:
    found = engine_verdict([line, "*** Check failure stack trace: ***"])
    assert found and found[0].failure == failure


def test_other_glog_checks_are_not_oom() -> None:
    # https://github.com/s9xie/hed/issues/52: the driver going away is not memory
    line = "F1225 18:53:10.263083 16202 syncedmem.cpp:19] Check failed: error == cudaSuccess (29 vs. 0)  driver shutting down"
    assert all(i.failure != "cuda_oom" for i in engine_verdict([line]))
