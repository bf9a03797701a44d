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


@pytest.mark.parametrize(("body", "want"), [
    ("[Rank 1] uncorrectable ECC error encountered", (1, None)),  # issue #12
    ("Unexpected result nan (message='found NaN in local grad norm in backward pass') on rank 2", (2, None)),
    ("worker failed rank=3 step=100", (3, None)),
    ("failed (exitcode: 1) local_rank: 5 (pid: 1234)", (None, 5)),
    ("failed to recv from rank 3", (None, None)),  # a peer, not the speaker
    ("waiting for peer rank 7 to connect", (None, None)),
    ("comm 0x55d0 nranks 8 cudaDev 0", (None, None)),
])
def test_message_rank(body: str, want: tuple[int | None, int | None]) -> None:
    assert message_rank(body) == want


def report(text: str, path: str = "console.log", rank: int | None = None) -> dict:
    st = JobState(job="t")
    fs = FileState(path, rank=rank, year=2026, job=JobParseState())
    for i, line in enumerate(text.splitlines(), 1):
        for ev in default_parser().parse_line(line, i, fs):
            st.add(ev)
    return build_report(st)


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
    assert [e.kind for e in default_parser().parse_line("[rank2]: Traceback (most recent call last):", 1, fs)] == [EventKind.BLOCK]
    assert default_parser().parse_line("Traceback (most recent call last):", 2, fs) == []


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


def test_a_collectors_label_before_the_torchrun_prefix() -> None:
    """Kubeflow logs shown by a collector (corpus d2-011): 'master-0 logs: [default0]:[rank0]: …'."""
    from detectors.prefixes import split_prefixes

    p = split_prefixes("master-0 logs: [default0]:[rank0]: torch.OutOfMemoryError: CUDA out of memory.", 2026)
    assert (p.rank, p.local_rank, p.body) == (0, 0, "torch.OutOfMemoryError: CUDA out of memory.")
    p = split_prefixes("pod/trainer-worker-1 [default3]:step 5 loss nan", 2026)
    assert (p.local_rank, p.body) == (3, "step 5 loss nan")
