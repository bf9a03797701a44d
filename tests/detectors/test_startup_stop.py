"""Complete logs of a multi-rank job that stop during distributed set-up (no metric line, no
error, no exit) are a start-up hang as far as a finished job's logs can say: an ``info``
``rank_hang`` naming no rank, only when the input is known to be complete (``diagnose``, offline);
the live engine, which cannot know that, stays quiet. Fixtures are real lines from the threads named."""

from __future__ import annotations

from detectors.diagnosis import build_report
from tests.helpers import fed_state

# https://github.com/Lightning-AI/pytorch-lightning/issues/10471 (2 GPUs, DDP, stuck after init)
_LIGHTNING = ["GPU available: True, used: True", "TPU available: False, using: 0 TPU cores",
              "LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0,1]", "Using native 16bit precision.",
              "LOCAL_RANK: 1 - CUDA_VISIBLE_DEVICES: [0,1]", "Using native 16bit precision.",
              "initializing ddp: GLOBAL_RANK: 1, MEMBER: 2/2", "initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/2"]


def _incidents(lines: list[str], ended: bool) -> list[tuple[str, str, int | None]]:
    rep = build_report(fed_state(lines, "console.log"), ended=ended)
    return [(i["failure"], i["severity"], i["initiator"]["rank"]) for i in rep["incidents"]]


def test_complete_logs_that_stop_in_set_up_are_a_start_up_hang_at_info() -> None:
    assert _incidents(_LIGHTNING, ended=True) == [("rank_hang", "info", None)]
    rep = build_report(fed_state(_LIGHTNING, "console.log"), ended=True)
    assert any("stop during distributed start-up" in line for line in rep["incidents"][0]["root_cause"])


def test_the_live_engine_does_not_know_the_logs_ended() -> None:
    assert _incidents(_LIGHTNING, ended=False) == []


def test_a_metric_line_an_exit_or_one_process_says_it_got_further() -> None:
    step = ["Epoch 0:   3%|▎         | 10/300 [00:05<02:30,  1.93it/s, loss=2.31, v_num=0]"]
    assert _incidents(_LIGHTNING + step, ended=True) == []
    exit_ = ["[2021-11-11 10:00:00,000] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1) "
             "local_rank: 1 (pid: 4242) of binary: /usr/bin/python3"]
    assert all(f != "rank_hang" for f, _, _ in _incidents(_LIGHTNING + exit_, ended=True))
    single = [line for line in _LIGHTNING if "LOCAL_RANK: 1" not in line and "GLOBAL_RANK: 1" not in line]
    single = [line.replace("MEMBER: 1/2", "MEMBER: 1/1") for line in single]
    assert _incidents(single, ended=True) == []


def test_a_communication_benchmarks_table_is_no_stalled_training_job() -> None:
    # https://github.com/NVIDIA/nccl-tests/issues/232: an all_reduce_perf run under mpirun, 2 nodes;
    # its result rows are no metric lines, and the run went fine
    lines = ["bench-node-1:4410:4410 [0] NCCL INFO comm 0x55d0 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE",
             "bench-node-2:5120:5120 [0] NCCL INFO comm 0x55e0 rank 1 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE",
             "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
             "     2097152        524288     float     sum      -1    113.2   18.53   18.53      0    93.35   22.46   22.46      0"]
    assert _incidents(lines, ended=True) == []
    assert _incidents(lines[:2], ended=True) == [("rank_hang", "info", None)]


def test_fairseqs_distributed_init_lines_show_the_ranks_that_came_up() -> None:
    # https://github.com/facebookresearch/fairseq/issues/850: 8 ranks join, then nothing
    lines = [f"| distributed init (rank {r}): tcp://localhost:16344" for r in (1, 6, 5, 3, 0, 2, 7, 4)]
    assert _incidents(lines, ended=True) == [("rank_hang", "info", None)]
    rep = build_report(fed_state(lines, "console.log"), ended=True)
    assert rep["ranks"] == list(range(8))


