"""The rank-resolution chain: prefix/path → message → block → launcher → GPU index → null,
each answer with its provenance (``rank_from``) in the report."""

from __future__ import annotations

import pytest

from detectors.detect import JobState
from detectors.diagnosis import build_report
from detectors.model import EventKind
from detectors.parse import default_parser
from detectors.parsers.base import FileState, JobParseState
from detectors.ranks import message_rank
from tests.helpers import engine_verdict, fed_state


@pytest.mark.parametrize(("body", "want"), [
    ("[Rank 1] uncorrectable ECC error encountered", (1, None)),  # issue #12
    ("Unexpected result nan (message='found NaN in local grad norm in backward pass') on rank 2", (2, None)),
    ("worker failed rank=3 step=100", (3, None)),
    ("failed (exitcode: 1) local_rank: 5 (pid: 1234)", (None, 5)),
    ("failed to recv from rank 3", (None, None)),  # a peer, not the speaker
    ("waiting for peer rank 7 to connect", (None, None)),
    ("comm 0x55d0 nranks 8 cudaDev 0", (None, None)),
    # a launch command's environment: the launcher's (a node's) rank, not a rank speaking
    # (deepseek-ai/DeepEP#411; torchrun's multi-node docs' "NODE_RANK=1 torchrun ...")
    ("MASTER_ADDR=xxxxxxxx WORLD_SIZE=2 RANK=0 python tests/test_internode.py", (None, None)),
    ("CUDA_VISIBLE_DEVICES=0,1 LOCAL_RANK=1 /usr/bin/python3 train.py", (None, None)),
    ("export RANK=3", (3, None)),  # no command after it: kept as the message says
    ("[worker] RANK=2 WORLD_SIZE=4 ready", (2, None)),
])
def test_message_rank(body: str, want: tuple[int | None, int | None]) -> None:
    assert message_rank(body) == want


def report(text: str, path: str = "console.log", rank: int | None = None) -> dict:
    return build_report(fed_state(text.splitlines(), path, rank))


def test_untagged_error_above_a_rank_tagged_traceback_is_that_ranks() -> None:
    """corpus crash-061: the OOM line is pasted right above rank 0's traceback."""
    text = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 388.00 MiB. GPU 0 has a total capacity of 9.68 GiB "
        "of which 95.75 MiB is free.\n"
        "[rank0]: Traceback (most recent call last):\n"
        '[rank0]:   File "/data/sft.py", line 67, in <module>\n'
    )
    top = report(text)["incidents"][0]
    assert top["failure"] == "cuda_oom"
    assert top["initiator"]["rank"] == 0 and top["initiator"]["rank_from"] == "block"
    assert top["initiator"]["inferred"] is False


def test_a_traceback_far_below_does_not_claim_the_line() -> None:
    text = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n" + "x\n" * 10 + \
        "[rank3]: Traceback (most recent call last):\n"
    assert report(text)["incidents"][0]["initiator"]["rank"] is None


def test_gpu_index_is_inferred_only_on_a_multi_gpu_single_node_job() -> None:
    oom = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 270.00 MiB (GPU 3; 31.74 GiB total "
           "capacity; 31.21 GiB already allocated; 97.38 MiB free)")
    # a bare OOM line: nothing shows a multi-GPU job → no rank
    assert report(oom)["incidents"][0]["initiator"]["rank"] is None
    # the same line in a job whose NCCL rank map says 8 ranks on one node → rank 3, marked inferred
    nccl = "\n".join(f"node1:{100 + r}:{200 + r} [{r}] NCCL INFO comm 0x55d0 rank {r} nRanks 8 nNodes 1 localRanks 8 "
                     f"localRank {r} MNNVL 0" for r in range(8))
    init = report(nccl + "\n" + oom)["incidents"][0]["initiator"]
    assert init["rank"] == 3 and init["rank_from"] == "gpu_index" and init["inferred"] is True


def test_provenance_of_path_and_prefix() -> None:
    line = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
    init = report(line, path="rank_5.log", rank=5)["incidents"][0]["initiator"]
    assert (init["rank"], init["rank_from"]) == (5, "path")
    init = report("[rank6]: " + line)["incidents"][0]["initiator"]
    assert (init["rank"], init["rank_from"]) == (6, "prefix")


def test_block_events_only_from_tagged_tracebacks() -> None:
    fs = FileState("c.log", year=2026)
    tagged = default_parser().parse_line("[rank2]: Traceback (most recent call last):", 1, fs)
    assert [(e.kind, e.data.get("untagged")) for e in tagged] == [(EventKind.BLOCK, None)]
    # an untagged traceback only marks that something failed there (a wait that ended in an error): it claims nothing
    untagged = default_parser().parse_line("Traceback (most recent call last):", 2, fs)
    assert [(e.kind, e.data.get("untagged")) for e in untagged] == [(EventKind.BLOCK, True)]


def test_made_up_rank_prefixes_do_not_create_ranks_or_move_the_verdict() -> None:
    """issue #14 defect 12: 20,000 lines with distinct fake ``[rankN]:`` prefixes in one file of
    a 4-rank job (per-rank files): the ranks stay bounded, the verdict stays on the real rank."""
    st = JobState(job="t")
    jps = JobParseState()
    for r in range(4):
        fs = FileState(f"rank_{r}.log", rank=r, year=2026, job=jps)
        st.note_file(r, None)
        lines = [f"step {s} | loss {2.0 - s / 100:.3f}" for s in range(1, 6)]
        if r == 2:
            lines.append("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.")
        for i, line in enumerate(lines, 1):
            for ev in default_parser().parse_line(line, i, fs):
                st.add(ev)
    fs = FileState("rank_3.log", rank=3, year=2026, job=jps)
    for i in range(20_000):
        for ev in default_parser().parse_line(f"[rank{100_000 + i}]: RuntimeError: CUDA error: out of memory", 100 + i, fs):
            st.add(ev)
    assert max(st.seen_global) < 100
    assert st.dropped["implausible_rank"] == 20_000
    rep = build_report(st)
    assert rep["incidents"][0]["initiator"]["rank"] in (2, 3)
    assert all(i["initiator"]["rank"] is None or i["initiator"]["rank"] < 4 for i in rep["incidents"])


