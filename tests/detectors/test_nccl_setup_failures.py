"""Two classes of NCCL / process-group set-up failures that name no error of a known wording.

1. An NCCL ``WARN`` no fingerprint knows, with NCCL returning an error code up its stack right
   below it (``graph/search.cc:749 -> 2``) from the same process: the call failed. A WARN
   with no return chain is NCCL going on (optional libraries, sysfs paths). The lines are from
   NVIDIA/nccl#1240 (2024, NCCL 2.19.3, an Azure graph file naming a missing device) and
   pytorch/pytorch#40273 (2020, NCCL 2.4's ``Could not find real path`` that failed init).
2. A lost peer raised through ``init_process_group`` (the traceback's frames say so) while
   nothing else failed: no peer had failed yet, so the connection itself did. The lines are
   from pytorch/pytorch#74146 (2022, tcp:// init across two machines) and
   facebookresearch/maskrcnn-benchmark#315 (2019, THD env:// init).
"""

from __future__ import annotations

from tests.helpers import engine_verdict

_GRAPH = [
    "Spotllm:73025:73112 [0] NCCL INFO comm 0x2012b5e0 rank 0 nranks 1 cudaDev 0 nvmlDev 0 busId 100000 "
    "commId 0x151ada46fe52b960 - Init START",
    "Spotllm:73025:73112 [0] NCCL INFO NCCL_GRAPH_FILE set by environment to /opt/microsoft/ncv4/graph.xml",
    "",
    "Spotllm:73025:73112 [0] graph/search.cc:719 NCCL WARN XML Import Channel : dev 1 not found.",
    "Spotllm:73025:73112 [0] NCCL INFO graph/search.cc:749 -> 2",
    "Spotllm:73025:73112 [0] NCCL INFO graph/search.cc:757 -> 2",
]
_REALPATH = [
    "XXX:430:2237 [0] include/topo.h:27 NCCL WARN Could not find real path of /sys/class/pci_bus/0000:02/../../0000:02:00.0",
    "XXX:430:2237 [0] NCCL INFO init.cu:864 -> 2",
    "XXX:430:2237 [0] NCCL INFO init.cu:887 -> 2",
]


def test_an_unknown_warn_with_an_error_code_returned_below_it_is_an_nccl_error() -> None:
    top = engine_verdict(_GRAPH)[0]
    assert top.failure == "nccl_error"
    assert "XML Import Channel" in top.evidence[0].text


def test_nccl_2_4s_realpath_warn_that_failed_init() -> None:
    assert engine_verdict(_REALPATH)[0].failure == "nccl_error"


def test_a_warn_nccl_went_on_from_is_no_error() -> None:
    # NCCL 2.5+ prints the realpath WARN and goes on (no return chain); a missing verbs library too
    lines = [_REALPATH[0], "XXX:430:2237 [0] NCCL INFO Setting affinity for GPU 0 to ffff",
             "XXX:430:2237 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]",
             "XXX:430:2237 [0] NCCL INFO NET/Socket : Using [0]eth0:10.2.3.32<0>",
             "XXX:430:2237 [0] NCCL INFO init.cc:1150 -> 0"]
    assert not [i for i in engine_verdict(lines) if i.severity == "critical"]


def test_a_return_chain_of_another_process_does_not_make_a_warn_an_error() -> None:
    lines = [_REALPATH[0], "XXX:431:2239 [1] NCCL INFO init.cu:864 -> 2"]
    assert all(i.failure != "nccl_error" for i in engine_verdict(lines))


_INIT_RESET = [
    "Traceback (most recent call last):",
    '  File "/mnt/sdc2/file/project/distributed/index.py", line 10, in <module>',
    "    dist.init_process_group(backend=backend, rank=rank,init_method='tcp://192.168.1.2:23456',  world_size=2)",
    '  File "/root/miniconda3/envs/vision/lib/python3.9/site-packages/torch/distributed/distributed_c10d.py", line 611, '
    "in init_process_group",
    "    default_pg._set_sequence_number_for_group()",
    "RuntimeError: Connection reset by peer",
]


def test_a_peer_lost_while_the_process_group_was_set_up_is_the_set_up_failing() -> None:
    top = engine_verdict(_INIT_RESET)[0]
    assert (top.failure, top.severity) == ("nccl_error", "critical")
    assert any("set up" in line for line in top.narrative)


