"""Ranks reported present at a sync point (catalog ``presence``): the rank absent from every
report is the one the others wait for (``rank_from: absence``), alerting only once the wait
is known to be a stall."""

from __future__ import annotations

import pytest

from detectors.detect import JobState, _hms
from detectors.diagnosis import build_report
from detectors.parse import default_parser
from detectors.parsers.base import FileState, JobParseState
from tests.helpers import fed_state


def report(text: str) -> dict:
    return build_report(fed_state(text.splitlines()))


def _waiting(rank: int, ws: int = 8, count: int = 7, timeout: str = "0:30:00") -> str:
    return (f"INFO:root:Waiting in store based barrier to initialize process group for rank: {rank}, "
            f"key: store_based_barrier_key:1 (world_size={ws}, worker_count={count}, timeout={timeout})")


# Lightning-AI/pytorch-lightning#4420: 7 of 8 ranks wait in the store barrier (rank 0 twice)
_LIGHTNING_7_OF_8 = "\n".join(_waiting(r) for r in (0, 6, 2, 1, 7, 3, 5, 0)) + "\n"


def test_the_rank_absent_from_the_barrier_waiters_is_named_without_an_alert() -> None:
    incs = report(_LIGHTNING_7_OF_8)["incidents"]
    assert [(i["failure"], i["severity"]) for i in incs] == [("rank_hang", "info")]
    assert incs[0]["initiator"]["rank"] == 4
    assert incs[0]["initiator"]["rank_from"] == "absence" and incs[0]["initiator"]["inferred"] is False


def test_a_collective_timeout_makes_the_absent_waiter_critical() -> None:
    # the barrier's own timeout error (its wording from facebookresearch/metaseq#52), raised by a waiter
    text = _LIGHTNING_7_OF_8 + (
        "RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key: "
        "store_based_barrier_key:1 (world_size=8, worker_count=7, timeout=0:30:00)\n")
    top = report(text)["incidents"][0]
    assert (top["failure"], top["severity"], top["initiator"]["rank"]) == ("rank_hang", "critical", 4)


def test_a_passed_barrier_names_no_one() -> None:
    # a Lightning start-up (2 ranks) that passed the barrier
    text = (
        "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/2\n"
        "Added key: store_based_barrier_key:1 to store for rank: 1\n"
        "Added key: store_based_barrier_key:1 to store for rank: 0\n"
        "Rank 0: Completed store-based barrier for key:store_based_barrier_key:1 with 2 nodes.\n"
    )
    assert report(text)["incidents"] == []
    # ... and while rank 0 alone has arrived, nobody is absent from a 1-rank view either way
    cut = "\n".join(text.splitlines()[:2]) + "\n"
    assert all(i["severity"] == "info" for i in report(cut)["incidents"])


def test_several_absent_ranks_name_no_one() -> None:
    # ultralytics/yolov5#4574: world_size=4 but worker_count=8 (two jobs on one store); only rank 0 speaks
    text = "\n".join(_waiting(0, ws=4, count=8).removeprefix("INFO:root:") for _ in range(3)) + "\n"
    assert report(text)["incidents"] == []


def test_horovods_ready_ranks_stall_names_the_missing_rank_inferred() -> None:
    # horovod/horovod#100 (mpirun -np 2, not in the log): every stalled op is ready on rank 1 only
    text = (
        "Stalled ops: \n"
        "model/model/DistributedAdamOptimizer_Allreduce/HorovodAllgather_model_model_gradients_concat_0 [ready ranks: 1], \n"
        "model/model/DistributedAdamOptimizer_Allreduce/HorovodAllreduce_model_model_gradients_AddN_58_0 [ready ranks: 1], \n"
    )
    top = report(text)["incidents"][0]
    assert (top["failure"], top["severity"], top["initiator"]["rank"]) == ("rank_hang", "critical", 0)
    assert top["initiator"]["rank_from"] == "absence" and top["initiator"]["inferred"] is True