def test_rank_zero_only_logging_names_no_rank() -> None:
    """Lightning / accelerate print metrics on rank 0 only: a NaN there is the job's, rank unknown."""
    head = ("[rank0]: Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4\n"
            "[rank0]: All distributed processes registered. Starting with 4 processes\n")
    steps = "".join(f"[rank0]: Epoch 0: step {s} train_loss={'nan' if s >= 6 else f'{2 - s / 20:.3f}'}\n" for s in range(1, 11))
    top = report(head + steps)["incidents"][0]
    assert top["failure"] == "nonfinite_loss" and top["initiator"]["rank"] is None and top["initiator"]["step"] == 6
    # the same lines from a single-process job: rank 0 is the only rank, and it is named
    alone = report(steps)["incidents"][0]
    assert alone["initiator"]["rank"] == 0


def test_spawn_process_raised_names_the_process_of_a_rankless_error() -> None:
    """torch.multiprocessing.spawn's ProcessRaisedException (fairseq, corpus crash-094): the
    parent's "-- Process 0 terminated with the following error:" names the failed worker, even
    in a paste cut inside the word."""
    text = ("2020-11-05 19:30:05 | WARNING | fairseq.trainer | attempting to recover from OOM in forward/backward pass\n"
            "Exception: \n\n-- Process 0 termina")
    inc = report(text)["incidents"][0]
    assert (inc["failure"], inc["initiator"]["rank"], inc["initiator"]["rank_from"]) == ("cuda_oom", 0, "launcher")


def test_a_failed_worker_does_not_take_an_oom_on_another_device() -> None:
    """corpus holdout crash-090: the OOM says GPU 0, the spawn parent names process 3."""
    text = ("| WARNING: ran out of memory with exception: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; "
            "7.93 GiB total capacity; 7.20 GiB already allocated; 17.56 MiB free; 46.25 MiB cached);\n"
            "-- Process 3 terminated with the following error:\nTraceback (most recent call last):")
    inc = report(text)["incidents"][0]
    assert inc["failure"] == "cuda_oom" and inc["initiator"]["rank"] != 3


_OOM_GPU2 = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 98.00 MiB (GPU 2; 39.59 GiB total "
             "capacity; 37.33 GiB already allocated; 16.19 MiB free; 37.68 GiB reserved in total by PyTorch)\n")


def test_torchruns_one_failed_worker_takes_the_lone_oom_whatever_device_it_names() -> None:
    """torchrun 2.0's agent (elastic/multiprocessing/api.py) tears the other worker down with
    SIGTERM and names the one that exited with an exception; it shows no error of that worker's,
    so the one OOM text is its own, though it names device 2 (a script's own device map: corpus
    h24c-009, a FastChat paste). Spawn's notice, which prints the process's traceback below, keeps
    the device check (the test above)."""
    text = (_OOM_GPU2
            + "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 57249 closing signal SIGTERM\n"
            "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 1 (pid: 57250) of "
            "binary: /envs/vicuna-env/bin/python\n")
    inc = report(text)["incidents"][0]
    assert (inc["failure"], inc["initiator"]["rank"], inc["initiator"]["rank_from"]) == ("cuda_oom", 1, "launcher")


def test_a_worker_under_failures_with_the_root_cause_cut_does_not_take_the_error() -> None:
    """torchrun's ChildFailedError summary lists the other failed workers under 'Failures:' and the
    first under 'Root Cause'; an excerpt cut after a 'Failures:' entry (corpus h22b-021, every
    process of a 70B load out of memory) shows a worker that was not the first to fail."""
    text = (_OOM_GPU2 + "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
            + "=" * 60 + "\nsrc/train_bash.py FAILED\n" + "-" * 60 + "\nFailures:\n[1]:\n"
            "  time      : 2023-07-27_14:35:14\n  host      : node1\n  rank      : 1 (local_rank: 1)\n"
            "  exitcode  : 1 (pid: 14442)\n  error_file: <N/A>\n")
    inc = report(text)["incidents"][0]
    assert (inc["failure"], inc["initiator"]["rank"]) == ("cuda_oom", None)
    # the same entry as the summary's root cause is the first failed worker: it takes the error
    root = text.replace("Failures:\n[1]:", "Failures:\n  <NO_OTHER_FAILURES>\n" + "-" * 60
                        + "\nRoot Cause (first observed failure):\n[1]:")
    assert report(root)["incidents"][0]["initiator"]["rank"] == 1


def test_a_spawned_job_shows_one_process_per_gpu() -> None:
    """fairseq (corpus crash-089): an OOM on GPU 1, and the parent's traceback runs through
    torch.multiprocessing.spawn: a process per GPU, so GPU 1 is rank 1 (inferred)."""
    oom = ("2020-11-06 22:55:35 | WARNING | fairseq.trainer | OOM: Ran out of memory with exception: CUDA out of memory. "
           "Tried to allocate 28.00 MiB (GPU 1; 10.92 GiB total capacity; 10.13 GiB already allocated; 13.38 MiB free)")
    spawn = ('  File "/envs/fairseq/lib/python3.6/site-packages/torch/multiprocessing/spawn.py", line 171, in spawn\n'
             "    while not spawn_context.join():")
    ini = report(oom + "\nTraceback (most recent call last):\n" + spawn)["incidents"][0]["initiator"]
    assert (ini["rank"], ini["rank_from"], ini["inferred"]) == (1, "gpu_index", True)
    assert report(oom)["incidents"][0]["initiator"]["rank"] is None  # the OOM line alone shows no multi-GPU job


