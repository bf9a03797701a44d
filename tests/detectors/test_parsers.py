"""Parser fixtures: real lines in the real formats, each with its source.

Sources are the frameworks' own code as quoted in ../shared/log-formats.md (section in
the id) and real user pastes from public issues (the real-logs/ cases).
"""

from __future__ import annotations

import math

import pytest

from detectors.events import EventKind
from detectors.parse import default_parser
from detectors.parsers.base import FileState
from detectors.prefixes import split_prefixes, split_progress


def parse(line: str, **state: object) -> list:
    return default_parser().parse_line(line, 1, FileState("f.log", year=2025, **state))  # type: ignore[arg-type]


def one(line: str, kind: EventKind, **state: object):
    evs = [e for e in parse(line, **state) if e.kind is kind and e.data.get("scope") != "perf"]  # perf: test_perf_parser.py
    assert len(evs) == 1, f"expected one {kind} event from {line!r}, got {parse(line, **state)}"
    return evs[0]


# (id: source, line, failure, rank, data subset)
MATCHES = [
    ("torch2.5-watchdog-timeout (§1.3, real-logs/046)",
     "[rank1]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, NumelOut=9801523, Timeout(ms)=600000) ran for 600020 milliseconds before timing out.",
     "collective_timeout", 1, {"seq": "808", "op": "ALLREDUCE", "timeout_ms": "600000"}),
    ("torch2.0-watchdog-timeout-tensorshape (§1.3)",
     "[E ProcessGroupNCCL.cpp:475] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, OpType=ALLREDUCE, TensorShape=[1024], Timeout(ms)=1800000) ran for 1800514 milliseconds before timing out.",
     "collective_timeout", 0, {"seq": "12", "timeout_ms": "1800000"}),
    ("torch2.3-cut-timeout (real-logs/036)",
     "[rank3]:[E ProcessGroupNCCL.cpp:563] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1573",
     "collective_timeout", 3, {"seq": "1573"}),
    ("torch2.4-watchdog-summary with viewer prefix (real-logs/049)",
     "[80748] [rank0]:[E321 02:07:08.465150152 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 0] Exception (either an error or timeout) detected by watchdog at work: 1580, last enqueued NCCL work: 1582, last completed NCCL work: 1579.",
     "collective_timeout", 0, {"seq": "1580", "last_enqueued": "1582", "last_completed": "1579"}),
    ("torch2.6+-watchdog-summary double space (§1.3)",
     "[rank2]:[E0101 00:00:01.000000000 ProcessGroupNCCL.cpp:1700] [PG ID 0 PG GUID 0(default_pg) Rank 2]  failure detected by watchdog at work sequence id: 77 PG status: last enqueued work: 78, last completed work: 76",
     "collective_timeout", 2, {"seq": "77", "last_enqueued": "78", "last_completed": "76"}),
    ("torch2.3-timeout-at-work (real-logs/044)",
     "[rank11]:[E ProcessGroupNCCL.cpp:1537] [PG 1 Rank 11] Timeout at NCCL work: 15734, last enqueued NCCL work: 15735, last completed NCCL work: 15733.",
     "collective_timeout", 11, {"seq": "15734"}),
    ("dump signal names the first rank (§1.3)",
     "[rank3]:[E0611 10:00:00.000000000 ProcessGroupNCCL.cpp:1000] [PG ID 0 PG GUID 0(default_pg) Rank 3] Received a dump signal due to a collective timeout from  rank 7 and we will try our best to dump the debug info.",
     "collective_timeout", 3, {"from_rank": "7"}),
    ("gloo recv timeout (§1.5)",
     "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for recv operation to complete",
     "collective_timeout", None, {"timeout_ms": "1800000", "op": "recv"}),
    ("gloo connection closed (§1.5)",
     "[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [127.0.0.1]:30201",
     "peer_connection_lost", 0, {}),
    ("NCCL service thread localRank (real-logs/036)",
     "liangxianchen-funasr-15wh-train-lxc0-w-0:15325:16199 [2] NCCL INFO [Service thread] Connection closed by localRank 2",
     "peer_connection_lost", None, {"peer_local_rank": "2"}),
    ("NCCL 2.26 timestamped WARN IB completion (§6)",
     "[2025-03-04 12:17:21] gpu-node-017:469398:469612 [3] transport/net_ib.cc:2358 NCCL WARN NET/IB: Got completion from peer 10.0.3.22<56318> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.0.3.17 remoteGids::ffff:10.0.3.22 hca mlx5_3",
     "nccl_error", None, {"status": "12"}),
    ("NCCL error in PyTorch (§1.3)",
     "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3",
     "nccl_error", None, {}),
    ("CUDA OOM torch>=2.4 with excepthook prefix (§1.7)",
     "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 79.18 GiB of which 59.62 MiB is free.",
     "cuda_oom", 0, {"size": "512.00 MiB"}),
    ("CUDA OOM torch<=2.0 (§1.7)",
     "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity; 14.21 GiB already allocated; 3.19 MiB free; 14.73 GiB reserved in total by PyTorch)",
     "cuda_oom", None, {"size": "20.00 MiB"}),
    ("CUDA OOM empty GPU index (real-logs/036)",
     "[rank2]: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 336.00 MiB. GPU  has a total capacity of 79.15 GiB of which 141.25 MiB is free.",
     "cuda_oom", 2, {}),
    ("illegal memory access glued to tqdm, torch<=2.1 prefix (real-logs/009)",
     " 94%|█████▉| 837/888 [9:42:50<34:08, 40.17s/it][rank7]:[E ProcessGroupNCCL.cpp:1182] [Rank 7] NCCL watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered",
     "cuda_illegal_memory_access", 7, {}),
    ("ECC under torchrun tee (real-logs/011): [default0] is LOCAL, [rank12] GLOBAL",
     "[default0]:[rank12]:[E817 17:40:34.227531918 ProcessGroupNCCL.cpp:1515] [PG 0 (default_pg) Rank 12] Process group watchdog thread terminated with exception: CUDA error: uncorrectable ECC error encountered",
     "gpu_ecc_error", 12, {}),
    ("Xid 79 kernel log (§7): its own entry since issue #8",
     "kernel: NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.",
     "gpu_fallen_off_bus", None, {"pci": "0000:2b:00"}),
    ("Xid 94 with pid (§7)",
     "NVRM: Xid (PCI:0000:01:00): 94, pid=7062, Contained: CE User Channel (0x9). RST: No, D-RST: No",
     "gpu_xid", None, {"xid": "94"}),
    ("anomaly mode NaN (§1.2, real-logs/027)",
     "RuntimeError: Function 'MulBackward0' returned nan values in its 0th output.",
     "nonfinite_loss", None, {"function": "MulBackward0"}),
    ("Megatron <=r0.9 NaN check (real-logs/019)",
     "AssertionError: Rank 11: found NaN in local grad norm in backward pass before data-parallel communication collective. Device: 3",
     "nonfinite_loss", 11, {"value": "NaN"}),
    ("Megatron >=r0.10 rerun state machine (§3.2)",
     "RuntimeError: Rank 188, node gpu-b023, device 4, iteration 2: Unexpected result tensor(nan, device='cuda:4') (message='found NaN in local grad norm for bucket #0 in backward pass before data-parallel communication collective')",
     "nonfinite_loss", 188, {"device": "4"}),
    ("bf16 autocast on Turing (real-logs/033)",
     "RuntimeError: Current CUDA Device does not support bfloat16. Please switch dtype to float16.",
     "bf16_unsupported_gpu", None, {}),
    ("HF bf16 check (§4.2)",
     "ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0",
     "bf16_unsupported_gpu", None, {}),
    ("DeepSpeed already at minimum (§2.1)",
     "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.",
     "loss_scale_collapse", None, {}),
    ("heartbeat monitor torch 2.3 (§1.3)",
     "[rank25]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 25] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=2",
     "collective_timeout", 25, {}),  # a waiting-side symptom: collateral, not the hang's culprit
    ("plain exception with excepthook prefix (§0.3)",
     "[rank2]: ValueError: corrupt sample in shard 3",
     "rank_exception", 2, {"exc_type": "ValueError"}),
    ("ChildFailedError is the launcher's (§1.6)",
     "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
     "launcher_teardown", None, {}),
    ("Lightning rank prefix and non-finite metric (§5)",
     "[rank: 3] Monitored metric val_loss = nan is not finite. Previous best value was 0.412. Signaling Trainer to stop.",
     "nonfinite_loss", 3, {"metric": "val_loss"}),
    ("srun --label global task id",
     "11: [rank11]:[E0101 00:00:00.000000000 ProcessGroupNCCL.cpp:1] [Rank 11] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600081 milliseconds before timing out.",
     "collective_timeout", 11, {"op": "BROADCAST"}),
]