def test_a_timeout_report_cut_by_the_paste_still_counts_and_names_no_absent_rank() -> None:
    # https://github.com/megvii-research/MOTR/issues/63 (corpus h16a-019): both ranks came up (DETR's
    # init lines), rank 0 timed out, rank 1's report is the excerpt's last line, cut after "co"
    head = ["| distributed init (rank 0): env://", "| distributed init (rank 1): env://", "",
            "[E ProcessGroupNCCL.cpp:821] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, "
            "OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1809347 milliseconds before timing out."]
    cut = "[E ProcessGroupNCCL.cpp:821] [Rank 1] Watchdog caught co"
    assert _incidents([*head, cut], ended=True)[0][:1] == ("collective_timeout",)
    # without rank 1's cut report, rank 1 came up and never reported: the one they waited for
    assert _incidents(head, ended=True)[0] == ("rank_hang", "critical", 1)


# nccl-tests' parameter line and device table (tinygrad/open-gpu-kernel-modules#45, corpus h19b-008:
# the newer table with a Group column, two RTX 4090 in one process, NCCL 2.26.5; NVIDIA/nccl#257,
# corpus h19b-007, has the older one) and NCCL's own version line, which set-up prints before any result
_BENCH_SETUP = ["# nThread 1 nGpus 2 minBytes 8 maxBytes 2147483648 step: 2(factor) warmup iters: 2 iters: 10 "
                "agg iters: 1 validation: 1 graph: 0",
                "#",
                "# Using devices",
                "#  Rank  0 Group  0 Pid   7995 on i-56butc28zq device  0 [0000:2c:00] NVIDIA GeForce RTX 4090",
                "#  Rank  1 Group  0 Pid   7995 on i-56butc28zq device  1 [0000:2d:00] NVIDIA GeForce RTX 4090",
                "i-56butc28zq:7995:7995 [0] NCCL INFO Bootstrap: Using bond0:10.0.11.5<0>",
                "NCCL version 2.26.5+cuda12.9",
                "i-56butc28zq:7995:8104 [1] NCCL INFO Using network IB"]


def test_a_benchmark_that_never_printed_a_result_row_stopped_in_set_up() -> None:
    assert _incidents(_BENCH_SETUP, ended=True) == [("rank_hang", "info", None)]
    rep = build_report(fed_state(_BENCH_SETUP, "console.log"), ended=True)
    assert rep["ranks"] == [0, 1]  # the device table lists the benchmark's ranks


def test_a_benchmark_that_printed_its_results_ran() -> None:
    # NVIDIA/nccl-tests broadcast_perf (corpus h21b-007): its table has a root column and no redop
    rows = ["#       size         count    type    root     time   algbw   busbw  error     time   algbw   busbw  error",
            "           8             2   float       0    45.82    0.00    0.00    N/A    38.17    0.00    0.00    N/A",
            "         256            64    half       0    41.07    0.01    0.01    N/A    40.52    0.01    0.01    N/A"]
    assert _incidents([*_BENCH_SETUP, *rows], ended=True) == []


def test_nccls_version_line_is_set_up_not_a_metric_line() -> None:
    lines = [line for line in _LIGHTNING if "NCCL version" not in line]
    assert _incidents([*lines, "NCCL version 2.21.5+cuda12.4"], ended=True) == [("rank_hang", "info", None)]


def test_paddles_nccl_context_line_gives_the_world() -> None:
    # PaddlePaddle/Knover#82 (corpus holdout22 h22b-006): two nodes connect, the NCCL context comes
    # up with four ranks, the worker says training starts, and nothing follows
    lines = ["W0918 15:42:08.324882 21635 nccl_context.cc:142] Socket connect worker 10.130.17.157:6070 failed, "
             "try again after 12 seconds.",
             "I0918 15:42:20.325516 21635 nccl_context.cc:189] init nccl context nranks: 4 local rank: 0 gpu id: 0 ring id: 0",
             "Training is start."]
    assert _incidents(lines, ended=True) == [("rank_hang", "info", None)]