def test_a_launcher_that_killed_several_workers_shows_one_process_per_gpu() -> None:
    """DeepSpeed's launcher kills both subprocesses after an OOM on GPU 1 (a LLaMA-Factory ZeRO-3
    run, corpus holdout18 h18c-018): a process per GPU, so GPU 1 is rank 1 (inferred)."""
    oom = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.45 GiB (GPU 1; 23.68 GiB total "
           "capacity; 18.98 GiB already allocated; 1.31 GiB free; 22.03 GiB reserved in total by PyTorch)")
    kills = "\n".join(f"[2023-12-04 09:47:01,699] [INFO] [launch.py:315:sigkill_handler] Killing subprocess {p}"
                      for p in (1357, 1358))
    ini = report(oom + "\n" + kills)["incidents"][0]["initiator"]
    assert (ini["rank"], ini["rank_from"], ini["inferred"]) == (1, "gpu_index", True)


def test_a_collectors_label_before_the_torchrun_prefix() -> None:
    """Kubeflow logs shown by a collector (corpus d2-011): 'master-0 logs: [default0]:[rank0]: …'."""
    from detectors.prefixes import split_prefixes

    p = split_prefixes("master-0 logs: [default0]:[rank0]: torch.OutOfMemoryError: CUDA out of memory.", 2026)
    assert (p.rank, p.local_rank, p.body) == (0, 0, "torch.OutOfMemoryError: CUDA out of memory.")
    p = split_prefixes("pod/trainer-worker-1 [default3]:step 5 loss nan", 2026)
    assert (p.local_rank, p.body) == (3, "step 5 loss nan")


# NCCL's WARN and the "file.cc:N -> 1" lines that return its error code, one process (host:pid)
# at a time, run into that process's rank-tagged traceback: the WARN is that rank's (block)
_NVLS_RANK1 = (  # pytorch/pytorch#130113 (3 GPUs, the NVLS setup fails on the process of GPU 1)
    "node155:3054646:3054695 [1] NCCL INFO Setting affinity for GPU 1 to ffff,ffffffff,00000000,0000ffff,ffffffff\n"
    "node155:3054647:3054696 [2] NCCL INFO group.cc:64 -> 1 [Async thread]\n"
    "\n"
    "node155:3054646:3054695 [1] transport/nvls.cc:246 NCCL WARN Cuda failure 3 'initialization error'\n"
    "node155:3054646:3054695 [1] NCCL INFO init.cc:1010 -> 1\n"
    "node155:3054646:3054695 [1] NCCL INFO init.cc:1501 -> 1\n"
    "node155:3054646:3054695 [1] NCCL INFO group.cc:64 -> 1 [Async thread]\n"
    "node155:3054645:3054645 [0] NCCL INFO group.cc:418 -> 1\n"
    "node155:3054647:3054647 [2] NCCL INFO group.cc:418 -> 1\n"
    "node155:3054645:3054645 [0] NCCL INFO group.cc:95 -> 1\n"
    "node155:3054647:3054647 [2] NCCL INFO group.cc:95 -> 1\n"
    "node155:3054646:3054646 [1] NCCL INFO group.cc:418 -> 1\n"
    "node155:3054646:3054646 [1] NCCL INFO group.cc:95 -> 1\n"
)
_ALLOC_RANK0 = (  # alisson-anjos/diffusion-pipe-ui#10 (DeepSpeed launcher, one container)
    "bd73ab638b22:502:568 [0] include/alloc.h:112 NCCL WARN Cuda failure 999 'unknown error'\n"
    "bd73ab638b22:502:568 [0] NCCL INFO include/alloc.h:199 -> 1\n"
    "bd73ab638b22:502:568 [0] NCCL INFO channel.cc:41 -> 1\n"
    "bd73ab638b22:502:568 [0] NCCL INFO init.cc:526 -> 1\n"
    "bd73ab638b22:502:568 [0] NCCL INFO init.cc:1259 -> 1\n"
    "bd73ab638b22:502:568 [0] NCCL INFO init.cc:1548 -> 1\n"
    "bd73ab638b22:502:568 [0] NCCL INFO group.cc:64 -> 1 [Async thread]\n"
    "bd73ab638b22:502:502 [0] NCCL INFO group.cc:418 -> 1\n"
    "bd73ab638b22:502:502 [0] NCCL INFO init.cc:1929 -> 1\n"
)


@pytest.mark.parametrize(("chain", "rank"), [(_NVLS_RANK1, 1), (_ALLOC_RANK0, 0)])
def test_an_nccl_error_chain_ending_above_a_tagged_traceback_is_that_ranks(chain: str, rank: int) -> None:
    text = chain + f"[rank{rank}]: Traceback (most recent call last):\n[rank{rank}]:   File \"train.py\", line 3, in <module>\n"
    top = report(text)["incidents"][0]
    assert top["failure"] == "nccl_error"
    assert top["initiator"]["rank"] == rank and top["initiator"]["rank_from"] == "block"


def test_another_processes_chain_does_not_claim_the_warn() -> None:
    # the process of GPU 0 ends the chain right above rank 0's traceback: GPU 1's WARN is not rank 0's
    lines = _NVLS_RANK1.splitlines()
    text = "\n".join(lines[:-2]) + "\n" + "node155:3054645:3054645 [0] NCCL INFO group.cc:95 -> 1\n" + \
        "[rank0]: Traceback (most recent call last):\n"
    init = report(text)["incidents"][0]["initiator"]
    # not rank 0's (block); only GPU 1's device index remains, the weakest link
    assert (init["rank"], init["rank_from"], init["inferred"]) == (1, "gpu_index", True)


