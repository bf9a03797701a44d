"""A native crash whose backtrace runs in the communication library: UCX's signal handler prints
``Caught signal 11 (Segmentation fault ...)`` and the backtrace below it; when its innermost
frames are Open MPI's, NCCL's or c10d's process group (``ompi_group_increment_proc_count`` ←
``PMPI_Group_incl`` ← ``c10d::ProcessGroupMPI::createProcessGroupMPI``, MLPerf training v4.0's Red
Hat Llama-2-70B LoRA log, corpus holdout30 h30c-003), the library crashed in that process: an
``nccl_error``, the segfaults (and the launcher's exit -11 for them) its consequences. A bus
error there is a container's /dev/shm running out under the library's shared-memory transport
(DeepSpeed#2638: SIGBUS in ``ncclGroupEnd``), the host's limit: it stays the crash."""

from __future__ import annotations

from tests.helpers import engine_verdict

_OMPI = "/build-result/src/hpcx-v2.18-gcc-inbox-ubuntu22.04-cuda12-x86_64/ompi-efbeca7056b93dd17c67b66d1d514d39712e28d6/ompi"


def _crash(pid: int, what: str = "11 (Segmentation fault: address not mapped to object at address 0x28)") -> str:
    return f"[smciserver:{pid}  :0:{pid}] Caught signal {what}"


def _mpi_backtrace(tid: int) -> list[str]:
    return [f"==== backtrace (tid:    {tid}) ====",
            " 0 0x0000000000042520 __sigaction()  ???:0",
            f" 1 0x000000000004d128 ompi_group_increment_proc_count()  {_OMPI}/group/group_init.c:229",
            f" 2 0x000000000004d9e9 ompi_group_incl_plist()  {_OMPI}/group/group_plist.c:128",
            f" 3 0x000000000007421b PMPI_Group_incl()  {_OMPI}/mpi/c/profile/pgroup_incl.c:87",
            " 4 0x0000000004f1ea5d c10d::ProcessGroupMPI::createProcessGroupMPI()  ???:0",
            "================================="]


def test_a_segfault_inside_mpis_group_code_is_the_librarys_failure() -> None:
    lines = [_crash(p) for p in (227, 229, 228, 224)] + _mpi_backtrace(227) + _mpi_backtrace(229)
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("nccl_error", None)


def test_a_segfault_in_the_programs_own_code_stays_a_crash() -> None:
    lines = [_crash(227), "==== backtrace (tid:    227) ====", " 0 0x0000000000042520 __sigaction()  ???:0",
             " 1 0x00000000001a2b3c my_kernel_launch()  /src/ext/ops.cpp:88", " 2 0x0000000000c35470 pybind11::cpp_function()  ???:0",
             "================================="]
    assert engine_verdict(lines)[0].failure == "rank_segfault"


def test_a_bus_error_inside_nccl_is_the_hosts_shared_memory() -> None:
    lines = ["[experiment-3fce9b69-1446-worker-0:2121 :0:7025] Caught signal 7 (Bus error: nonexistent physical address)",
             "==== backtrace (tid: 7025) ====", "0 0x0000000000014420 __funlockfile() ???:0",
             "1 0x000000000018bb41 __nss_database_lookup() ???:0", "2 0x0000000000068d7c ncclGroupEnd() ???:0",
             "3 0x000000000005de3d ncclGroupEnd() ???:0", "4 0x0000000000008609 start_thread() ???:0",
             "================================="]
    assert engine_verdict(lines)[0].failure == "rank_segfault"
