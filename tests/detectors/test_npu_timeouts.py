"""Ascend HCCL's timeout (CANN error EI0006, "Getting socket times out. Reason: Remote Rank did
not send the data in time") is a waiter's report, the NPU counterpart of the NCCL watchdog
timeout; torch_npu prints it as the continuation of the RuntimeError it raises, and an exception
whose own message goes on to name its failure is that failure, not a crash of its own."""

from __future__ import annotations

from functools import partial

from tests.helpers import top_verdict

_SOLUTION = ("        Solution: 1. Check the rank service processes with other errors or no errors in the cluster.2. If this "
             "error is reported for all NPUs, check whether the time difference between the earliest and latest errors is "
             "greater than the connect timeout interval (120s by default). If so, adjust the timeout interval by using the "
             "HCCL_CONNECT_TIMEOUT environment variable.3. Check the connectivity of the communication link between nodes.")


def _ei0006(pid: int, when: str) -> str:
    """CANN's EI0006 line as torch_npu / vllm-ascend print it (HCCL's BLOCK_RECV_TIMEOUT_REASON)."""
    return (f"EI0006: [PID: {pid}] {when} Getting socket times out. Reason: Remote Rank did not send the data in "
            "time. Please check the reason for the rank being stuck")


_top = partial(top_verdict, path="worker.log")



def test_vllm_ascend_workers_time_out_waiting_for_a_peer() -> None:
    # a vllm-ascend issue log (Worker_TP11/TP12, model_runner_v1.py:3556): each worker's logger
    # prints the CANN error lines; no worker names the peer it waited for
    lines = []
    for tp, pid, dev, t in ((11, 15618, 11, "335.888"), (12, 15619, 12, "342.650")):
        pre = f"(Worker_TP{tp} pid={pid}) ERROR 10-11 11:32:59 [model_runner_v1.py:3556] "
        lines += [pre + "The Inner error is reported as above. The process exits for this inner error, and the current "
                        "working operator name is HcclAllreduce.",
                  pre + f"[ERROR] 2025-10-11-11:32:59 (PID:{pid}, Device:{dev}, RankID:-1) ERR00100 PTA call acl api failed.",
                  pre + _ei0006(pid, f"2025-10-11-11:32:29.{t}"),
                  pre + _SOLUTION]
    assert _top(lines) == ("collective_timeout", None)


def test_the_runtime_error_above_the_timeout_is_the_timeout() -> None:
    # torch_npu's HcclAllreduce failure under a [rankN]: prefix (vllm-ascend GRPO thread, the same
    # thread as corpus holdout12 h12b-015): RuntimeError, then CANN's ERR and EI lines as its message
    lines = [
        "[rank1]:     work = group.allreduce([tensor], opts)",
        "[rank1]: RuntimeError: InnerRunOpApi:torch_npu/csrc/framework/OpParamMaker.cpp:281 OPS function error: "
        "HcclAllreduce, error code is 6",
        "[rank1]: [ERROR] 2025-04-08-18:07:20 (PID:1292363, Device:1, RankID:1) ERR01100 OPS call acl api failed.",
        "[rank1]: " + _ei0006(1292363, "2025-04-08-18:07:20.444.436"),
        "[rank1]: " + _SOLUTION,
    ]
    assert _top(lines) == ("collective_timeout", None)


def test_a_crash_followed_later_by_a_timeout_line_stays_a_crash() -> None:
    # the continuation is the exception's own next lines: a rank's crash, then (further down) the
    # same rank's unrelated timeout report does not explain it away (constructed from the lines above)
    lines = [
        "[rank1]: ValueError: corrupt sample in shard 3 at step 6: expected 16 features, got 0",
        "[rank1]: I1205 09:16:27.518000 step 6 done", "[rank1]: I1205 09:16:27.519000 flushing", "[rank1]: I1205 saving",
        "[rank1]: I1205 09:16:27.520000 exiting",
        "[rank1]: " + _ei0006(1292363, "2025-04-08-18:07:20.444.436"),
    ]
    assert _top(lines) == ("rank_exception", 1)