def test_a_later_nccl_rank_map_names_the_process_of_an_earlier_warn() -> None:
    """horovod/horovod#1651: only ta1-1:2712 fails (ibv_create_qp); its `comm ... rank 1 nranks 2`
    line comes after the WARN. `[0]` is the CUDA device on both hosts, not a rank."""
    text = (
        "ta1-1:2712:2824 [0] misc/ibvwrap.cu:280 NCCL WARN Call to ibv_create_qp failed\n"
        "ta1-1:2712:2824 [0] NCCL INFO transport/net_ib.cu:371 -> 2\n"
        "ta1-1:2712:2824 [0] NCCL INFO init.cu:593 -> 2\n"
        "ta1-0:2668:2780 [0] NCCL INFO rank 0 nranks 2\n"
        "ta1-1:2712:2824 [0] NCCL INFO rank 1 nranks 2\n"
        "ta1-0:2668:2780 [0] NCCL INFO comm 0x7f0a8834b870 rank 0 nranks 2\n"
        "ta1-1:2712:2824 [0] NCCL INFO comm 0x7fa94834c010 rank 1 nranks 2\n"
    )
    top = report(text)["incidents"][0]
    assert top["failure"] == "nccl_error"
    assert top["initiator"]["rank"] == 1 and top["initiator"]["rank_from"] == "prefix"


@pytest.mark.parametrize(("line", "rank"), [
    # NVIDIA/nccl#914 (retcode 2, ncclSystemError: the proxy's own socket/IB call failed)
    ("host:22337:22453 [6] proxy.cc:1097 NCCL WARN [Proxy Service 14] Failed to execute operation Connect from rank 14, "
     "retcode 2", 14),
    # an RCCL report (UCX net plugin, retcode 3): the owner is rank 1 of the job, on device [0]
    ("node02:10366:10377 [0] /data/jenkins_workspace/workspace/rccl_release/build/hipify/src/proxy.cc:1524 NCCL WARN "
     "[Proxy Service 1] Failed to execute operation Connect from rank 1, retcode 3", 1),
    # NVIDIA/nccl#795: retcode 6 is ncclRemoteError, the remote side went away: the owner is not the origin
    ("a100-st-p4d24xlarge-22:183006:183220 [1] proxy.cc:1119 NCCL WARN [Proxy Service 9] Failed to execute operation "
     "Connect from rank 9, retcode 6", None),
])
def test_the_proxy_service_number_is_its_owners_rank(line: str, rank: int | None) -> None:
    top = report(line + "\n")["incidents"][0]
    assert top["failure"] == "nccl_error"
    assert top["initiator"]["rank"] == rank


def _shm_warn(pid: int, dev: int, seg: str) -> str:
    # NCCL's shm transport (src/transport/shm.cc, ncclShmOpen): the segment name is random per process
    return (f"gpu-node-7:{pid}:{pid + 40} [{dev}] misc/shmutils.cc:72 NCCL WARN Error while creating shared memory "
            f"segment /dev/shm/nccl-{seg} (size 9637888)\n"
            f"gpu-node-7:{pid}:{pid + 40} [{dev}] NCCL INFO transport/shm.cc:114 -> 2\n")


_PROXY_12 = "gpu-node-7:2212:2260 [4] proxy.cc:1567 NCCL WARN [Proxy Service 12] Failed to execute operation Connect from rank 12, retcode 2\n"


def test_the_same_first_failing_call_on_several_processes_names_no_rank() -> None:
    """deepseek-ai/DeepEP#143's shape (ibv_create_cq ENOMEM on devices 7 and 0, then a third
    process's proxy naming its rank): the first failing call, made alike by two processes of one
    node, is the node's (its shared memory, its HCA), not the rank a later line of the cascade
    names (tests/corpus/README.md, the round-18 NCCL set-up convention)."""
    top = report(_shm_warn(2210, 3, "LeXlEJ") + _shm_warn(2214, 5, "q0Rt7a") + _PROXY_12)["incidents"][0]
    assert top["failure"] == "nccl_error"
    assert top["initiator"]["rank"] is None


def test_a_failing_call_of_one_process_still_names_its_rank() -> None:
    top = report(_shm_warn(2212, 4, "LeXlEJ") + _PROXY_12)["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"]) == ("nccl_error", 12)


_SRUN_WARN = (
    # srun --label over NCCL's debug lines (log-formats.md: Slurm's "N: " task id)
    "1: p4d-node-2:4827:6900 [4] bootstrap.cc:77 NCCL WARN Message truncated : received 256 bytes instead of 4\n"
    "1: p4d-node-2:4827:6900 [4] NCCL INFO bootstrap.cc:554 -> 3\n"
    "1: p4d-node-2:4827:6900 [4] NCCL INFO transport.cc:204 -> 3\n"
)


def test_srun_labels_of_node_tasks_are_not_ranks() -> None:
    """torchrun under srun (one task per node): task 2's line is tagged [rank18], so the labels
    are nodes' tasks, and the WARN labelled "1:" (read before that was known) names no rank."""
    text = _SRUN_WARN + (
        "2: [rank18]:[W ProcessGroupNCCL.cpp:2302] Warning: TORCH_NCCL_AVOID_RECORD_STREAMS=1 has no effect "
        "for point-to-point collectives. (function operator())\n"
    )
    top = report(text)["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"]) == ("nccl_error", None)


def test_srun_labels_of_one_task_per_rank_name_the_rank() -> None:
    text = _SRUN_WARN + "2: [rank2]:[W ProcessGroupNCCL.cpp:2302] Warning: TORCH_NCCL_AVOID_RECORD_STREAMS=1 has no effect\n"
    top = report(text)["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"]) == ("nccl_error", 1)