def test_the_thd_wording_of_the_same_failure() -> None:
    lines = [
        "Traceback (most recent call last):",
        '  File "./tools/train_net.py", line 146, in main',
        '    backend="nccl", init_method="env://"',
        '  File "/home/ubuntu/anaconda3/envs/pytorch1.0/lib/python3.6/site-packages/torch/distributed/deprecated/'
        '__init__.py", line 101, in init_process_group',
        "    group_name, rank)",
        "RuntimeError: Connection reset by peer at /opt/conda/conda-bld/pytorch-nightly_1542100572345/work/torch/lib/THD/"
        "process_group/General.cpp:20",
    ]
    assert engine_verdict(lines)[0].failure == "nccl_error"


def test_a_peer_lost_in_training_stays_a_consequence() -> None:
    lines = [
        "Traceback (most recent call last):",
        '  File "/home/user/train.py", line 31, in <module>',
        "    loss.backward()",
        '  File "/opt/venv/lib/python3.11/site-packages/torch/autograd/graph.py", line 979, in _engine_run_backward',
        "    return Variable._execution_engine.run_backward(",
        "RuntimeError: Connection reset by peer",
    ]
    assert engine_verdict(lines)[0].failure == "peer_connection_lost"


def test_a_peer_lost_in_set_up_beside_another_ranks_own_error_is_its_consequence() -> None:
    lines = ["[rank0]: Traceback (most recent call last):", '[rank0]:   File "train.py", line 5, in <module>',
             "[rank0]: ValueError: bad MASTER_PORT value", *[f"[rank1]: {x}" for x in _INIT_RESET]]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("rank_exception", 0)


def _mpi_fatal(call: str, where: str, prefix: str = "") -> list[str]:
    # Open MPI's fatal error handler banner (ompi/errhandler/errhandler_predefined.c)
    return [f"{prefix}*** An error occurred in MPI_{call}", f"{prefix}*** {where}",
            f"{prefix}*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,",
            f"{prefix}***    and potentially your MPI job)"]


def test_open_mpis_fatal_error_handler_is_a_communication_failure() -> None:
    # horovod/horovod#465: mpirun -np 12 over three hosts, three processes of host1 abort in
    # MPI_Init_thread before MPI started: the job's, no rank
    lines = ["mpirun -np 12 -H host1:4,host3:4,host2:4 -bind-to none -map-by slot python model_train_main.py"]
    for pid in (71142, 71144, 71141):
        lines += [*_mpi_fatal("Init_thread", "on a NULL communicator"),
                  f"[host1:{pid}] Local abort before MPI_INIT completed completed successfully,"]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank, top.severity) == ("nccl_error", None, "critical")
    # one srun task's MPI_Bcast failing (NERSC, Open MPI over UCX): that task's rank
    top = engine_verdict(["0: [cgpu17:53890] step 1 loss 2.31",
                          *_mpi_fatal("Bcast", "on communicator MPI_COMM_WORLD", "0: [cgpu17:53890] ")])[0]
    assert (top.failure, top.rank) == ("nccl_error", 0)


def test_deepspeeds_last_spawned_exit_code_does_not_outrank_a_traceback_the_lines_show() -> None:
    # a Megatron-DeepSpeed two-node run (corpus holdout25 h25b-004): rank 0's own traceback ends in
    # NCCL's unhandled CUDA error while it set up a group; the DeepSpeed launcher then prints the
    # return code of the last process it spawned, a segfault (-11), whichever process that was
    lines = ["localhost: [rank0]: Traceback (most recent call last):",
             'localhost: [rank0]:   File "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", line 2134, '
             "in _new_process_group_helper",
             "localhost: [rank0]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
             "NCCLUtils.cpp:230, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.27.5",
             "localhost: [rank0]: ncclUnhandledCudaError: Call to CUDA function failed.",
             "localhost: [2025-03-28 00:24:50,117] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python3', '-u', "
             "'pretrain_gpt.py', '--local_rank=3'] exits with return code = -11"]
    top = engine_verdict(lines)[0]
    assert top.failure == "nccl_error"