def test_a_trainers_device_count_gives_the_world() -> None:
    # coqui-ai/Trainer#148 (corpus h19b-024): Coqui's Trainer prints its environment,
    # "Using PyTorch DDP", and init_process_group never returns
    coqui = [" > Training Environment:", " | > Backend: Torch", " | > Current device: 0", " | > Num. of GPUs: 4",
             " | > Num. of CPUs: 44", " > Using PyTorch DDP"]
    assert _incidents(coqui, ended=True) == [("rank_hang", "info", None)]
    assert _incidents([line.replace("GPUs: 4", "GPUs: 1") for line in coqui], ended=True) == []
    # tensorflow/tensorflow#35878, the MultiWorkerMirroredStrategy example (corpus h19b-010): its replicas in sync
    tf = ["2020-01-15 19:13:45.016826: I tensorflow/core/distributed_runtime/rpc/grpc_server_lib.cc:390] "
          "Started server with target: grpc://localhost:2000", "Number of devices: 2",
          "WARNING:tensorflow:ModelCheckpoint callback is not provided. Workers will need to restart training if any fails."]
    assert _incidents(tf, ended=True) == [("rank_hang", "info", None)]


# hpcaitech/Open-Sora-style start of a loop (the bar, then a library warning glued after it), as
# ColossalAI jobs print it: the logs end there, with the bar still at 0
_AT_ZERO = [
    "[2024-07-15 13:32:09] Training for 1000 epochs with 32425 steps per epoch",
    "[2024-07-15 13:32:11] Beginning epoch 0...",
    "Epoch 0:   0%|          | 0/32425 [00:00<?, ?it/s]/opt/conda/lib/python3.9/site-packages/torch/utils/checkpoint.py:460: "
    "UserWarning: torch.utils.checkpoint: please pass in use_reentrant=True or use_reentrant=False explicitly.",
    "  warnings.warn(",
]


def _scanned(lines: list[str], ended: bool = True) -> list[tuple[str, str, int | None]]:
    """Through the chunk scan (a bar is noise to it but for its edges) and the parse."""
    from detectors.correlate import incidents
    from detectors.engine import Engine

    engine = Engine("t")
    engine.feed("".join(f"{line}\n" for line in lines).encode(), 1, engine.open_file("train.log"))
    return [(i.failure, i.severity, i.rank) for i in incidents(engine.state, ended=ended)]


def test_logs_that_end_with_the_loops_bar_at_zero_stopped_before_the_first_step() -> None:
    assert _scanned(_AT_ZERO) == [("rank_hang", "info", None)]
    assert _scanned(_AT_ZERO, ended=False) == []  # live, the loop may still be on its first step


def test_a_bar_that_moved_or_a_metric_line_after_it_is_no_stop() -> None:
    moved = [*_AT_ZERO, "Epoch 0:   0%|          | 1/32425 [00:09<81:02:11,  9.00s/it]"]
    assert _scanned(moved) == []
    logged = [*_AT_ZERO, "[2024-07-15 13:40:02] step 10 loss 2.31"]
    assert all(f != "rank_hang" for f, _, _ in _scanned(logged))
    done = ["Map: 100%|██████████| 2000/2000 [00:01<00:00, 1500.00 examples/s]"]
    assert _scanned(done) == []


# YOLOX (yolox/core/launch.py: logger.info("Rank {} initialization finished.".format(global_rank)),
# loguru's format) and torch 1.9-2.0's distributed_c10d store barrier: ranks that joined, then nothing
_YOLOX = [f"2022-02-15 15:52:36.{884 + r} | INFO     | yolox.core.launch:_distributed_worker:116 - Rank {r} initialization finished."
          for r in (6, 4, 0, 2, 1, 5, 7, 3)]
_STORE = [f"INFO:torch.distributed.distributed_c10d:Rank {r}: Completed store-based barrier for key:store_based_barrier_key:1 with 4 nodes."
          for r in range(4)]


def test_ranks_announcing_they_joined_then_silence_stopped_in_set_up() -> None:
    for lines in (_YOLOX, _STORE):
        assert _scanned(lines) == [("rank_hang", "info", None)]
        trained = [*lines, "2022-02-15 15:53:40 | INFO | yolox.core.trainer:261 - epoch: 1/300, iter: 10/1833, loss: 14.2"]
        assert all(f != "rank_hang" for f, _, _ in _scanned(trained))