def test_a_repeated_leading_bracket_number_is_an_mpi_prepend_rank() -> None:
    """MPICH's and Intel MPI's ``mpirun -prepend-rank`` put "[155] " before every line of rank
    155; a log viewer's "[80746] " line numbers never repeat. Once a number came back, the
    brackets are ranks (the NCCL lines' own ``[3]`` is the device)."""
    text = (
        "[155] ib-node-19:5330:7970 [3] NCCL INFO Ring 00 : 5[3d000] -> 6[b2000] via P2P/IPC\n"
        "[155] ib-node-19:5330:7970 [3] NCCL INFO Ring 01 : 2[b2000] -> 5[3d000] [receive] via NET/IB/3\n"
        "[155] ib-node-19:5330:7970 [3] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with error Invalid argument\n"
        "[155] ib-node-19:5330:7970 [3] NCCL INFO transport/net_ib.cc:368 -> 2\n"
    )
    top = report(text)["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"], top["initiator"]["rank_from"]) == ("nccl_error", 155, "prefix")


@pytest.mark.parametrize("text", [
    # a viewer's line numbers (real-logs/049's shape): each number once
    "[80745] ib-node-19:5330:7970 [3] NCCL INFO Ring 00 : 5[3d000] -> 6[b2000] via P2P/IPC\n"
    "[80746] ib-node-19:5330:7970 [3] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with error Invalid argument\n",
    # NCCL lines whose host:pid:tid was cut: "[1]" is the CUDA device (NVIDIA/TensorRT-LLM issues' shape)
    "[1] enqueue.cc:1500 NCCL WARN Cuda failure 1 'invalid argument'\n[1] NCCL INFO group.cc:242 -> 1\n"
    "[1] NCCL INFO enqueue.cc:2229 -> 1\n",
])
def test_line_numbers_and_nccl_devices_are_not_bracket_ranks(text: str) -> None:
    top = report(text)["incidents"][0]
    assert top["failure"] == "nccl_error"
    assert top["initiator"]["rank_from"] != "prefix"


def test_an_nccl_cuda_failure_on_a_device_other_than_0_names_that_rank_inferred() -> None:
    """vllm-project/vllm#9369 (TP=4 on one node, no traceback in the excerpt): the process on
    CUDA device 2 fails; a device index is the weakest link of the chain (inferred)."""
    text = (
        "kmaker-54-033138205093:44712:44746 [2] transport/nvls.cc:246 NCCL WARN Cuda failure 3 'initialization error'\n"
        "kmaker-54-033138205093:44712:44746 [2] NCCL INFO init.cc:1010 -> 1\n"
        "kmaker-54-033138205093:44713:44745 [3] NCCL INFO Setting affinity for GPU 3 to ffffffff,00000000,ffffffff,00000000\n"
    )
    top = report(text)["incidents"][0]
    assert top["failure"] == "nccl_error"
    assert (top["initiator"]["rank"], top["initiator"]["rank_from"], top["initiator"]["inferred"]) == (2, "gpu_index", True)


@pytest.mark.parametrize("line", [
    # device 0 alone: a single-GPU process looks the same (NVIDIA/TensorRT-LLM#1670's wording)
    "VM-0-16-ubuntu:392:494 [0] enqueue.cc:54 NCCL WARN Cuda failure 'invalid resource handle'",
    # a network failure says nothing about the device (NVIDIA/nccl#795)
    "a100-st-p4d24xlarge-22:183006:183220 [1] misc/socket.cc:518 NCCL WARN Net : Call to recv from 10.200.84.247<58355> "
    "failed : Broken pipe",
])
def test_an_nccl_device_index_names_no_rank_otherwise(line: str) -> None:
    assert report(line + "\n")["incidents"][0]["initiator"]["rank"] is None


def test_a_sub_communicators_rank_does_not_name_the_process() -> None:
    # the lines of horovod/horovod#1651, with the failing process's rank map in a 2-rank sub-group of 4 ranks
    text = (
        "ta1-1:2712:2824 [0] misc/ibvwrap.cu:280 NCCL WARN Call to ibv_create_qp failed\n"
        "ta1-0:2668:2780 [0] NCCL INFO comm 0x7f0a8834b870 rank 0 nranks 4\n"
        "ta1-1:2712:2824 [0] NCCL INFO comm 0x7fa94834c010 rank 0 nranks 2\n"
    )
    assert report(text)["incidents"][0]["initiator"]["rank"] is None


def test_a_process_waiting_for_its_rank_survives_a_checkpoint() -> None:
    from monitor import snapshot

    st = JobState(job="t")
    fs = FileState("console.log", year=2026, job=JobParseState())
    lines = ["ta1-1:2712:2824 [0] misc/ibvwrap.cu:280 NCCL WARN Call to ibv_create_qp failed",
             "ta1-1:2712:2824 [0] NCCL INFO comm 0x7fa94834c010 rank 1 nranks 2"]
    for ev in default_parser().parse_line(lines[0], 1, fs):
        st.add(ev)
    st = snapshot.load(snapshot.dump(st))  # the daemon restarts between the two lines
    for ev in default_parser().parse_line(lines[1], 2, fs):
        st.add(ev)
    assert build_report(st)["incidents"][0]["initiator"]["rank"] == 1


