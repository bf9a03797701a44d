"""detectors/parsers/perf.py and the issue-8 catalog fingerprints, on real lines with their sources.

Sources: ../shared/log-formats.md (section numbers), the frameworks' source files named per
case, and real user pastes from public issue threads (named by repository and number).
"""

from __future__ import annotations

import pytest

from detectors.correlate import incidents
from detectors.events import EventKind
from detectors.parse import default_parser
from detectors.parsers.base import FileState
from tests.detectors.test_symptoms import job


def perf(line: str) -> list[dict]:
    evs = default_parser().parse_line(line, 1, FileState("f.log", year=2025))
    return [dict(e.data, _step=e.step, _rank=e.rank) for e in evs if e.kind is EventKind.SAMPLE and e.data.get("scope") == "perf"]


PERF = [
    ("HF Trainer train summary 4.x (§4.1)",
     "{'train_runtime': 120.5, 'train_samples_per_second': 53.1, 'train_steps_per_second': 1.66, 'train_loss': 0.43, 'epoch': 3.0}",
     {"throughput": 53.1, "throughput_unit": "samples/s", "perf": "hf_train"}),
    ("HF Trainer train summary 5.x quoted (§4.1)",
     "{'train_runtime': '120.5', 'train_samples_per_second': '53.1', 'train_steps_per_second': '1.66', 'train_loss': '0.43', 'epoch': '3'}",
     {"throughput": 53.1}),
    ("HF log_metrics (trainer_pt_utils.log_metrics)", "  train_samples_per_second =     53.1", {"throughput": 53.1}),
    ("HF eval dict (§4.1)",
     "{'eval_loss': 0.5123, 'eval_runtime': 3.2, 'eval_samples_per_second': 312.5, 'eval_steps_per_second': 9.8, 'epoch': 1.0}",
     {"eval_loss": 0.5123, "epoch": 1.0, "perf": "hf_eval"}),
    ("DeepSpeed ThroughputTimer (§2.2)",
     "[2024-11-02 08:01:44,908] [INFO] [timer.py:260:stop] epoch=0/micro_step=8000/global_step=1000, RunningAvgSamplesPerSec=212.4, CurrSamplesPerSec=215.9, MemAllocated=21.37GB, MaxMemAllocated=38.02GB",
     {"_step": 1000, "throughput": 215.9, "throughput_avg": 212.4, "mem_alloc_gb": 21.37, "mem_max_gb": 38.02}),
    ("DeepSpeed pipeline engine (§2.2)", "steps: 1000 loss: 2.3127 iter time (s): 4.812 samples/sec: 212.801",
     {"_step": 1000, "throughput": 212.801, "iter_ms": 4812.0}),
    ("DeepSpeed see_memory_usage values (deepspeed/runtime/utils.py)",
     "[2023-03-01 10:00:00,123] [INFO] [utils.py:785:see_memory_usage] MA 1.23 GB         Max_MA 1.5 GB         CA 2.0 GB         Max_CA 2 GB ",
     {"mem_alloc_gb": 1.23, "mem_max_gb": 1.5, "mem_reserved_gb": 2.0, "mem_max_reserved_gb": 2.0}),
    ("DeepSpeed see_memory_usage message (deepspeed/runtime/utils.py)",
     "[2023-03-01 10:00:00,122] [INFO] [utils.py:784:see_memory_usage] Before initializing optimizer states",
     {"mem_label": "Before initializing optimizer states"}),
    ("Megatron training_log with --log-throughput (§3.1)",
     " [2026-01-14 09:21:07.113254] iteration     1200/  500000 | consumed samples:       614400 | elapsed time per iteration (ms): 5321.7 | throughput per GPU (TFLOP/s/GPU): 402.8 | learning rate: 2.999624E-04 | global batch size:   512 | lm loss: 2.481377E+00 | loss scale: 1.0 | grad norm: 0.318 | number of skipped iterations:   0 | number of nan iterations:   0 |",
     {"_step": 1200, "iter_ms": 5321.7, "throughput": 402.8, "throughput_unit": "TFLOP/s/GPU"}),
    ("Megatron validation (training.py evaluate_and_print_results)",
     " validation loss at iteration 1000 | lm loss value: 2.345678E+00 | lm loss PPL: 1.043669E+01 | ",
     {"_step": 1000, "eval_loss": 2.345678}),
    ("Megatron validation, newer 'on validation set' form",
     " validation loss at iteration 1000 on validation set | lm loss value: 2.724416E+00 | lm loss PPL: 1.5E+01 | ",
     {"_step": 1000, "eval_loss": 2.724416}),
    ("Megatron theoretical footprint (training.py)", "Theoretical memory footprints: weight and optimizer=1519.18 MB",
     {"mem_states_gb": pytest.approx(1519.18 / 1024, rel=1e-4)}),
    ("Lightning ModelCheckpoint verbose (callbacks/model_checkpoint.py)",
     "[rank: 0] Epoch 3, global step 400: 'val_loss' reached 0.41234 (best 0.41234), saving model to '/ckpt/epoch=3-step=400.ckpt' as top 1",
     {"_step": 400, "eval_loss": 0.41234, "_rank": 0}),
    ("Lightning EarlyStopping (callbacks/early_stopping.py)",
     "Metric val_loss improved by 0.023 >= min_delta = 0.0. New best score: 0.389", {"eval_loss": 0.389}),
    ("Lightning RichProgressBar", "Epoch 0/9  ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 63/63 0:00:02 • 0:00:00 31.18it/s v_num: 0",
     {"throughput": 31.18, "throughput_unit": "it/s"}),
    ("CUDA OOM torch>=2.1 (§1.7)",
     "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 79.18 GiB of which 59.62 MiB is free. Of the allocated memory 77.50 GiB is allocated by PyTorch, and 1.08 GiB is reserved by PyTorch but unallocated.",
     {"mem_alloc_gb": 77.5, "mem_reserved_gb": pytest.approx(78.58), "mem_total_gb": 79.18, "_rank": 0}),
    ("CUDA OOM torch<=2.0 (§1.7)",
     "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity; 14.21 GiB already allocated; 3.19 MiB free; 14.73 GiB reserved in total by PyTorch)",
     {"mem_alloc_gb": 14.21, "mem_reserved_gb": 14.73, "mem_total_gb": 15.78}),
    ("max_memory_allocated user line", "step 100 | max_memory_allocated=12.30GiB max_memory_reserved=14.00GiB",
     {"_step": 100, "mem_max_gb": 12.3, "mem_max_reserved_gb": 14.0}),
    ("NCCL version line (§6)", "gpu-node-017:469398:469398 [3] NCCL INFO NCCL version 2.21.5+cuda12.4",
     {"nccl_version": "2.21.5", "nccl_build": "+cuda12.4"}),
    ("PyTorch NCCL error tail (§1.3)",
     "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3",
     {"nccl_version": "2.19.3"}),
    ("generic tokens/s", "step 20 | throughput: 1234.5 tokens/s", {"_step": 20, "throughput": 1234.5, "throughput_unit": "tokens/s"}),
]


