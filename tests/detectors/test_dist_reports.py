"""Distributed failure reports whose speaker is not the origin, and prefixes that name the
speaker (issue #12, the nccl_timeout_collateral / nccl_error misses of round 5).

Each fixture is a real line, quoted with the thread it comes from."""

from __future__ import annotations

import pytest

from detectors.diagnosis import build_report
from detectors.prefixes import split_prefixes
from tests.helpers import fed_state


def report(text: str) -> dict:
    return build_report(fed_state(text.splitlines()))


# --- the watchdog's (async) ncclRemoteError: the rank in its header is the victim -------------

_REMOTE = [
    # pytorch/pytorch#150916 (corpus h4-033)
    "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 1] Process group watchdog thread terminated with exception: "
    "NCCL error: remote process exited or there was a network error, NCCL version 2.21.5\n"
    "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n"
    "Last error:\n"
    "socketProgress: Connection closed by remote peer ip-172-31-36-217.eu-north-1.compute.internal<59116>\n",
    # tatsu-lab/stanford_alpaca#207 (one pasted line, with the c10 lines glued before it)
    "[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. Due to the asynchronous nature of "
    "CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data. [E ProcessGroupNCCL.cpp:460] To "
    "avoid data inconsistency, we are taking the entire process down. terminate called after throwing an instance of "
    "'std::runtime_error' what(): NCCL error: remote process exited or there was a network error, NCCL version "
    "2.14.3 ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely. "
    "Last error: NET/IB : Got completion from peer 11.214.147.122<39138> with error 12, opcode 0, len 0, vendor err 129\n",
]


@pytest.mark.parametrize("text", _REMOTE)
def test_an_async_remote_error_names_no_rank(text: str) -> None:
    top = report(text)["incidents"][0]
    assert top["failure"] == "nccl_error"
    assert top["initiator"]["rank"] is None


def test_the_async_remote_error_with_a_rank_prefix_still_names_no_rank() -> None:
    # the same words behind torch's "[rankN]:" prefix: the prefix says who spoke, not who failed
    line = _REMOTE[0].splitlines()[0].replace("  what():  ", "[rank3]: what():  ").replace("Rank 1]", "Rank 3]")
    top = report(line + "\n")["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"]) == ("nccl_error", None)


def test_a_concrete_nccl_error_of_one_rank_still_names_it() -> None:
    # the control: an error of the speaker's own (segmenter#60's words) keeps its rank
    line = ("[rank2]: RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:825, "
            "unhandled system error, NCCL version 2.7.8\n")
    top = report(line)["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"]) == ("nccl_error", 2)


# --- monitored barrier: a rank that reached it and got errors from the coordinator ----------

_REACHED = [
    # wenet-e2e/wenet#2266 (corpus dist-020): the C++ line and the app's logging line
    "[E ProcessGroupGloo.cpp:137] Rank 1 successfully reached monitoredBarrier, but received errors while waiting "
    "for send/recv from rank 0. Please check rank 0 logs for faulty rank.\n"
    "2023-12-30 18:39:41,609 INFO Detected uneven workload distribution: Rank 1 successfully reached "
    "monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for "
    "faulty rank.\n",
    # deepspeedai/DeepSpeed#4488 (corpus h3-100): glued to a datasets progress bar
    "Map (num_proc=14):  70%|██████▌   | 652383/930514 [6:39:53<4:31:33, 17.07 examples/s][E ProcessGroupGloo.cpp:138] "
    "Rank 3 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. "
    "Please check rank 0 logs for faulty rank.\n",
]


@pytest.mark.parametrize("text", _REACHED)
def test_a_rank_that_reached_the_monitored_barrier_is_a_reporter(text: str) -> None:
    incs = report(text)["incidents"]
    assert incs, "the barrier's failure is reported"
    top = incs[0]
    assert top["failure"] == "collective_timeout"
    # neither the speaker (it waited) nor the coordinator it names (the messenger) is blamed
    assert top["initiator"]["rank"] is None
    assert [i for i in incs if i["initiator"]["rank"] is not None and i["severity"] != "info"] == []