def test_open_mpi_names_the_rank_that_ended_the_job() -> None:
    """mpirun's own summaries (Horovod and MPI jobs): a signal, and the three-line first failure."""
    inc = report("Primary job  terminated normally, but 1 process returned\n"
                 "mpirun noticed that process rank 7 with PID 0 on node HOSTNAME exited on signal 9 (Killed).")["incidents"][0]
    assert (inc["initiator"]["rank"], inc["initiator"]["rank_from"]) == (7, "launcher")
    text = ("mpirun detected that one or more processes exited with non-zero status, thus causing\n"
            "the job to be terminated. The first process to do so was:\n\n"
            "  Process name: [[29973,1],0]\n  Exit code:    1")
    inc = report(text)["incidents"][0]
    assert (inc["failure"], inc["initiator"]["rank"]) == ("rank_exception", 0)
    # Open MPI names itself as it was called: mpiexec (corpus d4-042, a Horovod job's segfault)
    inc = report("[lhx-910:19474] *** Process received signal ***\n[lhx-910:19474] Signal: Segmentation fault (11)\n"
                 "mpiexec noticed that process rank 0 with PID 19474 on node lhx-910 exited on signal 11 "
                 "(Segmentation fault).")["incidents"][0]
    assert (inc["failure"], inc["initiator"]["rank"]) == ("rank_segfault", 0)


def test_a_runners_stream_label_before_the_torchrun_summary() -> None:
    """'accelerate test' relays its child's stderr as 'stderr: …'."""
    from detectors.prefixes import split_prefixes

    assert split_prefixes("stderr:   rank      : 1 (local_rank: 1)", 2026).body == "  rank      : 1 (local_rank: 1)"


# ParlAI's distributed logger puts the rank first ("rank:  3 | <time> <LEVEL> | message") and logs a
# traceback whose frames and exception line carry no prefix (facebookresearch/ParlAI#4452, the round-7
# sealed set's h7b-027, after its first look)
PARLAI_OOM = [
    "rank:  3 | 2022-04-03 18:44:26,615 CRITICAL | Traceback (most recent call last):",
    '  File "/mnt/lustre/zhaojianqiao/ParlAI/parlai/core/torch_generator_agent.py", line 605, in _fake_forward_backward_pass',
    "    self.backward(loss)",
    '  File "/mnt/lustre/zhaojianqiao/ParlAI/parlai/utils/fp16.py", line 194, in backward',
    "    loss.backward()",
    "RuntimeError: CUDA out of memory. Tried to allocate 21.06 GiB (GPU 3; 79.35 GiB total capacity; 63.19 GiB "
    "already allocated; 8.57 GiB free; 68.48 GiB reserved in total by PyTorch) If reserved memory is >> allocated "
    "memory try setting max_split_size_m",
]


def test_a_leading_rank_column_before_a_pipe_is_the_rank() -> None:
    from detectors.prefixes import split_prefixes

    p = split_prefixes(PARLAI_OOM[0], 2022)
    assert (p.rank, p.level, p.body) == (3, "CRITICAL", "Traceback (most recent call last):")
    p = split_prefixes("rank 1 | step 6 | loss nan", 2026)
    assert (p.rank, p.body) == (1, "step 6 | loss nan")
    # a rank named in prose is the message's, not a prefix
    assert split_prefixes("Rank 3: hello", 2026).rank is None


def test_the_bare_exception_ending_a_rank_tagged_traceback_is_that_ranks() -> None:
    top = engine_verdict(PARLAI_OOM)[0]
    assert (top.failure, top.rank) == ("cuda_oom", 3)
    # the same exception with no tagged header names no rank (GPU 3 alone is no evidence here)
    assert engine_verdict(["Traceback (most recent call last):", *PARLAI_OOM[1:]])[0].rank is None


@pytest.mark.parametrize(("line", "rank"), [
    # loguru with the rank bound into the format ("{time} | {level: <8} | rank{extra[rank]} | {message}")
    ("2026-12-06 01:26:36.205 | INFO     | rank1 | step 50 | loss inf | grad_norm nan | lr 3.81e-05", 1),
    # a python-logging format string "%(asctime)s - rank=%(rank)s - %(levelname)s - %(message)s"
    ("2026-12-06 01:26:36,205 - rank=3 - INFO - step 50 loss nan", 3),
    # a key in the message is no rank column
    ("2026-12-06 01:26:36,205 - INFO - rank 3 finished", None),
    # a user's own short tag at the start of a line
    ("rank3: step 30 loss nan", 3),
    ("[r3] step 30 loss nan", 3),
    ("we saw rank3: step 30 loss nan", None),
    # loguru with only the time of day and a short "r1" tag (corpus holdout17 g17b-012)
    ("02:03:53.597 | DEBUG   | r1 | step 44: loss nan", 1),
    ("[02:03:53] - INFO - r2 - step 44 loss nan", 2),
    # a time of day with no header after it is no logger prefix
    ("12:30:05 r1 step 44 loss nan", None),
    # the level word, then the user's tag ("%(levelname)s rank%(rank)s: %(message)s", corpus holdout18 g18-030)
    ("WARNING rank3: non-finite loss (nan) at epoch 1 batch 37/80", 3),
    ("WARNING the rank3: tag is not at the start", None),
])
def test_a_bare_rank_column_in_a_logger_header(line: str, rank: int | None) -> None:
    from detectors.prefixes import split_prefixes

    assert split_prefixes(line, 2026).rank == rank


def test_the_only_rank_that_logs_a_grad_norm_does_not_own_its_explosion() -> None:
    """accelerate's example loop: rank 0 logs the (all-reduced) grad norm, every rank logs its own
    local loss (golden case spike-accelerate-console). The norm explodes on rank 0's line, but it is
    the job's: no rank is named."""
    hdr = "12/03/2026 17:56:55 - INFO - __main__ - "
    lines = []
    for step in range(1, 14):
        g = 412.7 if step == 12 else 0.9 + 0.02 * step
        lines.append(f"[default0]:{hdr}[RANK 0] step {step}: mean loss 0.30 grad_norm {g}")
        lines += [f"[default{r}]:{hdr}[RANK {r}] step {step}: local loss 0.2{r}" for r in range(4)]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("grad_norm_explosion", None)


