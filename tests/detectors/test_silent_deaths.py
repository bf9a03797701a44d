"""Deaths without a Python exception, told only by a launcher, a driver or the shell (issue #12,
class 3): who died, of what, and when the logs cannot say who.

Every fixture is a real line (or excerpt) from the public thread named above it."""

from __future__ import annotations

from typing import Any

import pytest

from detectors.diagnosis import build_report
from detectors.engine import Engine
from tests.helpers import fed_state


def report(text: str) -> dict[str, Any]:
    return build_report(fed_state(text.splitlines()))


def scanned(text: str) -> dict[str, Any]:
    """The whole path diagnose takes: the scanner picks the candidate lines first."""
    eng = Engine("t")
    fs = eng.open_file("console.log")
    eng.feed(text.encode(), 1, fs)
    return eng.report()


def top(rep: dict[str, Any]) -> tuple[str, str, int | None]:
    inc = rep["incidents"][0]
    return inc["failure"], inc["severity"], inc["initiator"]["rank"]


_SUMMARY_HEAD = (
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
    "======================================================\n"
    "main_bert.py FAILED\n"
    "------------------------------------------------------\n"
)

# --------------------------------------------------------------- one worker aborted (SIGABRT)
_LONE_ABORTS = [
    # hpcaitech/ColossalAI#1400: the elastic agent's line, nothing before it but memory stats
    ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -6) local_rank: 0 (pid: 218624) "
     "of binary: /home/gehao/anaconda3/envs/mlsys/bin/python\n", 0),
    # bytedance/Protenix#321: torch 2.5 glog prefix; rank 4 only observes another rank's dump signal
    ("W0603 04:19:17.128000 104 site-packages/torch/distributed/elastic/multiprocessing/api.py:900] Sending process 106 closing signal SIGTERM\n"
     "W0603 04:19:17.133000 104 site-packages/torch/distributed/elastic/multiprocessing/api.py:900] Sending process 108 closing signal SIGTERM\n"
     "W0603 04:19:17.134000 104 site-packages/torch/distributed/elastic/multiprocessing/api.py:900] Sending process 109 closing signal SIGTERM\n"
     "[rank4]:[E603 04:19:17.315831399 ProcessGroupNCCL.cpp:1685] [PG ID 0 PG GUID 0(default_pg) Rank 4] Observed flight recorder dump signal from another rank via TCPStore.\n"
     "W0603 04:19:17.135000 104 site-packages/torch/distributed/elastic/multiprocessing/api.py:900] Sending process 110 closing signal SIGTERM\n"
     "W0603 04:19:17.137000 104 site-packages/torch/distributed/elastic/multiprocessing/api.py:900] Sending process 111 closing signal SIGTERM\n"
     "W0603 04:19:17.138000 104 site-packages/torch/distributed/elastic/multiprocessing/api.py:900] Sending process 112 closing signal SIGTERM\n"
     "W0603 04:19:17.139000 104 site-packages/torch/distributed/elastic/multiprocessing/api.py:900] Sending process 113 closing signal SIGTERM\n"
     "E0603 04:19:17.163000 104 site-packages/torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: -6) local_rank: 1 (pid: 107) "
     "of binary: /root/miniconda3/bin/python3.11\n", 1),
    # ParCIS/Chimera#2: the summary's root cause, no other failure
    (_SUMMARY_HEAD + "Failures:\n  <NO_OTHER_FAILURES>\n------------------------------------------------------\n"
     "Root Cause (first observed failure):\n[0]:\n  time      : 2024-02-27_12:42:13\n  host      : gpt-dev-ppt\n"
     "  rank      : 0 (local_rank: 0)\n  exitcode  : -6 (pid: 65957)\n  error_file: <N/A>\n"
     "  traceback : Signal 6 (SIGABRT) received by PID 65957\n"
     "======================================================\n", 0),
    # huggingface/accelerate#2960: rank 10 on a node srun started an agent on; srun's "task 0"
    # is that node's agent exiting after it (the summary's "[0]:" is the entry's index)
    (_SUMMARY_HEAD + "Failures:\n  <NO_OTHER_FAILURES>\n-------------------------------------------------------\n"
     "Root Cause (first observed failure):\n[0]:\n  time      : 2024-07-26_10:59:45\n  host      : SH-IDC1-10-140-24-95\n"
     "  rank      : 10 (local_rank: 2)\n  exitcode  : -6 (pid: 214033)\n  error_file: <N/A>\n"
     "  traceback : Signal 6 (SIGABRT) received by PID 214033\n=======================================================\n"
     "srun: error: SH-IDC1-10-140-24-95: task 0: Exited with exit code 1\n"
     "W0726 10:59:50.786825 140538811684672 torch/distributed/elastic/multiprocessing/api.py:858] Sending process 147865 closing signal SIGTERM\n",
     10),
]