def test_ready_lists_that_disagree_name_no_one() -> None:
    text = ("HorovodAllreduce_a_0 [ready ranks: 0, 1]\n"
            "HorovodAllreduce_b_0 [ready ranks: 1, 2]\n")
    # ranks waiting in different places: no one is named; the old "[ready ranks: …]" form is
    # printed only by Horovod's stall check, so the job is stalled
    for t in (text, _HVD_HEAD + "\n" + text):
        incs = report(t)["incidents"]
        assert [(i["failure"], i["severity"], i["initiator"]["rank"]) for i in incs] == [("rank_hang", "critical", None)]


def test_ranks_listed_with_different_tensors_are_a_stall_naming_no_one() -> None:
    """Horovod's list with each rank missing tensors the other submitted: the two ranks run
    different collectives (one still broadcasts the initial variables, the other already reduces
    gradients). The job is stalled; neither rank is the one the other waits for."""
    # the head and list shape of horovod/horovod#3950 (0.28); rank 1's tensors are the optimizer's
    # allreduce names of horovod/horovod#336, as when the ranks stall in different collectives
    head = ("[0] [2023-06-26 07:23:58.477178: W /tmp/pip-install-6w4n_ndu/horovod_4c00129df9d64c2680a27be18c9b88cd/"
            "horovod/common/stall_inspector.cc:107] One or more tensors were submitted to be reduced, gathered or "
            "broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds. This may "
            "indicate that different ranks are trying to submit different tensors or that only subset of ranks is "
            "submitting tensors, which will cause deadlock. ")
    text = "\n".join([
        head, "[0] Missing ranks:",
        "[0] 0: [broadcast.assign_conv_block_modules.0.0.bias, broadcast.assign_conv_block_modules.0.0.weight ...]",
        "[0] 1: [DistributedMomentumOptimizer_Allreduce/HorovodAllreduce_gradients_map_getter_Conv_Conv2D_grad_tuple"
        "_control_dependency_1_0, DistributedMomentumOptimizer_Allreduce/HorovodAllreduce_loss_Mean_0]",
    ]) + "\n"
    incs = report(text)["incidents"]
    assert [(i["failure"], i["severity"], i["initiator"]["rank"]) for i in incs] == [("rank_hang", "critical", None)]


def test_timeouts_as_python_prints_them() -> None:
    assert _hms("0:30:00") == 1800
    assert _hms("1 day, 0:00:00") == 86400  # AlibabaResearch/efficientteacher#85
    assert _hms("soon") is None


def test_a_desync_report_in_the_launchers_summary_names_the_rank_behind() -> None:
    """pytorch/pytorch#148976: rank 1's barrier fails the desync check inside torchrun's failure
    summary; rank 2 (SequenceNumber 0 vs 1) is behind. Rank 1's exit 1 is explained by the
    report it printed, so it must not outrank the hang as a bare 'exit 1' exception."""
    text = (
        "Failures:\n"
        "[1]:\n"
        "  time      : 2025-03-11_18:33:20\n"
        "  host      : lenovo\n"
        "  rank      : 1 (local_rank: 1)\n"
        "  exitcode  : 1 (pid: 340055)\n"
        "  traceback : Traceback (most recent call last):\n"
        '    File "/home/lisergey/deepseek/bug.py", line 16, in main\n'
        "      dist.barrier()\n"
        "  RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: "
        "CollectiveFingerPrint(SequenceNumber=1OpType=BARRIER), but Rank 2 is running collective: "
        "CollectiveFingerPrint(SequenceNumber=0OpType=BARRIER).Collectives differ in the following aspects: \t Sequence number: 1vs 0\n"
    )
    incs = report(text)["incidents"]
    assert (incs[0]["failure"], incs[0]["initiator"]["rank"]) == ("rank_hang", 2)
    assert [i for i in incs if i["severity"] != "info" and i["initiator"]["rank"] == 1] == []


def _timeout(rank: int, work: int, enqueued: int, pg: str = "PG 1") -> str:
    # the watchdog summary as torch 2.5 prints it (hiyouga/LlamaFactory#6269), numbers varied per case
    return (f"[rank{rank}]:[E1206 18:44:16.994932383 ProcessGroupNCCL.cpp:1709] [{pg} Rank {rank}] Timeout at NCCL work: "
            f"{work}, last enqueued NCCL work: {enqueued}, last completed NCCL work: {work - 1}.")