def test_icefalls_rank_and_world_behind_the_source_location_is_the_global_rank() -> None:
    from detectors.prefixes import split_prefixes

    # k2-fsa/icefall#1463 (corpus d3-043) and lifeiteng/vall-e#86 (h2-103): setup_logger's
    # "%(asctime)s %(levelname)s [%(filename)s:%(lineno)d] (rank/world_size) %(message)s"
    p = split_prefixes("2024-01-14 01:03:00,826 WARNING [train.py:1057] (2/4) Grad scale is small: 1.29e-26", 2024)
    assert (p.rank, p.level, p.body) == (2, "WARNING", "Grad scale is small: 1.29e-26")
    p = split_prefixes("2023-04-13 16:00:05,621 INFO [trainer.py:650] (5/8) Reaches end of dataloader.", 2023)
    assert (p.rank, p.body) == (5, "Reaches end of dataloader.")
    # before the process group is up the pair is absent; a count in the message is no rank
    p = split_prefixes("2024-01-14 01:02:00,001 INFO [train.py:1190] (1/3) shards loaded", 2024)
    assert p.rank == 1
    p = split_prefixes("2024-01-14 01:02:00,001 INFO [train.py:1190] Loading (1/3) shards", 2024)
    assert (p.rank, p.body) == (None, "Loading (1/3) shards")
    assert split_prefixes("2024-01-14 01:02:00,001 INFO [utils.py:12] (3/2) x", 2024).rank is None


def test_an_untagged_traceback_right_below_a_line_naming_its_rank_is_that_ranks() -> None:
    """logger.exception() prints its message line, then the traceback without the logger's
    header: the rank the message line named owns the traceback, even when another rank's tagged
    traceback follows right below it (which would otherwise claim the untagged error above it)."""
    lines = [
        "2026-12-07 00:12:47,254 I rank1 train.py:27] step 25 loss 0.9037",
        "2026-12-07 00:12:47,263 E rank2 train.py:22] OOM at step 27 (batch 512) - skipping batch",
        "Traceback (most recent call last):",
        '  File "/home/user/proj/train.py", line 17, in <module>',
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.50 GiB. GPU 2 has a total capacity of "
        "39.39 GiB of which 2.91 GiB is free.",
        "[rank0]: Traceback (most recent call last):",
        '[rank0]:   File "/home/user/proj/train.py", line 25, in <module>',
        "[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:129] "
        "Timed out waiting 20000ms for send operation to complete",
    ]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("cuda_oom", 2)


def test_a_note_naming_a_rank_does_not_claim_the_traceback_below_it() -> None:
    """DeepSpeed's log_dist prints "[Rank 0] Creating ZeRO Offload" on rank 0 only; the untagged
    traceback right below it is any process's (here every process raised the same error)."""
    tb = ["Traceback (most recent call last):", '  File "/home/user/train.py", line 294, in decoupled_optimizer',
          "AttributeError: 'tuple' object has no attribute 'named_parameters'"]
    lines = ["[2023-07-24 15:58:17,035] [INFO] [logging.py:96:log_dist] [Rank 0] Creating ZeRO Offload", *tb, *tb, *tb]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("rank_exception", None)


def test_argparse_rejecting_every_workers_command_line_is_a_crash_of_the_job() -> None:
    usage = ["usage: train.py [-h] [--output-dir OUTPUT_DIR] [--data-config DATA_CONFIG]",
             "                [-d] [--rank-gpu] [--resume] [-v]", "                [config]",
             "train.py: error: unrecognized arguments: configs/scaling_cgpu.yaml"]
    top = engine_verdict(usage * 4)[0]
    assert (top.failure, top.severity, top.rank) == ("rank_exception", "critical", None)


@pytest.mark.parametrize(("line", "rank", "task"), [
    ("[r2/4] step   17 fwd", 2, None),       # a user's "rank of world" tag
    ("1: [r2/4] step   17 fwd", 2, 1),      # the same behind srun's task label (task 1 runs rank 2)
    ("1: [r2] step 17 loss 0.33242", 2, 1),
    ("[rank3/8] step 4 loss 1.2", 3, None),
])
def test_a_rank_of_world_tag_and_a_users_tag_behind_an_srun_label(line: str, rank: int, task: int | None) -> None:
    # a CPU job under an srun-like wrapper that labels each launcher's lines (corpus holdout24 g24-005)
    from detectors.prefixes import split_prefixes
    p = split_prefixes(line)
    assert (p.rank, p.task) == (rank, task)


def test_open_mpi_5s_prterun_names_its_first_failed_process_too() -> None:
    # a DeepSpeed job on two ROCm GPUs under prterun (corpus holdout24 h24e-012): both ranks fail the
    # same 64 MiB allocation; PRRTE's summary names the first process that exited, rank 0
    oom = ("[rank{r}]: torch.OutOfMemoryError: HIP out of memory. Tried to allocate 64.00 MiB. GPU {r} has a total "
           "capacity of 63.98 GiB of which 10.00 MiB is free.")
    text = "\n".join([f"[rank{r}]: step 0 loss 10.2" for r in (0, 1)] + [oom.format(r=0), oom.format(r=1)] + [
        "prterun detected that one or more processes exited with non-zero status,",
        "thus causing the job to be terminated. The first process to do so was:", "",
        "   Process name: [prterun-scc-4123871@1,0]", "   Exit code:    1"]) + "\n"
    inc = report(text)["incidents"][0]
    assert (inc["failure"], inc["initiator"]["rank"]) == ("cuda_oom", 0)
    text = text.replace("Process name: [prterun-scc-4123871@1,0]", "Process name: [prterun-scc-4123871@1,1]")
    assert report(text)["incidents"][0]["initiator"]["rank"] == 1