@pytest.mark.parametrize(("source", "line", "failure", "rank", "data"), MATCHES, ids=[m[0] for m in MATCHES])
def test_fingerprint_matches(source: str, line: str, failure: str, rank: int | None, data: dict) -> None:
    ev = one(line, EventKind.MATCH)
    assert ev.failure == failure
    got_rank = int(ev.data["rank"]) if "rank" in ev.data else ev.rank
    assert got_rank == rank
    for k, v in data.items():
        assert ev.data.get(k) == v, (k, ev.data)


OVERFLOWS = [
    ("DeepSpeed >=0.8.3 ZeRO (§2.1, real-logs/001)",
     "[2024-09-11 17:52:18,030] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 4294967296, reducing to 2147483648",
     {"from_scale": "4294967296", "to_scale": "2147483648", "logging_rank": "0"}),
    ("DeepSpeed hysteresis (real-logs/003)",
     "[2023-04-28 06:51:29,903] [INFO] [loss_scaler.py:188:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, but hysteresis is 2. Reducing hysteresis to 1",
     {"from_scale": "65536", "hysteresis": "2"}),
    ("DeepSpeed v0.5 deepscale (§2.1)",
     "[deepscale] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536.0, reducing to 32768.0",
     {"to_scale": "32768.0"}),
    ("DeepSpeed v0.3.13 ZeRO-2 wording (§2.1)",
     "[deepspeed] fp16 dynamic loss scale overflow! Rank 0 Skipping step. Attempted loss scale: 1024, reducing to 512",
     {"to_scale": "512"}),
    ("DeepSpeed fused optimizer (real-logs/051)",
     "[2021-01-26 22:05:16,472] [INFO] [fused_optimizer.py:316:_update_scale] Reducing dynamic loss scale from 1 to 1",
     {"from_scale": "1", "to_scale": "1"}),
    ("fairseq legacy (real-logs/021)",
     "| WARNING: overflow detected, setting loss scale to: 0.25",
     {"to_scale": "0.25"}),
    ("apex FP16_Optimizer (real-logs/053)",
     "OVERFLOW! Skipping step. Attempted loss scale: 2097152.0, reducing to 1048576.0",
     {"from_scale": "2097152.0", "to_scale": "1048576.0"}),
]