def test_the_rank_behind_in_last_enqueued_work_is_the_culprit() -> None:
    text = "\n".join(_timeout(r, 7753, 7752 if r == 2 else 7755) for r in (0, 1, 2, 3)) + "\n"
    top = report(text)["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"], top["initiator"]["rank_from"]) == ("rank_hang", 2, "progress")
    assert "never reported a timeout" not in top["root_cause"][0]  # it did: it is the one behind


@pytest.mark.parametrize("text", [
    # every rank level (LlamaFactory#6269 as printed): no one is behind
    "\n".join(_timeout(r, 7753, 7755) for r in (0, 2, 6)) + "\n",
    # every rank had enqueued the collective they time out on, one ran further ahead on the
    # CPU (corpus holdout2 h2-017: enqueued 2855 vs 2856, both stuck at 2847): nobody is missing
    _timeout(0, 2847, 2855) + "\n" + _timeout(2, 2847, 2856) + "\n",
    # thousands apart: different process groups (NeMo), not a rank behind
    _timeout(0, 96125, 96125) + "\n" + _timeout(7, 64088, 64088) + "\n",
    # the same numbers in two named process groups (NVIDIA/nccl#1610's 'PG ID 13') do not compare
    _timeout(0, 87, 87, "PG ID 13 PG GUID 143") + "\n" + _timeout(1, 90, 90, "PG ID 0 PG GUID 0(default_pg)") + "\n",
])
def test_sequences_that_do_not_show_a_rank_behind_name_no_one(text: str) -> None:
    assert report(text)["incidents"][0]["initiator"]["rank"] is None


def test_several_ranks_absent_when_the_wait_ends_in_a_traceback_is_a_hang_naming_no_one() -> None:
    # intel/ipex-llm#9288: ranks 0 and 1 of 8 wait (worker_count=2), then rank 0's traceback
    text = (
        "2023-10-26 14:48:55,606 - INFO - Waiting in store based barrier to initialize process group for rank: 1, key: "
        "store_based_barrier_key:2 (world_size=8, worker_count=2, timeout=0:30:00)\n"
        "2023-10-26 14:49:05,483 - INFO - Waiting in store based barrier to initialize process group for rank: 0, key: "
        "store_based_barrier_key:2 (world_size=8, worker_count=2, timeout=0:30:00)\n"
        "Traceback (most recent call last):\n"
        '  File "/home/ywang30/workspace_bigdl_QloRA/bigdl-qlora-alpaca/finetune.py", line 310, in <module>\n'
    )
    top = report(text)["incidents"][0]
    assert (top["failure"], top["severity"], top["initiator"]["rank"]) == ("rank_hang", "critical", None)
    # ... while the same wait with nothing after it is only noted
    waits = "\n".join(text.splitlines()[:2]) + "\n"
    assert [(i["failure"], i["severity"]) for i in report(waits)["incidents"]] == [("rank_hang", "info")]


def test_a_desync_report_without_two_sequence_numbers_does_not_blame_its_reporter() -> None:
    # pytorch/pytorch#78022 (older torch: one rank's 'inconsistent collective'), raised on rank 0:
    # the ranks called different collectives (a communication error, as when two sequence numbers
    # are level), and the line does not say whose call differs
    text = ("[rank0]: Traceback (most recent call last):\n"
            "[rank0]: RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running inconsistent "
            "collective: CollectiveFingerPrint(OpType=BROADCAST, TensorShape=[34112], TensorDtypes=Float)\n")
    top = report(text)["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"]) == ("nccl_error", None)


def test_a_desync_report_cut_before_the_second_fingerprint_is_a_mismatch_of_no_named_rank() -> None:
    # Lightning-AI/pytorch-lightning#19106 (log_dict with different keys on each rank): two
    # processes' tracebacks interleaved, the report cut after rank 1's own fingerprint
    text = (
        '  File "/myenv/python3.10/site-packages/lightning_fabric/utilities/distributed.py", line 220, in _sync_ddp\n'
        "    broadcast(object_sizes_tensor, src=src, group=group)\n"
        '  File "/myenv/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 1906, in broadcast\n'
        "    torch.distributed.barrier(group=group)\n"
        "    work = default_pg.broadcast([tensor], opts)\n"
        "RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: "
        "CollectiveFingerPrint(SequenceNumber=21, OpType=BROADCAST, TensorShape=[1], TensorDtypes=Long, "
        "TensorDeviceTypes=TensorOptions(dtype=float (default), device=c\n")
    top = report(text)["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"]) == ("nccl_error", None)