@pytest.mark.parametrize(("source", "line", "want"), PERF, ids=[p[0] for p in PERF])
def test_perf_lines(source: str, line: str, want: dict) -> None:
    got = perf(line)
    assert len(got) == 1, got
    for k, v in want.items():
        assert got[0].get(k) == v, (k, got[0])
    assert "loss" not in got[0]  # never mistaken for a training loss by the NaN logic


def test_megatron_memory_records_glued_on_one_line() -> None:
    # real Megatron output: several ranks' report_memory records without a newline between them
    line = ("[Rank 4] (after 1 iterations) memory (MB) | allocated: 18598.7529296875 | max allocated: 20931.01220703125 | "
            "reserved: 21534.0 | max reserved: 21534.0[Rank 0] (after 1 iterations) memory (MB) | allocated: "
            "20034.7529296875 | max allocated: 30227.64599609375 | reserved: 31086.0 | max reserved: 31086.0")
    got = perf(line)
    assert [(g["_rank"], g["_step"]) for g in got] == [(4, 1), (0, 1)]
    assert got[1]["mem_max_gb"] == pytest.approx(30227.646 / 1024, rel=1e-5)


def test_healthy_step_lines_are_not_perf_lines() -> None:
    for line in ("step 7 | loss 0.912345 | grad_norm 1.234567 | loss_scale 65536",
                 "{'loss': 2.1034, 'grad_norm': 1.2957763671875, 'learning_rate': 4.8e-05, 'epoch': 0.1}",
                 "[rank: 0] Seed set to 42", "host:1:2 [0] NCCL INFO Using network IB"):
        assert perf(line) == [], line