@pytest.mark.parametrize(("source", "line", "data"), OVERFLOWS, ids=[o[0] for o in OVERFLOWS])
def test_overflow_lines(source: str, line: str, data: dict) -> None:
    ev = one(line, EventKind.MATCH)
    assert ev.failure == "fp16_overflow_skips"
    assert ev.rank is None, "DeepSpeed's 'Rank 0' is the logging rank, not the overflowing one"
    for k, v in data.items():
        assert ev.data.get(k) == v


SAMPLES = [
    ("HF 4.40-4.56 dict with nan grad_norm (§4.1, real-logs/028)",
     "{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 9.773696745450087e-06, 'epoch': 0.53}",
     None, {"loss": 0.0, "grad_norm": math.nan, "scope": "global"}),
    ("HF 5.x quoted values (§4.1)",
     "{'loss': '2.103', 'grad_norm': '1.296', 'learning_rate': '4.8e-05', 'epoch': '0.1067'}",
     None, {"loss": 2.103, "grad_norm": 1.296}),
    ("Megatron core_v0.16 line (§3.1)",
     " [2026-01-14 09:21:07.113254] iteration     1200/  500000 | consumed samples:       614400 | elapsed time per iteration (ms): 5321.7 | learning rate: 2.999624E-04 | global batch size:   512 | lm loss: 2.481377E+00 | loss scale: 1.0 | grad norm: 0.318 | number of skipped iterations:   0 | number of nan iterations:   0 |",
     1200, {"loss": 2.481377, "loss_scale": 1.0, "grad_norm": 0.318, "skipped_iters": 0.0, "nan_iters": 0.0}),
    ("an older Megatron fork without colons (corpus d2-048)",
     " iteration      700/    3000 | elapsed time per iteration (ms): 12932.3 | learning rate 9.773E-06 | lm loss NAN | loss scale 4.0 |",
     700, {"loss": math.nan, "loss_scale": 4.0}),
    ("Megatron line cut after its loss scale: the loss was dropped, not cut (corpus d2-043)",
     "iteration     3385/    8000 | consumed samples:       216640 | elapsed time per iteration (ms): 7624.3 | learning rate: 6.676E-06 | global batch size:    64 | loss scale: 1.0 | gr",
     3385, {"loss_missing": True, "loss_scale": 1.0}),
    ("Megatron line with lm loss missing (§3.1)",
     " iteration       20/  286102 | consumed samples:         5120 | elapsed time per iteration (ms): 9804.2 | learning rate: 1.259E-06 | global batch size:   256 | loss scale: 8192.0 | number of skipped iterations:   1 | number of nan iterations:   1 |",
     20, {"nan_iters": 1.0, "loss_scale": 8192.0, "skipped_iters": 1.0}),
    ("Megatron bf16 line whose lm loss vanished (NaN average, nothing skipped) (§3.1)",
     " [2024-05-02 11:00:40] iteration      351/   10000 | consumed samples:       179712 | elapsed time per iteration (ms): 2210.4 | learning rate: 1.312E-04 | global batch size:   512 | loss scale: 1.0 | grad norm: 1.884 | number of skipped iterations:   0 | number of nan iterations:   0 |",
     351, {"loss_missing": True, "skipped_iters": 0.0}),
    ("DeepSpeed log_dist step line (§2.2)",
     "[2024-11-02 08:01:44,907] [INFO] [logging.py:96:log_dist] [Rank 0] step=1000, skipped=4, lr=[2.9e-05, 2.9e-05], mom=[(0.9, 0.95), (0.9, 0.95)]",
     1000, {"skipped": 4.0}),
    ("DeepSpeed pipeline print (§2.2)",
     "steps: 1000 loss: 2.3127 iter time (s): 4.812 samples/sec: 212.801",
     1000, {"loss": 2.3127}),
    ("fairseq legacy epoch summary (real-logs/021)",
     "| epoch 027 | loss 6.343 | nll_loss 4.984 | ppl 31.65 | wps 164346 | ups 0.4 | wpb 364096 | bsz 11907 | num_updates 10198 | lr 0.000626286 | gnorm 0.390 | clip 0% | oom 0 | loss_scale 0.500 | wall 23080 | train_wall 21383",
     10198, {"loss": 6.343, "grad_norm": 0.39, "loss_scale": 0.5}),
    ("generic pipe line", "step 12 | loss nan | grad_norm inf | loss_scale 32768", 12,
     {"loss": math.nan, "grad_norm": math.inf, "loss_scale": 32768.0, "scope": "local"}),
    ("generic key=value line", "[rank3]: step=7 loss=2.50 grad_norm=0.91 lr=3e-4", 7, {"loss": 2.5, "grad_norm": 0.91}),
]