def test_a_desync_report_with_two_sequence_numbers_still_names_the_rank_behind() -> None:
    # sgl-project/sglang (corpus h4-050): rank 13 at sequence number 17 while rank 0 is at 45
    text = ("RuntimeError: Detected mismatch between collectives on ranks. Rank 13 is running collective: "
            "CollectiveFingerPrint(SequenceNumber=17OpType=BARRIER), but Rank 0 is running collective: "
            "CollectiveFingerPrint(SequenceNumber=45OpType=BARRIER).\n")
    top = report(text)["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"]) == ("rank_hang", 13)


@pytest.mark.parametrize(("launch", "rank"), [
    ("mpirun -np 2 -H localhost:2 -bind-to none -map-by slot python train.py", 0),  # Horovod's docs
    ("horovodrun -np 4 -H localhost:4 python train.py", None),  # ranks 0, 2 and 3 missing: no single one
])
def test_the_launch_command_gives_the_world_the_absent_rank_is_counted_in(launch: str, rank: int | None) -> None:
    text = launch + "\n" + "HorovodAllreduce_model_model_gradients_AddN_58_0 [ready ranks: 1], \n"
    top = report(text)["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"]) == ("rank_hang", rank)
    assert top["initiator"]["inferred"] is False


def test_megatrons_world_size_line_is_read() -> None:
    line = ("using world size: 8, data-parallel size: 8, context-parallel size: 1, tensor-model-parallel size: 1, "
            "pipeline-model-parallel size: 1")
    assert report(line + "\n")["context"]["world_size"] == 8


def test_sync_points_survive_a_checkpoint() -> None:
    from monitor import snapshot

    st = JobState(job="t")
    fs = FileState("console.log", year=2026, job=JobParseState())
    for i, line in enumerate(_LIGHTNING_7_OF_8.splitlines(), 1):
        for ev in default_parser().parse_line(line, i, fs):
            st.add(ev)
    st = snapshot.load(snapshot.dump(st))
    assert build_report(st)["incidents"][0]["initiator"]["rank"] == 4


# ---------------------------------------------------------------- Horovod's stall inspector list
_HVD_HEAD = ("[2021-02-02 21:19:07.345988: W /tmp/pip-install-dxtho7yu/horovod/common/stall_inspector.cc:105] "
             "One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are "
             "waiting for remainder of ranks for more than 10 seconds. This may indicate that different ranks are "
             "trying to submit different tensors or that only subset of ranks is submitting tensors, which will "
             "cause deadlock. ")


def test_horovod_missing_ranks_list_names_the_one_rank_listed() -> None:
    # Horovod >= 0.21 (stall_inspector.cc), from DEKHTIARJonathan/HVD_TF_Worker_Desync_BugReport
    incs = report(_HVD_HEAD + "\nMissing ranks:\n0: [cond_1/then/_10/cond_1/SGD/PartitionedCall/DistributedSGD_Allreduce/"
                  "cond/then/_79/DistributedSGD_Allreduce/cond/HorovodAllreduce_grads_0]\n")["incidents"]
    assert [(i["failure"], i["severity"], i["initiator"]["rank"], i["initiator"]["rank_from"]) for i in incs] == [
        ("rank_hang", "critical", 0, "absence")]


def test_a_stall_list_under_srun_labels_is_the_lists_rank_not_a_task_label() -> None:
    # the older "Stalled ranks:" list (horovod/horovod#2067 shape): "0: [" reads like srun --label's "0: "
    entry = "0: [HorovodBroadcast_bert_embeddings_LayerNorm_beta_0, HorovodBroadcast_bert_embeddings_LayerNorm_gamma_0]"
    incs = report(f"Stalled ranks:\n{entry}\n{_HVD_HEAD}\nStalled ranks:\n{entry}\n")["incidents"]
    assert [(i["failure"], i["initiator"]["rank"]) for i in incs] == [("rank_hang", 0)]
    # outside a list the same shape is a task label: that rank's line, and no stall
    st = fed_state(["1: [foo_bar.0, foo_bar.1]", "1: step 3 loss 0.5"])
    assert not st.sync_points and not report("1: [foo_bar.0, foo_bar.1]\n")["incidents"]