@pytest.mark.parametrize(("text", "rank"), _LONE_ABORTS)
def test_one_workers_sigabrt_with_no_watchdog_timeout_is_its_own_abort(text: str, rank: int) -> None:
    rep = report(text)
    assert top(rep) == ("native_abort", "critical", rank)
    assert rep["incidents"][0]["initiator"]["rank_from"] == "launcher"


# open-compass/VLMEvalKit#1131: four workers aborted in the same second (the watchdog's aborts
# after a timeout): no worker's abort is the cause, and none is named
_MANY_ABORTS = _SUMMARY_HEAD + "Failures:\n" + "".join(
    f"[{i}]:\n  time      : 2025-07-10_21:46:37\n  host      : ip-172-31-21-134.ec2.internal\n"
    f"  rank      : {r} (local_rank: {r})\n  exitcode  : -6 (pid: {32050 + r})\n  error_file: <N/A>\n"
    f"  traceback : Signal 6 (SIGABRT) received by PID {32050 + r}\n"
    for i, r in enumerate((1, 3, 5, 7), 1))


def test_several_workers_aborting_together_are_teardown_naming_no_rank() -> None:
    rep = report(_MANY_ABORTS)
    assert top(rep) == ("launcher_teardown", "critical", None)
    assert all(i["failure"] != "native_abort" for i in rep["incidents"])


def test_workers_the_agent_neither_reports_nor_sigterms_had_died_too() -> None:
    # hiyouga/LlamaFactory#7396 (../shared/real-logs 054): pids 48097 and 48098 lie between the failed
    # worker and the SIGTERMed ones but get no SIGTERM: they had already ended (the watchdog's aborts)
    text = "".join(
        f"[{80840 + i}] W0321 02:07:20.{285 + i}000 140204748584768 torch/distributed/elastic/multiprocessing/api.py:858] "
        f"Sending process {pid} closing signal SIGTERM\n" for i, pid in enumerate(range(48099, 48104), 6))
    text += ("[80851] E0321 02:07:26.090000 140204748584768 torch/distributed/elastic/multiprocessing/api.py:833] failed "
             "(exitcode: -6) local_rank: 0 (pid: 48096) of binary: /opt/conda/envs/Llama_factory/bin/python\n")
    assert top(report(text)) == ("launcher_teardown", "critical", None)
    # the same lines with every other worker SIGTERMed: that one worker's abort is its own
    full = "".join(f"W0321 02:07:20.285000 1 torch/distributed/elastic/multiprocessing/api.py:858] Sending process {pid} closing signal SIGTERM\n"
                   for pid in range(48097, 48104)) + text.splitlines(keepends=True)[-1]
    assert top(report(full)) == ("native_abort", "critical", 0)


def test_a_pid_between_two_workers_of_consecutive_local_ranks_is_no_worker() -> None:
    # a 2-worker torchrun job whose worker 1 aborted at exit ("terminate called without an active
    # exception", a CPU HF Trainer job of ours, corpus holdout28 g28b-001; the agent's and the summary's
    # line shapes as in ../shared/real-logs 054): pid 32697 lies between the workers, but the summary
    # gives them local ranks 0 and 1, and workers are spawned in local-rank order: no worker ended unseen
    text = ("terminate called without an active exception\n"
            "W1207 16:34:50.901000 31904 torch/distributed/elastic/multiprocessing/api.py:1028] Sending process 32696 "
            "closing signal SIGTERM\n"
            "E1207 16:34:50.933000 31904 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: -6) "
            "local_rank: 1 (pid: 32698) of binary: /venv/bin/python3\n"
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
            "============================================================\n"
            "train.py FAILED\n"
            "------------------------------------------------------------\n"
            "Failures:\n"
            "[1]:\n  time      : 2026-12-07_16:34:50\n  host      : node1\n  rank      : 0 (local_rank: 0)\n"
            "  exitcode  : -15 (pid: 32696)  (SIGTERM)\n  error_file: <N/A>\n"
            "  traceback : Signal 15 (SIGTERM) received by PID 32696\n"
            "------------------------------------------------------------\n"
            "Root Cause (first observed failure):\n"
            "[0]:\n  time      : 2026-12-07_16:34:50\n  host      : node1\n  rank      : 1 (local_rank: 1)\n"
            "  exitcode  : -6 (pid: 32698)  (SIGABRT)\n  error_file: <N/A>\n"
            "  traceback : Signal 6 (SIGABRT) received by PID 32698\n"
            "============================================================\n")
    assert top(report(text)) == ("native_abort", "critical", 1)
    # the same pids with local ranks 0 and 2: a worker (local rank 1) lies between them, unreported
    gap = text.replace("rank      : 1 (local_rank: 1)", "rank      : 2 (local_rank: 2)").replace(
        "local_rank: 1 (pid: 32698)", "local_rank: 2 (pid: 32698)")
    assert top(report(gap))[2] is None