@pytest.mark.parametrize(("source", "line", "step", "data"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_samples(source: str, line: str, step: int | None, data: dict) -> None:
    ev = one(line, EventKind.SAMPLE)
    assert ev.step == step
    for k, v in data.items():
        got = ev.data.get(k)
        if isinstance(v, float) and math.isnan(v):
            assert isinstance(got, float) and math.isnan(got), (k, ev.data)
        else:
            assert got == pytest.approx(v) if isinstance(v, float) else got == v, (k, ev.data)


CONTEXT = [
    ("HF TrainingArguments dump", "TrainingArguments(output_dir=out, fp16=True, bf16=False, ddp_timeout=1800)", {"precision": "fp16"}),
    ("DeepSpeed config dump (§2.3)", "[2025-02-21 12:00:03,410] [INFO] [config.py:1005:print]   bfloat16_enabled ............. True", {"precision": "bf16", "framework": "deepspeed"}),
    ("DeepSpeed optimizer (§2.3)", "[2025-02-21 12:00:03,410] [INFO] [logging.py:128:log_dist] [Rank 0] Creating fp16 optimizer with dynamic loss scale", {"precision": "fp16", "loss_scaling": True}),
    ("Megatron args (§3.3)", "  params_dtype .................................... torch.bfloat16", {"precision": "bf16"}),
    ("accelerate state (§4.3)", "Mixed precision type: fp16", {"precision": "fp16"}),
    ("Lightning 2.x AMP (§5)", "Using 16bit Automatic Mixed Precision (AMP)", {"precision": "fp16", "loss_scaling": True}),
    ("Lightning tensor-core hint (§5)", "You are using a CUDA device ('NVIDIA A100-SXM4-80GB') that has Tensor Cores.", {"gpu": "NVIDIA A100-SXM4-80GB"}),
    ("nvidia-smi csv (§8.3)", "Tesla V100-SXM2-32GB, 7.0", {"gpu": "Tesla V100-SXM2-32GB"}),
    ("generic config line", "config: precision=fp16 loss_scaling=false world_size=4 backend=gloo rank=2", {"precision": "fp16", "loss_scaling": False, "world_size": 4}),
    ("EDSR command line (corpus holdout18 h18a-006)", "python main.py --model EDSR --scale 2 --save EDSR_x2_half --reset --precision half", {"precision": "fp16"}),
    ("a server's --dtype flag", "python -m vllm.entrypoints.openai.api_server --model m --dtype float16", {"precision": "fp16"}),
    ("--mixed_precision flag", "accelerate launch --mixed_precision=bf16 train.py", {"precision": "bf16"}),
    ("NCCL comm init (§6)", "x3203c0s25b1n0:41523:41523 [0] NCCL INFO comm 0x55df01b24dd0 rank 24 nranks 32 cudaDev 0 nvmlDev 0 busId 7000 commId 0x2114bc51af4fb978 - Init COMPLETE", {"world_size": 32}),
]


@pytest.mark.parametrize(("source", "line", "facts"), CONTEXT, ids=[c[0] for c in CONTEXT])
def test_context(source: str, line: str, facts: dict) -> None:
    got = {e.data["key"]: e.data["value"] for e in parse(line) if e.kind is EventKind.CONTEXT}
    for k, v in facts.items():
        assert got.get(k) == v, (k, got)


def test_torchrun_agent_failed_line_rich_console() -> None:
    """accelerate's rich console (real-logs/014): level column, right-aligned source."""
    ev = one(" ERROR    failed (exitcode: -9) local_rank: 5 (pid: 22) of  api.py:673", EventKind.EXIT)
    assert ev.data["exitcode"] == -9 and ev.data["local_rank"] == 5 and ev.data["signal"] == "SIGKILL"


def test_torchrun_agent_line_formats() -> None:
    """torch <=2.0 stdlib, 2.1-2.2 bracketed and >=2.3 glog formats (§0.3)."""
    for line in (
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 5 (pid: 59469) of binary: /usr/bin/python",
        "[2024-02-08 10:19:38,064] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1) local_rank: 5 (pid: 2702) of binary: /root/python",
        "E0731 10:50:08.043000 3247964 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 5 (pid: 3248030) of binary: /usr/bin/python3",
    ):
        ev = one(line, EventKind.EXIT)
        assert (ev.data["exitcode"], ev.data["local_rank"]) == (1, 5)


def test_child_failed_summary_block_names_global_rank() -> None:
    """ChildFailedError summary (§1.6): the rank line holds the GLOBAL rank."""
    text = b"""Root Cause (first observed failure):
[0]:
  time      : 2025-03-04_12:17:22
  host      : gpu-node-017.cluster.local
  rank      : 11 (local_rank: 3)
  exitcode  : -6 (pid: 469401)
  error_file: <N/A>
  traceback : Signal 6 (SIGABRT) received by PID 469401
"""
    evs = [e for e in default_parser().parse_chunk(text, 1, FileState("c.log")) if e.kind is EventKind.EXIT]
    assert len(evs) == 1
    assert evs[0].rank == 11 and evs[0].data["local_rank"] == 3 and evs[0].data["root_cause"] is True
    assert evs[0].data["signal"] == "SIGABRT"
    assert evs[0].source.line == 6


def test_deepspeed_launcher_exit_is_not_trusted() -> None:
    """DeepSpeed's launcher shows the last spawned command, not the failed rank (§2.4)."""
    ev = one("[2024-06-14 03:12:45,001] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python3', '-u', 'train.py', '--local_rank=7'] exits with return code = 1", EventKind.EXIT)
    assert ev.data["trusted"] is False and ev.data["local_rank"] == 7


def test_nccl_rank_map_attributes_later_lines() -> None:
    """`comm ... rank 11 nranks 16 cudaDev 3` ties host:pid to global rank 11 (real-logs/044)."""
    text = (
        b"m-0:14054:14825 [3] NCCL INFO comm 0x9bc5a80 rank 11 nranks 16 cudaDev 3 busId 4e000 - Abort COMPLETE\n"
        b"m-0:14054:14891 [3] NCCL INFO [Service thread] Connection closed by localRank 4\n"
    )
    evs = default_parser().parse_chunk(text, 1, FileState("c.log"))
    lost = [e for e in evs if e.kind is EventKind.MATCH]
    assert lost and lost[0].rank == 11 and lost[0].failure == "peer_connection_lost"


def test_prefix_layers_and_device_is_not_rank() -> None:
    p = split_prefixes("host:1:2 [3] NCCL INFO Using network IB")
    assert p.rank is None and p.device == 3 and p.body.startswith("NCCL INFO")
    p = split_prefixes("[default2]:[rank10]: Traceback (most recent call last):")
    assert (p.local_rank, p.rank, p.body) == (2, 10, "Traceback (most recent call last):")
    p = split_prefixes("(RayWorkerWrapper pid=270291, ip=10.175.94.190) [rank1]: ValueError: x")
    assert p.rank == 1 and p.body == "ValueError: x"
    # Open MPI's --tag-output ([jobid,rank]) and horovodrun's gloo launcher ([rank] alone, pytorch/ignite#3466)
    p = split_prefixes("[1,3]<stderr>:RuntimeError: x")
    assert p.rank == 3 and p.body == "RuntimeError: x"
    p = split_prefixes("[1]<stderr>:RuntimeError: ncclCommInitRank failed: unhandled cuda error")
    assert p.rank == 1 and p.body.startswith("RuntimeError: ncclCommInitRank")
    # Determined AI's task log (corpus h3-087)
    p = split_prefixes("[2024-02-27T21:35:28.726901Z] fa88a9df [rank=2] || Traceback (most recent call last):")
    assert p.rank == 2 and p.body == "Traceback (most recent call last):"


def test_progress_bar_split() -> None:
    n, rest = split_progress(" 14%|█▍        | 378/2724 [13:58:09<86:18:35, 132.44s/it][2023-06-07 22:16:00,018] [INFO] x")
    assert n == 378 and rest.startswith("[2023-06-07")
    assert split_progress("Epoch 10/10: 240it [05:55,  1.47s/it, loss=5.46][rank0]: y") == (240, "[rank0]: y")


def test_garbage_never_raises() -> None:
    for line in ("\x00\x01\x02", "�" * 1000, "[rank", "[rank99999999999999999999]:", "{'loss': ", "iteration 1/ |", "exitcode  : x"):
        parse(line)


def test_exception_types_named_failed_are_exceptions() -> None:
    """torch._dynamo's BackendCompilerFailed does not end in Error (pytorch issue threads on
    inductor + old GPUs); it is the exception that ended the run."""
    from detectors.model import EventKind as _K
    from detectors.parse import default_parser as _p
    from detectors.parsers.base import FileState as _F

    line = ("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised: RuntimeError: Found Tesla P100-PCIE-16GB "
            "which is too old to be supported by the triton GPU compiler")
    evs = _p().parse_line(line, 1, _F("x.log", year=2026))
    (match,) = [e for e in evs if e.kind is _K.MATCH]
    assert match.failure == "rank_exception" and match.data["exc_type"].endswith("BackendCompilerFailed")