def test_a_stall_list_entry_the_paste_wrapped_after_a_comma_still_names_its_rank() -> None:
    # horovod/horovod#1206 (Horovod 0.19, Keras): the list wraps after "...AddN_102_0, " and the
    # line's trailing space is gone: the entry ends in a bare comma
    text = (_HVD_HEAD + "\nStalled ranks:\n"
            "0: [training/Adadelta_Allreduce/HorovodAllreduce_Adadelta_1_gradients_AddN_102_0, \n"
            "training/Adadelta_Allreduce/HorovodAllreduce_Adadelta_1_gradients_AddN_103_0, "
            "training/Adadelta_Allreduce/HorovodAllreduce_Adadelta_1_gradients_AddN_104_0]\n")
    incs = report(text)["incidents"]
    assert [(i["failure"], i["initiator"]["rank"], i["initiator"]["rank_from"]) for i in incs] == [
        ("rank_hang", 0, "absence")]
    # a bracketed list of other words after a task label is still no stall
    assert not report("Stalled ranks:\n2: [layer1.weight, layer1.bias,\n")["incidents"]


def test_several_ranks_missing_the_same_tensors_names_none_of_them() -> None:
    incs = report(_HVD_HEAD + "\nMissing ranks:\n2: [allreduce.layer1.weight, allreduce.layer1.bias]\n"
                  "5: [allreduce.layer1.weight, allreduce.layer1.bias]\n")["incidents"]
    assert [(i["failure"], i["initiator"]["rank"]) for i in incs] == [("rank_hang", None)]
    assert incs[0]["initiator"].get("rank_from") is None


def test_the_one_rank_that_submitted_another_tensor_is_named() -> None:
    # old "[ready ranks: ...]" lines (the shape of horovod/horovod#403): the gradients wait for
    # rank 3 while a loss tensor is ready on rank 3 alone: rank 3 runs something else
    lines = [_HVD_HEAD, "Stalled ops: HorovodAllreduce_loss_Mean_0 [ready ranks: 3], "
             "DistributedMomentumOptimizer_Allreduce/HorovodAllreduce_gradients_a_0 [ready ranks: 2, 0, 1], "
             "DistributedMomentumOptimizer_Allreduce/HorovodAllreduce_gradients_b_0 [ready ranks: 0, 1, 2]"]
    incs = report("\n".join(lines) + "\n")["incidents"]
    assert [(i["failure"], i["initiator"]["rank"]) for i in incs] == [("rank_hang", 3)]
    # two ranks that each wait for the other: neither stands apart
    two = [_HVD_HEAD, "HorovodAllreduce_a_0 [ready ranks: 0], HorovodAllreduce_b_0 [ready ranks: 1]"]
    assert [i["initiator"]["rank"] for i in report("\n".join(two) + "\n")["incidents"]] == [None] * len(report("\n".join(two) + "\n")["incidents"])


def _pg_status(rank: int, seq: int, enqueued: int, completed: int) -> str:
    # torch 2.5+ watchdog summary (vllm-project/vllm, corpus d3-052), numbers varied per case
    return (f"[rank{rank}]:[E822 16:31:16.132547721 ProcessGroupNCCL.cpp:2271] [PG ID 4 PG GUID 67 Rank {rank}]  "
            f"failure detected by watchdog at work sequence id: {seq} PG status: last enqueued work: {enqueued}, "
            f"last completed work: {completed}")


def test_the_rank_whose_collectives_stopped_completing_first_is_the_culprit() -> None:
    # every rank enqueued far ahead (the CPU side says nothing); rank 5 completed one collective less
    text = "\n".join(_pg_status(r, 901 if r == 5 else 902, 1500, 900 if r == 5 else 901) for r in range(8)) + "\n"
    top = report(text)["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"], top["initiator"]["rank_from"]) == ("rank_hang", 5, "progress")


def test_two_ranks_equally_behind_in_completed_work_name_no_one() -> None:
    text = "\n".join(_pg_status(r, 902, 1500, 900 if r in (2, 5) else 901) for r in range(8)) + "\n"
    assert report(text)["incidents"][0]["initiator"]["rank"] is None