def test_a_watchdog_timeout_in_the_logs_makes_the_abort_the_watchdogs() -> None:
    # the timeout line: hiyouga/LlamaFactory#6269 (rank 0's watchdog); the agent's line: ColossalAI#1400, the
    # worker it reports made local rank 1 (whose own output is not in the paste)
    text = ("[rank0]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation "
            "timeout: WorkNCCL(SeqNum=7753, OpType=_REDUCE_SCATTER_BASE, NumelIn=544997376, NumelOut=68124672, "
            "Timeout(ms)=600000) ran for 600061 milliseconds before timing out.\n"
            + _LONE_ABORTS[0][0].replace("local_rank: 0", "local_rank: 1"))
    rep = report(text)
    assert all(i["failure"] != "native_abort" for i in rep["incidents"])
    # rank 0 waited in a collective that rank 1 never joined: the hang analysis names rank 1
    assert top(rep) == ("rank_hang", "critical", 1)


# --------------------------------------------------------------- a single-process job names no rank
_SINGLE = [
    # meta-llama/llama (corpus holdout2 h2-004): torchrun --nproc_per_node 1, SIGKILL
    ("torchrun --nproc_per_node 1 example_chat_completion.py     --ckpt_dir llama-2-7b-chat/     --tokenizer_path tokenizer.model\n"
     "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 333202) of binary: "
     "/home/akemid/llama/venv/bin/python3\n", "rank_killed"),
    # meta-llama/llama (corpus holdout5 h5-071): the command wrapped over continuation lines
    ("(llama) znr@znr-OMEN-by-HP-Laptop-17-cm2xxx:~/llama-main$ torchrun --nproc_per_node 1 example_chat_completion.py \\\n"
     "> --ckpt_dir /home/znr/llama-main/llama-2-7b \\\n"
     "[2023-10-13 17:40:02,544] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -9) local_rank: 0 "
     "(pid: 62498) of binary: /home/znr/miniconda3/envs/llama/bin/python\n", "rank_killed"),
    # the same form with '=' (torchrun's documented spelling) over the ColossalAI#1400 agent line
    ("torchrun --nproc_per_node=1 train.py\n" + _LONE_ABORTS[0][0], "native_abort"),
]


@pytest.mark.parametrize(("text", "failure"), _SINGLE)
def test_a_single_process_job_names_no_rank(text: str, failure: str) -> None:
    rep = report(text)
    assert rep["context"]["world_size"] == 1
    assert top(rep) == (failure, "critical", None)
    assert [c for c in rep["incidents"][0]["collateral"] if c["failure"] == failure] == []


def test_nproc_per_node_times_nnodes_is_the_world_and_an_elastic_range_is_none() -> None:
    assert report("torchrun --nnodes=2 --nproc_per_node=4 train.py\n")["context"]["world_size"] == 8
    assert report("torchrun --nnodes=1:4 --nproc_per_node=4 train.py\n")["context"]["world_size"] is None
    # two processes on one node: the agent's local rank is the rank
    assert top(report("torchrun --nproc_per_node 2 train.py\n" + _SINGLE[0][0].split("\n", 1)[1])) == ("rank_killed", "critical", 0)


# --------------------------------------------------------------- the shell's "Killed"
_SHELL_KILLED = [
    # InternLandMark/LandMark#65: glued to the last tqdm update
    "Training with a single process on 1 GPUs.\n"
    " 31%|████████████████████████████████████▉                                                  | 331/1063 [01:06<03:59,  3.06it/s]Killed\n",
    # castorini/hedwig#70: a line of its own after the bar
    "  0%|         | 0/3000001 [00:00<?, ?it/s]Skipping token 3000000 with 1-dimensional vector ['300']; likely a header\n"
    "100%██████████████████| 3000001/3000001 [03:33<00:00, 14061.26it/s]\n"
    "Killed\n",
    # jaewon-lee-b/lte#22: right after start-up
    "(lte) root@401240707274117120-taskrole1-0:/gemini/code/lte-main# python train.py --config "
    "configs/train-div2k/train_edsr-baseline-lte.yaml --gpu 0\nconfig loaded.\nKilled\n",
]