def test_a_structured_loggers_json_world_size_gives_the_world() -> None:
    # structlog's JSON renderer quotes the key: '"world_size": 3' (a generated job's shape)
    lines = ['{"rank": 0, "world_size": 3, "optimizer": "Adam", "lr": 0.001, "event": "train_start", "level": "info"}']
    assert _incidents(lines, ended=True) == [("rank_hang", "info", None)]


# torchtitan's device mesh line gives the world (torchtitan/distributed/parallel_dims.py logs the
# mesh's dimension names and sizes, or its parallelism degrees): the shapes of corpus holdout14
# h14a-016 ("Building 1-D device mesh with ('dp',), [4]"), holdout20 h20b-010 and holdout24 h24b-013
# ("['dp_shard'], [8]" / "[24]"), holdout27 h27a-003 ("parallelism: pp=1, dp_replicate=1, dp_shard=4,
# ...") and a prime-rl trainer built on it that stopped after "Starting training loop" (holdout23
# h23d-021, unprefixed loguru-style lines)
_MESH_1D = ["11:05:18    INFO Applied activation checkpointing (freq=1)",
            "11:05:18    INFO Building 1-D device mesh with ['dp_shard'], [8]",
            "11:07:08    INFO Initializing optimizer (lr=1e-06 weight_decay=0.01 max_norm=1.0 type='adamw')",
            "11:07:08    INFO Starting training loop (config.max_steps=None)"]
_MESH_2D = ["[rank0]:2024-03-04 17:01:28,834 - torchtrain.parallelisms - INFO - Building 2-D device mesh with ('dp', 'tp'), [2, 2]"]
_MESH_PAR = ["[rank0]:[titan] 2026-04-23 22:49:06,423 - root - INFO - Building device mesh with parallelism: pp=1, "
             "dp_replicate=1, dp_shard=4, cp=1, tp=1, ep=1, etp=1"]


def test_a_torchtitan_device_mesh_gives_the_world() -> None:
    for lines, world in ((_MESH_1D, 8), (_MESH_2D, 4), (_MESH_PAR, 4)):
        assert fed_state(lines).context().get("world_size") == world
    assert _incidents(_MESH_1D, ended=True) == [("rank_hang", "info", None)]
    trained = [*_MESH_1D, "11:07:40    INFO Step 1 | Time: 31.2s | Loss: 0.0123 | Throughput: 1,024 tokens/s"]
    assert all(f != "rank_hang" for f, _, _ in _incidents(trained, ended=True))


# ps-lite's rendezvous (src/van.cc, logged with PS_VERBOSE): nodes send the scheduler ADD_NODE, and
# once every one registered the scheduler logs "the scheduler is connected to N workers and M servers"
# and each node "W[9] is connected to others". Lines of BytePS's scheduler and workers that stopped
# after registering (corpus holdout19 h19b-002, h19b-003); the completed rendezvous from ps-lite's
# own docs and kubeflow's mxnet-operator README.
_PSLITE = ["BytePS launching scheduler",
           "[06:46:25] src/van.cc:357: Bind to role=scheduler, id=1, ip=10.94.1.77, port=1234, is_recovery=0",
           "[06:46:36] src/van.cc:471: ? => 1. Meta: request=0, timestamp=0, control={ cmd=ADD_NODE, node={ role=server, "
           "ip=10.94.1.77, port=62825, is_recovery=0 } }. THIS IS NOT DATA MSG!",
           "[06:47:01] src/van.cc:471: ? => 1. Meta: request=0, timestamp=0, control={ cmd=ADD_NODE, node={ role=worker, "
           "ip=10.94.1.152, port=41120, is_recovery=0 } }. THIS IS NOT DATA MSG!"]