@pytest.mark.parametrize(("line", "rank"), [
    ("INFO:trainer.rank2:step=3 nll=0.32842 min_rate=2.5298", 2),  # getLogger(f"trainer.rank{rank}")
    ("WARNING:train.rank_3:step 4 loss 1.2", 3),
    ("INFO:torch.distributed.elastic.multiprocessing.api:Sending process 1 closing signal SIGTERM", None),
    ("INFO:ranker:step 4 loss 1.2", None),
])
def test_a_logger_named_after_its_rank_names_it(line: str, rank: int | None) -> None:
    # python logging's default "LEVEL:name:message" with one logger per rank (corpus holdout24 g24d-026)
    from detectors.prefixes import split_prefixes
    assert split_prefixes(line).rank == rank


def test_a_loss_hovering_around_zero_does_not_spike_on_its_own_noise() -> None:
    # an NLL between -0.5 and 0.33 (g24d-026): 0.246 against a median of -0.094 is noise, and the
    # NaN that came later is the failure, that rank's
    vals = [0.32842, -0.20216, -0.09433, -0.25950, 0.00086, -0.28658, 0.24628, -0.49613, -0.05871, "nan", 0.15031]
    lines = [f"INFO:trainer.rank2:step={3 * (i + 1)} nll={v} min_rate=2.5" for i, v in enumerate(vals)]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank, top.step) == ("nonfinite_loss", 2, 30)


def test_an_nccl_warn_the_job_trained_on_from_is_a_note() -> None:
    # a committed 8-GPU run whose every process warned it could not open one IB device, then trained
    # to the end (corpus holdout24 h24e-019): NCCL skipped the device and went on
    warns = []
    for dev in range(4):
        warns += [f"[2026-03-18 14:38:12] pgut1-0:87178{dev}:87184{dev} [{dev}] ibvwrap.c:94 NCCL WARN Call to ibv_open_device failed",
                  f"[2026-03-18 14:38:12] pgut1-0:87178{dev}:87184{dev} [{dev}] p2p_plugin.c:565 NCCL WARN NET/IB : Unable to "
                  "open device mlx5_an0"]
    steps = [f"step:{s}/2000 train_loss:{4.0 - s / 1000:.4f} train_time:{s * 50}ms" for s in range(100, 1300, 100)]
    assert [i for i in engine_verdict([*warns, *steps]) if i.severity in ("critical", "warning")] == []
    top = engine_verdict([*warns, *steps[:2]])[0]
    assert top.failure == "nccl_error"  # two lines after it tell nothing yet


def test_library_errors_before_the_frameworks_end_of_training_line_are_a_note() -> None:
    # a committed Megatron-core run (corpus holdout25 h25a-005): UCX's vfs_fuse could not watch a
    # full /tmp from its dataloader workers, and the run printed its own end of training
    # (megatron/training/training.py print_datetime('after training is done'))
    errs = [f"[1724683035.99{i}952] [sse-lg-112-41:9096{i}:f]        vfs_fuse.c:281  UCX  ERROR "
            "inotify_add_watch(/tmp) failed: No space left on device" for i in range(4)]
    run = ["training ...", "[before the start of training step] datetime: 2024-08-26 14:39:41 "]
    done = "[after training is done] datetime: 2024-08-26 14:42:33 "
    assert [i for i in engine_verdict([*run, *errs, done]) if i.severity in ("critical", "warning")] == []
    assert engine_verdict([*run, *errs])[0].failure == "nccl_error"  # the run never said it finished
    assert engine_verdict([*run, done, *errs])[0].failure == "nccl_error"  # after the end: still a failure
    # Lightning's fit loop and the HF Trainer say it in their own words
    for end in ("`Trainer.fit` stopped: `max_epochs=3` reached.",
                "Training completed. Do not forget to share your model on huggingface.co/models =)"):
        assert [i for i in engine_verdict([*run, *errs, end]) if i.severity in ("critical", "warning")] == []


def test_a_whole_untagged_traceback_is_not_claimed_by_the_tagged_one_below() -> None:
    """A worker's whole OOM traceback printed without a rank tag (its own ``Traceback ...`` through
    ``torch.OutOfMemoryError: ... GPU 0``), then rank 0's tagged traceback of its own lost peer:
    the tagged block is another process's report, and torchrun's root cause (rank 1, exit 1) is
    the OOM's process (corpus holdout33 g33-020, a CPU torchrun job)."""
    lines = ["Traceback (most recent call last):", '  File "/home/user/run/train.py", line 37, in <module>',
             "    main()", '  File "/home/user/run/train.py", line 28, in main',
             '    raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 4.50 GiB. GPU 0 has a total capacity '
             'of 39.39 GiB of which 3.12 GiB is free. "',
             "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.50 GiB. GPU 0 has a total capacity of 39.39 GiB "
             "of which 3.12 GiB is free.",
             "[rank0]: Traceback (most recent call last):", '[rank0]:   File "/home/user/run/train.py", line 30, in main',
             "[rank0]:     opt.zero_grad(); loss.backward(); opt.step()",
             "[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed "
             "by peer [127.0.0.1]:23437. This is typically caused by a remote worker crashing.",
             "W1207 22:10:01.000000 22890 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 22892 closing "
             "signal SIGTERM",
             "E1207 22:10:01.000000 22890 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) "
             "local_rank: 1 (pid: 22893) of binary: /usr/bin/python3"]
    inc = report("\n".join(lines))["incidents"][0]
    assert (inc["failure"], inc["initiator"]["rank"]) == ("cuda_oom", 1)
    # a lone exception line above the tagged traceback is still that traceback's (its summary)
    lone = report("\n".join([*lines[5:8], "[rank0]: torch.OutOfMemoryError: CUDA out of memory."]))["incidents"][0]
    assert (lone["failure"], lone["initiator"]["rank"]) == ("cuda_oom", 0)