def test_the_coordinators_own_report_still_names_the_rank_that_failed_to_pass() -> None:
    # QwenAudio/CosyVoice#180 (corpus dist-019): rank 0 names rank 2; ranks 1 and 3 reached it
    text = ("[E ProcessGroupGloo.cpp:138] Rank 3 successfully reached monitoredBarrier, but received errors while "
            "waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.\n"
            "[E ProcessGroupGloo.cpp:138] [Rank 0]: Rank 2 failed to pass monitoredBarrier in 30000 ms\n"
            "[E ProcessGroupGloo.cpp:138] Rank 1 successfully reached monitoredBarrier, but received errors while "
            "waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.\n")
    top = report(text)["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"]) == ("rank_hang", 2)
    assert {c["rank"] for c in top["collateral"]} >= {1, 3}


# --- Open MPI --tag-output with --timestamp-output ------------------------------------------

@pytest.mark.parametrize(("line", "rank", "body"), [
    # open-mpi/ompi#7710 (v4.0.2's documented shape; a one-digit day is space-padded)
    ("Thu May  7 10:39:20 2020[1,1]<stdout>:Hello, World, I am 1 of 8", 1, "Hello, World, I am 1 of 8"),
    # NVIDIA/nccl#957 (corpus h2-029)
    ("Fri Aug 11 12:31:45 2023[1,3]<stdout>:tomte401:1850304:1881110 [3] transport.cc:154 NCCL WARN Cuda failure "
     "'invalid argument'", 3, "NCCL WARN Cuda failure 'invalid argument'"),
])
def test_an_mpirun_timestamp_before_its_tag_keeps_the_rank(line: str, rank: int, body: str) -> None:
    p = split_prefixes(line)
    assert (p.rank, p.body) == (rank, body)
    assert p.time is not None


def test_without_the_mpi_tag_a_ctime_stamp_is_not_peeled() -> None:
    p = split_prefixes("Thu May  7 10:39:20 2020 Hello")
    assert p.rank is None and p.body.startswith("Thu May")


def test_the_same_nccl_failure_on_two_mpirun_ranks_names_neither() -> None:
    # NVIDIA/nccl#957 (corpus h2-029): ranks 0 and 3 fail alike: the node's or the environment's
    text = ("Fri Aug 11 12:31:45 2023[1,0]<stdout>:tomte401:1850301:1881341 [0] transport.cc:154 NCCL WARN Cuda "
            "failure 'invalid argument'\n"
            "Fri Aug 11 12:31:45 2023[1,3]<stdout>:tomte401:1850304:1881110 [3] transport.cc:154 NCCL WARN Cuda "
            "failure 'invalid argument'\n")
    top = report(text)["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"]) == ("nccl_error", None)
    assert {c["rank"] for c in top["collateral"]} == {0, 3}


# --- a rank an excerpt happens to show is not the silent one of a world it mostly hides -----

# sgl-project/sglang#3836 (corpus dist-110): rank 2's NCCL setup line (a 16-rank communicator),
# then rank 4's watchdog timeout; the other 14 ranks are not in the excerpt at all
_SPLIT = ("deepseek-yanfa:190:3197 [2] NCCL INFO ncclCommSplit comm 0x5601dc4ed8b0 rank 2 nranks {n} cudaDev 2 nvmlDev 2 "
          "busId 41000 parent 0x5601b34852c0 color 1197013201 key 2 commId 0x44d8628a425864f9 - Init COMPLETE\n")
_TIMEOUT = ("[rank{r}]:[E226 11:16:37.104512039 ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective operation "
            "timeout: WorkNCCL(SeqNum=5653, OpType=ALLREDUCE, NumelIn=58720256, NumelOut=58720256, Timeout(ms)=600000) "
            "ran for 600011 milliseconds before timing out.\n")


def test_one_timeout_in_a_world_the_excerpt_mostly_hides_names_no_rank() -> None:
    incs = report(_SPLIT.format(n=16) + _TIMEOUT.format(r=4))["incidents"]
    top = incs[0]
    assert (top["failure"], top["initiator"]["rank"]) == ("collective_timeout", None)
    assert [i for i in incs if i["failure"] == "rank_hang"] == []


def test_the_silent_rank_of_a_world_the_logs_cover_is_still_named() -> None:
    # the same lines in a world of 4 whose other ranks all time out: rank 2 set up its
    # communicator and then never reported, so it is the one they wait for
    text = _SPLIT.format(n=4) + "".join(_TIMEOUT.format(r=r) for r in (0, 1, 3))
    top = report(text)["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"]) == ("rank_hang", 2)