# ------------------------------------------------------------------ new catalog fingerprints
MATCHES = [
    ("kernel OOM summary, Linux >= 4.19 (mm/oom_kill.c dump_oom_summary)",
     "[Tue Mar  4 12:17:21 2025] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0-1,oom_memcg=/kubepods/pod1,task_memcg=/kubepods/pod1/c1,task=python,pid=469401,uid=0",
     "host_oom", {"constraint": "CONSTRAINT_MEMCG"}),
    ("kernel OOM start (mm/oom_kill.c)",
     "python invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0", "host_oom", {}),
    ("Slurm cgroup plugin", "slurmstepd: error: Detected 1 oom_kill event in StepId=123456.0. Some of your processes may have been killed by the cgroup out-of-memory handler.",
     "host_oom", {"events": "1"}),
    ("Slurm cgroup plugin, older", "slurmstepd: error: Detected 2 oom-kill event(s) in step 123456.0 cgroup.", "host_oom", {}),
    ("kubectl describe pod", "      Reason:       OOMKilled", "host_oom", {}),
    ("the kernel OOM kill line stays rank_killed (rank_killed.yaml)",
     "Out of memory: Killed process 469401 (python) total-vm:123456kB, anon-rss:9876543kB", "rank_killed", {"pid": "469401"}),
    ("faulthandler (Modules/faulthandler.c)", "Fatal Python error: Segmentation fault", "rank_segfault", {}),
    ("torchrun summary (torch/distributed/elastic/multiprocessing/errors)", "  traceback : Signal 11 (SIGSEGV) received by PID 469401",
     "rank_segfault", {}),
    ("glog failure handler", "*** SIGSEGV (@0x0) received by PID 1234 (TID 0x7f21a6fff700) from PID 0; stack trace: ***",
     "rank_segfault", {"pid": "1234"}),
    ("kernel segfault record (arch/x86/mm/fault.c)",
     "python[12345]: segfault at 8 ip 00007f3b2c1d2e40 sp 00007ffd8a5b1b10 error 4 in libtorch_cuda.so[7f3b2a000000+1000]",
     "rank_segfault", {}),
    ("DataLoader worker killed (torch/csrc/DataLoader.cpp; msr-fiddle/pipedream#28)",
     "RuntimeError: DataLoader worker (pid 325) is killed by signal: Bus error.", "dataloader_stall",
     {"pid": "325", "signal": "Bus error"}),
    ("DataLoader worker OOM-killed (rank_killed.yaml symptom)",
     "[rank3]: RuntimeError: DataLoader worker (pid 12345) is killed by signal: Killed.", "dataloader_stall", {"signal": "Killed"}),
    ("DataLoader pids exited (torch/utils/data/dataloader.py)",
     "RuntimeError: DataLoader worker (pid(s) 4012, 4013) exited unexpectedly", "dataloader_stall", {"pids": "4012, 4013"}),
    ("DataLoader timeout (torch/utils/data/dataloader.py)", "RuntimeError: DataLoader timed out after 1800 seconds",
     "dataloader_stall", {"seconds": "1800"}),
    ("worker bus error (torch/utils/data/_utils/signal_handling; pytorch/pytorch#26009)",
     "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
     "dataloader_stall", {}),
    ("Xid 79 (§7, open-gpu-kernel-modules osinit.c)", "kernel: NVRM: Xid (PCI:0000:2b:00): 79, pid=2345, GPU has fallen off the bus.",
     "gpu_fallen_off_bus", {"pci": "0000:2b:00"}),
    ("Xid 79 follow-up line (§7)", "NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus.", "gpu_fallen_off_bus", {}),
    ("nvidia-smi after Xid 79", "Unable to determine the device handle for GPU 0000:2B:00.0: GPU is lost.  Reboot the system to recover this GPU",
     "gpu_fallen_off_bus", {}),
    ("other Xids stay gpu_xid (§7)", "NVRM: Xid (PCI:0000:01:00): 94, pid=7062, Contained: CE User Channel (0x9).", "gpu_xid", {"xid": "94"}),
    ("NCCL version check (src/init.cc)",
     "gpu-node-042:51002:51090 [0] init.cc:1243 NCCL WARN Mismatched NCCL version detected : rank 0 version 22105 rank 8 version 21903",
     "nccl_version_mismatch", {"self_rank": "8", "version": "21903"}),
    ("autocast disabled without a GPU (torch/amp/autocast_mode.py)",
     "UserWarning: CUDA is not available or torch_xla is imported. Disabling autocast.", "amp_no_speedup", {}),
    ("GradScaler disabled without a GPU (torch/amp/grad_scaler.py)",
     "UserWarning: torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.", "amp_no_speedup", {}),
]