def _watchdog(rank: int) -> str:
    # the old watchdog line without a prefix (ultralytics/ultralytics DDP, corpus d3-037), rank varied
    return (f"[E ProcessGroupNCCL.cpp:828] [Rank {rank}] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=10792, OpType=BROADCAST, Timeout(ms)=1800000) ran for 1800764 milliseconds before timing out.")


@pytest.mark.parametrize(("reporters", "named"), [
    ((1, 2, 3), 0),  # ranks 1-3 of a 4-GPU job time out; rank 0 never does (inferred)
    ((0, 1, 2, 3, 4, 6, 7), 5),  # one silent rank of 8
    ((1,), None),  # one reporter of two: as often a pasted excerpt as a silent rank
    ((1, 2, 3, 4, 5, 6), None),  # a world of 7, or of 8 with rank 7 silent too: open
    ((0, 1, 4, 5, 6, 7), None),  # two silent ranks
])
def test_with_no_world_size_the_one_silent_rank_of_a_power_of_two_world_is_inferred(
        reporters: tuple[int, ...], named: int | None) -> None:
    top = report("\n".join(_watchdog(r) for r in reporters) + "\n")["incidents"][0]
    assert top["initiator"]["rank"] == named
    if named is not None:
        assert (top["failure"], top["initiator"]["inferred"]) == ("rank_hang", True)


@pytest.mark.parametrize(("line", "rank"), [
    # c10d TraceUtils.h analyzeLaggingRanks, as KellerJordan/modded-nanogpt's report printed it
    ("             [7] finished collective #182, but didn't join collective #183 (count from 1)", 7),
    ("\t   - [3] joined but didn't finish collective #41207 (count from 1)", 3),
    # analyzeMissingRanks
    ("\t - To our best knowledge, ranks [6] are the lagging ranks that caused this timeout. "
     "They never joined any collectives", 6),
    # a list of several ranks names none of them
    ("\t     [0, 1, 2] finished collective #41207, but didn't join collective #41208 (count from 1)", None),
])
def test_the_desync_report_names_the_lagging_rank(line: str, rank: int | None) -> None:
    text = _watchdog(0) + "\n" + "\t - [0] Timeout at collective: ALLREDUCE, #315\n" + (
        "\t - To our best knowledge, the lagging/dead/mismatched ranks that caused the desync are:\n") + line + "\n"
    top = report(text)["incidents"][0]
    assert top["initiator"]["rank"] == rank
    assert top["failure"] == ("rank_hang" if rank is not None else "collective_timeout")


def test_a_rank_whose_communicator_was_aborted_is_not_the_silent_one() -> None:
    """HF Trainer on 16 ranks (corpus holdout5 h5-034): ranks 13 and 14 time out; rank 11 only
    shows NCCL aborting its communicator, which it does after seeing an error: not silent."""
    text = (
        "[E ProcessGroupNCCL.cpp:475] [Rank 13] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=21668, "
        "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800522 milliseconds before timing out.\n"
        "a6000_node2:65508:447 [6] NCCL INFO comm 0xc320220 rank 14 nranks 16 cudaDev 6 busId c1000 - Abort COMPLETE\n"
        "[E ProcessGroupNCCL.cpp:916] [Rank 14] NCCL watchdog thread terminated with exception: [Rank 14] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=21668, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
        "Timeout(ms)=1800000) ran for 1800519 milliseconds before timing out.\n"
        "a6000_node2:65505:452 [3] NCCL INFO comm 0xc021ee0 rank 11 nranks 16 cudaDev 3 busId 61000 - Abort COMPLETE\n"
    )
    top = report(text)["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"]) == ("collective_timeout", None)
    # the same rank seen only initialising its communicator is a rank that took part and said
    # nothing; in a world of 16 where 13 ranks never appear it is no more silent than they are,
    # but in a world of 3 it is the one the others waited for
    quiet = text.replace("busId 61000 - Abort COMPLETE", "busId 61000 commId 0x5e1f - Init COMPLETE")
    assert report(quiet)["incidents"][0]["initiator"]["rank"] is None
    small = quiet.replace("Rank 13]", "Rank 0]").replace("Rank 14]", "Rank 1]").replace("rank 14 ", "rank 1 ")
    small = small.replace("rank 11 ", "rank 2 ").replace("nranks 16", "nranks 3")
    assert report(small)["incidents"][0]["initiator"]["rank"] == 2