# --- the blocking-wait form of a collective timeout ---------------------------------------

def test_a_blocking_wait_timeout_is_read_when_the_watchdog_line_is_garbled() -> None:
    # pytorch/pytorch#143536 (corpus d3-051): a transformers warning spliced into each watchdog line;
    # both ranks stop at SeqNum 2109 (all-gathers of different sizes): no rank is behind
    text = (
        "[rank1]:[E616 13:41:10.909476913 ProcessGroupNCCL.cpp:565] [Rank 1] Watchdog caught collective operatMERS_CACHE` "
        "is deprecated and will be removed in v5 of Transformion timeout: WorkNCCL(SeqNum=2109, OpType=_ALLGATHER_BASE, "
        "NumelIn=262711296, NumelOut=525422592, Timeout(ms)=1800000) ran for 1800007 milliseconds before timing out.\n"
        "[rank1]:[E616 13:41:10.911168570 ProcessGroupNCCL.cpp:628] [Rank 1] Work WorkNCCL(SeqNum=2109, OpTypeMERS_CACHE` "
        "is deprecated and will be removed in v5 of Transform=_ALLGATHER_BASE, NumelIn=262711296, NumelOut=525422592, "
        "Timeout(ms)=1800000) timed out in blocking wait (TORCH_NCCL_BLOCKING_WAIT=1).\n"
        "[rank0]:[E616 13:41:10.040935704 ProcessGroupNCCL.cpp:628] [Rank 0] Work WorkNCCL(SeqNum=2109, OpTypeMERS_CACHE` "
        "is deprecated and will be removed in v5 of Transform=_ALLGATHER_BASE, NumelIn=40960, NumelOut=81920, "
        "Timeout(ms)=1800000) timed out in blocking wait (TORCH_NCCL_BLOCKING_WAIT=1).\n")
    incs = report(text)["incidents"]
    top = incs[0]
    assert (top["failure"], top["initiator"]["rank"]) == ("collective_timeout", None)
    assert {c["rank"] for c in top["collateral"]} >= {0, 1}


@pytest.mark.parametrize(("line", "rank"), [
    # IGNF/myria3d#123 (corpus h3-086), torch 1.x without a rank prefix
    ("[E ProcessGroupNCCL.cpp:541] [Rank 1] Work WorkNCCL(SeqNum=3, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
     "Timeout(ms)=1800000) timed out in blocking wait (NCCL_BLOCKING_WAIT=1).", 1),
    # huggingface/diffusers#12422 (corpus d2-010)
    ("[rank1]:[E1002 18:16:40.662691402 ProcessGroupNCCL.cpp:756] [Rank 1] Work WorkNCCL(SeqNum=2521, OpType=ALLREDUCE, "
     "NumelIn=160672064, NumelOut=160672064, Timeout(ms)=600000) timed out in blocking wait.", 1),
])
def test_a_blocking_wait_timeout_is_a_report_of_the_waiting_rank(line: str, rank: int) -> None:
    top = report(line + "\n")["incidents"][0]
    assert top["failure"] == "collective_timeout"
    assert top["initiator"]["rank"] is None  # a timeout report is collateral: it names no culprit
    assert [c["rank"] for c in top["collateral"]] == [rank]


# --- a distributed test harness's "Worker N hung.": a hang, the number is not the culprit ----


def test_harness_worker_hung_is_a_timeout_that_names_no_rank() -> None:
    """deepspeedai/DeepSpeed#2999 (corpus dist-125): DeepSpeed's unit-test harness
    (tests/unit/common.py, f"Worker {rank} hung.") fails on the first worker, in rank order,
    that had not exited within its join timeout; the best-guess-GPU warnings are benign."""
    text = (
        "[gw3] linux -- Python 3.8.8 /tmp/actions-runner/_work/DeepSpeed/DeepSpeed/unit-test-venv/bin/python\n"
        "Worker 0 hung.\n"
        "[W ProcessGroupNCCL.cpp:1569] Rank 0 using best-guess GPU 0 to perform barrier as devices used by this "
        "process are currently unknown. This can potentially cause a hang if this rank to GPU mapping is incorrect."
        "Specify device_ids in barrier() to force use of a particular device.\n"
    )
    inc = report(text)["incidents"][0]
    assert (inc["failure"], inc["initiator"]["rank"]) == ("collective_timeout", None)