@pytest.mark.parametrize(("source", "line", "failure", "data"), MATCHES, ids=[m[0] for m in MATCHES])
def test_issue_8_fingerprints(source: str, line: str, failure: str, data: dict) -> None:
    evs = [e for e in default_parser().parse_line(line, 1, FileState("f.log", year=2025)) if e.kind is EventKind.MATCH]
    assert [e.failure for e in evs] == [failure]
    for k, v in data.items():
        assert evs[0].data.get(k) == v, (k, evs[0].data)


TIMEOUT = ("[rank{r}]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective operation timeout: "
           "WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, NumelOut=9801523, Timeout(ms)=600000) ran for 600020 "
           "milliseconds before timing out.\n")


def test_dataloader_failure_is_the_initiator_over_peer_timeouts() -> None:
    files = {f"rank_{r}.log": "step 10 | loss 2.0 | grad_norm 1.0\n" + TIMEOUT.format(r=r) for r in (0, 1, 3)}
    files["rank_2.log"] = ("step 10 | loss 2.0 | grad_norm 1.0\n[rank2]: Traceback (most recent call last):\n"
                           "[rank2]: RuntimeError: DataLoader worker (pid 12345) is killed by signal: Killed.\n")
    top = incidents(job(files))[0]
    assert (top.failure, top.rank) == ("dataloader_stall", 2)
    assert {c["rank"] for c in top.collateral} == {0, 1, 3}


def test_kernel_oom_log_explains_the_killed_rank() -> None:
    kernel = ("[Tue Mar  4 12:17:20 2025] python invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0\n"
              "[Tue Mar  4 12:17:21 2025] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0-1,"
              "global_oom,task_memcg=/user.slice,task=python,pid=469401,uid=1000\n"
              "[Tue Mar  4 12:17:21 2025] Out of memory: Killed process 469401 (python) total-vm:98765432kB, anon-rss:87654321kB\n")
    files = {"kern.log": kernel, "rank_0.log": TIMEOUT.format(r=0), "rank_1.log": "step 10 | loss 2.0 | grad_norm 1.0\n"}
    incs = incidents(job(files))
    assert incs[0].failure == "host_oom"
    assert {c["failure"] for c in incs[0].collateral} >= {"rank_killed", "collective_timeout"}


def test_fallen_off_bus_outranks_everything() -> None:
    files = {"kern.log": "kernel: NVRM: Xid (PCI:0000:2b:00): 79, pid=2345, GPU has fallen off the bus.\n",
             "rank_0.log": "[rank0]: RuntimeError: CUDA error: an illegal memory access was encountered\n",
             "rank_1.log": TIMEOUT.format(r=1)}
    top = incidents(job(files))[0]
    assert top.failure == "gpu_fallen_off_bus" and top.hardware is True