_GLOO_TIMEOUT = ("[rank{r}]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] "
                 "Timed out waiting 15000ms for recv operation to complete")
_GLOO_CLOSED = ("[rank{r}]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] "
                "Connection closed by peer [127.0.0.1]:32165. This is typically caused by a remote worker crashing.")


def test_the_rank_woken_by_the_launchers_sigterm_is_the_hung_one() -> None:
    """Lightning catches SIGTERM (golden hang-pltrainer-*): the hung rank 2 says it received it, then
    meets closed sockets; ranks 0, 1, 3 had timed out first."""
    lines = [_GLOO_TIMEOUT.format(r=r) for r in (0, 1, 3)] + [
        "[rank: 2] Received SIGTERM: 15", _GLOO_CLOSED.format(r=2)]
    top = report("\n".join(lines) + "\n")["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"]) == ("rank_hang", 2)
    # the same lost peer before any SIGTERM is an ordinary report: no one is named
    lines = [_GLOO_TIMEOUT.format(r=r) for r in (0, 1, 3)] + [_GLOO_CLOSED.format(r=2), "[rank: 2] Received SIGTERM: 15"]
    assert report("\n".join(lines) + "\n")["incidents"][0]["initiator"]["rank"] is None


def test_a_silent_rank_whose_peers_lost_their_connections_died() -> None:
    """No timeouts, no exit code (Lightning's own launcher, golden sigkill-pltrainer-pllaunch): the peers'
    sockets to the silent rank were closed, so its process is gone: killed, not hung."""
    lines = [f"[rank{r}]: step 4 | loss 0.31" for r in range(4)] + [_GLOO_CLOSED.format(r=r) for r in (0, 2, 3)]
    top = report("\n".join(lines) + "\n")["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"]) == ("rank_killed", 1)
    with_timeout = [*lines, _GLOO_TIMEOUT.format(r=0)]
    assert report("\n".join(with_timeout) + "\n")["incidents"][0]["failure"] == "rank_hang"


@pytest.mark.parametrize(("line", "rank"), [
    # NCCL 2.19+ (src/init.cc, ncclDevSuspectedMismatch): the rank printing it, from NCCL's own format
    ("gpu-node-07:2291:2380 [2] NCCL WARN Your program may be hanging, this may be caused by a collective mismatch "
     "around rank 2. Please check your collective calls at and around this rank. You can use NCCL_DEBUG=INFO and "
     "NCCL_DEBUG_SUBSYS=COLL to see the collective logs", 2),
])
def test_nccls_collective_mismatch_check_names_its_rank(line: str, rank: int) -> None:
    # (the asserted form, NCCL 2.4's "Mismatched collective detected ... around rank 39", stays
    # nccl_error: corpus dist-120, NVIDIA/nccl#296 — an invalid-usage error, not a wait)
    incs = report(line + "\n")["incidents"]
    assert [(i["failure"], i["severity"], i["initiator"]["rank"]) for i in incs] == [("rank_hang", "critical", rank)]


def _desync(me: int, op: str, other: int, other_op: str, seq: int = 104) -> str:
    # torch/csrc/distributed/c10d/ProcessGroupWrapper.cpp's message as torch 2.x raises it under
    # TORCH_DISTRIBUTED_DEBUG=DETAIL (corpus holdout24 g24d-015, tensor options trimmed)
    fp = "CollectiveFingerPrint(SequenceNumber={s}, OpType={o}, TensorShape=[2], TensorDtypes=Float)"
    return (f"[rank{me}]: RuntimeError: Detected mismatch between collectives on ranks. Rank {me} is running "
            f"collective: {fp.format(s=seq, o=op)}, but Rank {other} is running collective: "
            f"{fp.format(s=seq, o=other_op)}.Collectives differ in the following aspects: \t Op type: {op}vs {other_op}\n")