def test_a_notify_wait_timeout_under_a_synchronize_error_is_the_timeout() -> None:
    # torch_npu's synchronize failing with 507048 (a Ray worker's prefix), then CANN's ERR00100,
    # "[Error]:" and "Rectify" lines, then EI0002: the exception's message names a waiter's timeout
    pre = "(train pid=8464) "
    lines = [pre + "    return torch_npu._C._npu_synchronize()",
             pre + "RuntimeError: npuSynchronizeDevice:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:479 NPU function"
                   " error: AclrtSynchronizeDeviceWithTimeout, error code is 507048",
             pre + "[ERROR] 2025-06-25-10:45:23 (PID:13075, Device:0, RankID:8) ERR00100 PTA call acl api failed",
             pre + "[Error]: The execution of the internal task times out. ",
             pre + "        Rectify the fault based on the error information in the ascend log.",
             pre + "EI0002: [PID: 13075] 2025-06-25-10:45:23.586.187 The wait execution of the Notify register times out."
                   " Reason: The Notify register has not received the Notify record from remote rank: [unknown]."]
    assert _top(lines) == ("collective_timeout", None)


def test_mindspore_and_the_runtime_word_the_same_wait() -> None:
    # a 2022 MindSpore RunGraph error and the Ascend runtime's fftsplus report (a multi-node torch_npu log)
    ms = ("[ERROR] DEVICE(1234,python):2022-12-01-00:26:58.399.787 [ascend_graph_executor.cc:240] RunGraph] Run task for"
          " graph:kernel_graph_1 error! The details refer to 'Ascend Error Message'.Ascend Error Message:EI0002: The wait"
          " execution of the Notify register times out. Reason: The Notify register has not received the Notify record"
          " from remote rank [0].base information: [streamID:[14], taskID[4], taskType[Notify Wait],"
          " tag[HcomAllReduce_6629421139219749105_0].]")
    ffts = ("worker-1: EI9999: 2024-07-03-11:28:40.419.527  The error from device(chipId:0, dieId:0), serial number is 1,"
            " hccl fftsplus task timeout occurred during task execution, stream_id:4, sq_id:4, task_id:5, stuck notify"
            " num:7, timeout:1836.[FUNC:ProcessStarsHcclFftsPlusTimeoutErrorInfo][FILE:device_error_proc.cc][LINE:1389]")
    assert _top([ms]) == ("collective_timeout", None)
    assert _top([ffts]) == ("collective_timeout", None)


# Ascend/pytorch docs/zh/troubleshooting/HCCL_timeout.md (corpus holdout29 h29b-003, verbatim lines;
# the heartbeat line's format is HCCL heartbeat.cc's MakeErrMsg): the discoverer's EI0002 wait timeout,
# then HCCL's cluster heartbeat naming the device whose process stopped
_EI0002 = ("EI0002: [PID: 7277] 2024-11-28-11:59:30.645.648 The wait execution of the Notify register times out. "
           "Reason: The Notify register has not received the Notify record from remote rank [unknown].base information: "
           "[streamID:[2282987520], taskID[5], tag[AllReduce_90.90.92.240%enp189s0f0_60000_0_1732766162316022], "
           "AlgType(level 0-1-2):[fullmesh-ring-ring].] task information: [")


def _lost(host: str, dev: int, by_host: str, by_dev: int) -> str:
    return (f"Cluster Exception Location[IP/ID]:[{host}/{dev}], Arrival Time:[Thu Nov 28 11:56:34 2024], "
            f"Discoverer:[{by_host}/{by_dev}], ExceptionType:[Heartbeat Lost Occurred], Possible Reason:1. Process has "
            "exited, 2. Network Disconnected")


def test_hccls_heartbeat_names_the_device_whose_process_stopped() -> None:
    lines = ["[Error]: The execution of the internal task times out.", _EI0002, "there are(is) 1 abnormal device(s):",
             _lost("90.90.92.240", 1, "90.90.92.240", 0), "]"]
    assert _top(lines) == ("rank_killed", 1)
    # a device of another host: its index is no global rank
    lines[3] = _lost("90.90.92.241", 1, "90.90.92.240", 0)
    assert _top(lines) == ("rank_killed", None)


def test_hccls_heartbeat_stuck_and_cqe_reports_name_the_failure_class() -> None:
    # the same heartbeat line for its other statuses (HCCL heartbeat.cc MakeErrMsg's wording)
    head = "Cluster Exception Location[IP/ID]:[90.90.92.240/3], Arrival Time:[Thu Nov 28 11:56:34 2024], ExceptionType:"
    stuck = head + "[Stuck Occurred], Possible Reason:1.Host process is stuck, 2.Device task is stuck"
    cqe = head + "[Error cqe Occurred], Possible Reason:1.Network Disconnected, 2.Remote Rank Coredown"
    base = ["[Error]: The execution of the internal task times out.", _EI0002, "there are(is) 1 abnormal device(s):"]
    assert _top([*base, stuck, "]"])[0] == "rank_hang"
    assert _top([*base, cqe, "]"])[0] == "nccl_error"