@pytest.mark.parametrize("text", _SHELL_KILLED)
def test_the_shells_killed_notice_is_a_sigkill(text: str) -> None:
    for rep in (report(text), scanned(text)):
        assert top(rep) == ("rank_killed", "critical", None)


@pytest.mark.parametrize("line", [
    # hmcts/cnp-flux-config#28772 (kubectl describe pod)
    "      Reason:       OOMKilled",
    # the kernel's OOM killer (kubernetes-sigs/aws-efs-csi-driver#1218), its timestamp prefix stripped
    "Memory cgroup out of memory: Killed process 140339 (python3) total-vm:120832kB, anon-rss:15596kB",
])
def test_killed_in_other_words_is_not_the_shells_notice(line: str) -> None:
    st = fed_state([line])
    assert not [e for e in st.exits if e.data.get("reporter") == "shell"]


# --------------------------------------------------------------- a teardown with its exit line cut
_TEARDOWN_ONLY = [
    # hiyouga/LLaMA-Factory (corpus holdout2 h2-035): the ERROR line is cut before "exits with return code"
    "  0%|          | 0/17165 [00:00<?, ?it/s][2024-01-03 14:05:36,090] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 2726715\n"
    "[2024-01-03 14:05:36,090] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 2726716\n"
    "[2024-01-03 14:05:36,716] [ERROR] [launch.py:321:sigkill_handler] ['/home/bingxing2/home/scx9042/.conda/envs/myLLM/bin/python', "
    "'-u', 'src/train_bash.py', '--local_rank=3', '--deepspeed', 'ds_config.json', '--stage', 'sft', '--l\n",
    # microsoft/DeepSpeed (corpus holdout2 h2-034): one subprocess, its return code only in the title
    "[2023-04-07 13:08:55,469] [INFO] [utils.py:838:see_memory_usage] CPU Virtual Memory:  used = 28.43 GB, percent = 22.6%\n"
    "[2023-04-07 13:09:33,201] [INFO] [launch.py:318:sigkill_handler] Killing subprocess 80\n",
    # bytedance/Protenix#321 without its agent's failed line
    "W0603 04:19:17.128000 104 site-packages/torch/distributed/elastic/multiprocessing/api.py:900] Sending process 106 closing signal SIGTERM\n"
    "W0603 04:19:17.133000 104 site-packages/torch/distributed/elastic/multiprocessing/api.py:900] Sending process 108 closing signal SIGTERM\n",
]


@pytest.mark.parametrize("text", _TEARDOWN_ONLY)
def test_a_launcher_tearing_workers_down_without_an_exit_line_is_a_crash_naming_no_rank(text: str) -> None:
    assert top(report(text)) == ("launcher_teardown", "critical", None)


# --------------------------------------------------------------- Ray Train names the dead worker
def test_ray_trains_worker_has_failed_names_the_world_rank() -> None:
    # ray-project/ray#47461 (the raylet's line trimmed after "Node ID:")
    text = ("(raylet) A worker died or was killed while executing a task by an unexpected system error. To troubleshoot the "
            "problem, check the logs for the dead worker. RayTask ID: ffffffffffffffff3fe85624f7ebc8f28d076a0702000000 Worker ID: "
            "fead2dfe78eeee17dd8922f0569f798cf51660782f4222a9acfc8fbe Node ID:\n"
            "(TorchTrainer pid=89392) Worker 0 has failed.\n")
    assert top(report(text)) == ("rank_killed", "critical", 0)
    # the same driver line for another worker (the format of ray/train/_internal/utils.py check_for_failure)
    assert top(report(text.replace("Worker 0 has", "Worker 3 has"))) == ("rank_killed", "critical", 3)


def test_a_vendor_wording_of_the_agents_failed_line_names_the_worker() -> None:
    # shihao1895/MemoryVLA#20 (Alibaba PAI-DLC's torch build): "for binary located at ... with
    # local_rank: 0 (process ID: 71)"; the agent SIGTERMs the others first, then reports rank 0's SIGKILL
    pre = "[dlc1mtq58q0821ib-master-0] [2026-03-30 19:24:35,966] torch.distributed.elastic.multiprocessing.api: "
    lines = [pre + f"[WARNING] Sending process {pid} the closing signal SIGTERM" for pid in (73, 74, 75)]
    lines.append(pre.replace("35,966", "42,731") + "[ERROR] failed (exitcode: -9) for binary located at "
                 "/mnt/data/miniconda3/envs/memvla/bin/python3.10 with local_rank: 0 (process ID: 71)")
    inc = build_report(fed_state(lines, "train.log"))["incidents"][0]
    assert (inc["failure"], inc["initiator"]["rank"]) == ("rank_killed", 0)