def test_ranks_level_in_sequence_but_in_different_collectives_name_the_odd_one() -> None:
    text = (_desync(0, "ALLREDUCE", 1, "ALLGATHER") + _desync(1, "ALLGATHER", 0, "ALLREDUCE")
            + _desync(2, "ALLREDUCE", 1, "ALLGATHER"))
    top = report(text)["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"]) == ("nccl_error", 1)
    # two ranks, each naming the other: either may be the odd one
    top = report(_desync(0, "ALLREDUCE", 1, "ALLGATHER") + _desync(1, "ALLGATHER", 0, "ALLREDUCE"))["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"]) == ("nccl_error", None)
    # one rank behind the other in sequence is still the hang of the rank behind
    top = report(_desync(0, "ALLREDUCE", 1, "ALLREDUCE", seq=104).replace("SequenceNumber=104, OpType=ALLREDUCE, TensorShape=[2], TensorDtypes=Float)."
                                                                       , "SequenceNumber=99, OpType=ALLREDUCE, TensorShape=[2], TensorDtypes=Float)."))["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"]) == ("rank_hang", 1)


@pytest.mark.parametrize(("nranks", "rank"), [(8, None), (4, 1)])
def test_a_rank_seen_only_in_the_exit_list_is_no_more_silent_than_ranks_never_seen(nranks: int, rank: int | None) -> None:
    # ALCF Polaris (mpiexec/PALS, corpus holdout25 h25a-009): ranks 0, 2 and 3 time out on one
    # broadcast; rank 1 appears only in PALS's list of exits. In a world of 8 ranks 4-7 never
    # appear at all: any of them may be the one that held the broadcast
    host = "x3005c0s25b1n0"
    text = ""
    for r in (0, 2, 3):
        text += (f"{host}:2401{r}:2411{r} [{r}] NCCL INFO comm 0x5573aa512b30 rank {r} nranks {nranks} cudaDev {r} "
                 f"nvmlDev {r} busId 7000 commId 0x4d08e928a4a97e3c - Init COMPLETE\n")
    for r in (0, 3, 2):
        text += (f"[rank{r}]:[E ProcessGroupNCCL.cpp:563] [Rank {r}] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=3, OpType=BROADCAST, NumelIn=25610152, NumelOut=25610152, Timeout(ms)=120000) "
                 "ran for 120001 milliseconds before timing out.\n")
    text += (f"{host}.hsn.cm.polaris.alcf.anl.gov: rank 2 died from signal 6 and dumped core\n"
             f"{host}.hsn.cm.polaris.alcf.anl.gov: rank 1 died from signal 15\n")
    top = report(text)["incidents"][0]
    assert top["initiator"]["rank"] == rank
    if rank is not None:
        assert top["failure"] == "rank_hang"


def _zero_desync(me: int, seq: int, op: str, other: int, other_op: str) -> str:
    # the wrapper's message with the other rank's op at sequence number 0 (an op it does not number:
    # "Rank 0 is running ...(SequenceNumber=1649OpType=BARRIER), but Rank 1 is running
    # ...(SequenceNumber=0OpType=GATHER)" quoted in a public trainer's source comment; a CPU Fabric job
    # of ours, corpus holdout29 g29b-023)
    return (f"[rank{me}]: RuntimeError: Detected mismatch between collectives on ranks. Rank {me} is running "
            f"collective: CollectiveFingerPrint(SequenceNumber={seq}OpType={op}), but Rank {other} is running "
            f"collective: CollectiveFingerPrint(SequenceNumber=0OpType={other_op}).Collectives differ in the "
            f"following aspects: \t Sequence number: {seq}vs 0  Op type: {op}vs {other_op}\n")


def test_ranks_that_each_put_the_other_at_sequence_0_are_level_in_different_collectives() -> None:
    # ranks 0 and 1 put rank 2 at 0, rank 2 puts rank 0 at 0: no one is behind, rank 2 runs another op
    text = (_zero_desync(0, 402, "BARRIER", 2, "ALLGATHER_COALESCED") + _zero_desync(2, 402, "ALLGATHER", 0, "BARRIER")
            + _zero_desync(1, 402, "BARRIER", 2, "ALLGATHER_COALESCED"))
    top = report(text)["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"]) == ("nccl_error", 2)
    # one report alone keeps its reading: the rank at 0 is behind (dist-070's shape)
    top = report(_zero_desync(0, 402, "BARRIER", 2, "ALLGATHER_COALESCED"))["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"]) == ("rank_hang", 2)