_PSLITE_DONE = ["[19:57:18] src/van.cc:336: assign rank=9 to node role=worker, ip=128.2.211.110, port=58442",
                "[19:57:18] src/van.cc:347: the scheduler is connected to 1 workers and 1 servers",
                "[19:57:18] src/van.cc:354: W[9] is connected to others"]


def _stopped_in_set_up(lines: list[str], said: str) -> None:
    """A complete log that ends inside the start-up wait: an info rank_hang naming no rank, whose
    root cause says ``said``; a log still being written is no stop at all."""
    assert _incidents(lines, ended=True) == [("rank_hang", "info", None)]
    rep = build_report(fed_state(lines, "console.log"), ended=True)
    assert any(said in line for line in rep["incidents"][0]["root_cause"])
    assert _incidents(lines, ended=False) == []


def test_logs_that_stop_in_ps_lites_rendezvous_stopped_in_set_up() -> None:
    _stopped_in_set_up(_PSLITE, "ps-lite's rendezvous")
    assert _incidents([*_PSLITE, *_PSLITE_DONE], ended=True) == []


# Paddle's launch waits for every trainer's endpoint before training (paddle.distributed's
# wait_server_ready: "server not ready, wait 3 sec to retry..." then "not ready endpoints:[...]"
# every 3 s). Lines of PaddlePaddle/Paddle#44966 (two nodes each waiting for the other; corpus
# holdout24 h24b-021) and PaddlePaddle/PLSC#115 (one node waiting for four endpoints of the other).
_PADDLE_WAIT = ["$ python -m paddle.distributed.launch --ips=\"192.168.4.17,192.168.4.7\" --gpus=0,1 train_fleet_dygraph.py",
                "server not ready, wait 3 sec to retry...",
                "not ready endpoints:['192.168.4.7:6070', '192.168.4.7:6071']",
                "server not ready, wait 3 sec to retry...",
                "not ready endpoints:['192.168.4.7:6070']"]


def test_logs_that_stop_while_paddles_trainers_wait_for_their_peers_stopped_in_set_up() -> None:
    _stopped_in_set_up(_PADDLE_WAIT, "192.168.4.7:6070, 192.168.4.7:6071")
    trained = [*_PADDLE_WAIT, "[2022/08/08 10:00:00] ppdet.engine INFO: Epoch: [0] [  0/916] learning_rate: 0.000100 loss: 2.431"]
    assert all(f != "rank_hang" for f, _, _ in _incidents(trained, ended=True))


# An srun command line that starts one task per rank (several per node) gives the world: --ntasks N,
# or --ntasks-per-node N on --nodes M (Slurm's srun options; stas00/ml-engineering's srun launcher,
# Deformable-DETR's run_dist_slurm.sh). One task per node runs a launcher (torchrun) whose tasks are
# nodes: no world from srun. Lines of a PiPPy T5 job on 2 x 8 GPUs that stopped in its pipeline
# set-up (corpus holdout23 h23b-018); "srun -N 1 -n 1 shifter python ..." (holdout23) starts one.
_SRUN = ["$ VERBOSE=1 srun -N2 -p train --gpus-per-node=8 --ntasks-per-node=8 --gpus-per-task=1 ./pippy_wrapper.sh",
         "submod_0 35M params", "INFO:root:[6] Instantiating RankWorker", "INFO:root:Instantiating PipeStageExecutor for stage 0"]


def test_an_srun_line_with_a_task_per_rank_gives_the_world() -> None:
    assert fed_state(_SRUN).context().get("world_size") == 16
    assert _incidents(_SRUN, ended=True) == [("rank_hang", "info", None)]
    for line, world in (("srun --ntasks=4 --cpus-per-task=8 python train.py", 4),
                        ("+ srun -N 1 -n 1 shifter python pytorch_info.py", None),
                        ("srun --nodes=4 --ntasks-per-node=1 torchrun --nproc_per_node=8 --nnodes=4 train.py", 32),
                        ("srun -N 4 --ntasks-per-node=1 ./launch.sh", None),
                        ("srun -N2-4 --ntasks-per-node=8 python train.py", None)):
        assert fed_state([line]).context().get("world_size") == world, line
