"""Deterministic generator of realistic per-rank logs of an 8-rank training job.

Writes ``rank0.log`` … ``rank7.log`` into ``--out`` with about ``--size-mb`` MB in
total, plus ``<out>.manifest.json`` beside the directory (not in it, so that a
recursive ``rankwatch diagnose DIR`` sees only the logs) that records what was written (bytes, physical
lines, ``\\r`` segments, steps, the planted fatal incident).

The job it imitates is one node with 8 GPUs running data-parallel fp16 training
with ``NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL`` (so every collective call is
logged — the usual reason per-rank logs grow to gigabytes), stdout and stderr of
each rank redirected into one file.  The formats of several stacks are mixed on
purpose, so that every parser path of a log scanner is exercised:

* NCCL INFO: the communicator init block (bootstrap, topology, channels, rings,
  trees, NVLS, tuner, timings) and one ``COLL`` line per collective call, with
  ``opCount`` advancing identically on every rank;
* tqdm bars: the training bar on rank 0 (one ``\\r`` update per step, glued to
  whatever is printed next), and evaluation / dataset ``Map`` bars with hundreds
  of ``\\r``-separated updates on one physical line (``leave=False`` bars are
  cleared with ``\\r`` + spaces + ``\\r``, so the next text shares the line);
* Hugging Face Trainer metric dicts on rank 0 (written with ``tqdm.write``, i.e.
  after a ``\\r`` on the bar's line);
* DeepSpeed ``log_dist`` lines on rank 0: ``step=…, skipped=…`` every 10 steps,
  the throughput timer, checkpoint saves, and the benign warm-up
  ``[deepspeed] OVERFLOW! Rank 0 Skipping step…`` lines in the first 3 steps;
* Megatron ``iteration …`` lines on the last rank (``print_rank_last``), every step;
* Python warnings (with their ``  warnings.warn(`` echo line) at start-up and at
  every evaluation, and, now and then, a handled (harmless) traceback of a
  checkpoint-upload retry on rank 0;
* near the end, one fatal sequence: rank 3 raises ``torch.OutOfMemoryError`` in
  the forward pass (torch>=2.4 excepthook ``[rank3]: `` prefix); the other ranks,
  already blocked in the step's gradient all-reduce, log the NCCL watchdog
  timeout 10 minutes later (torch 2.5 style), then abort.

Memory use is constant: the files are written in lockstep, step by step, through
bounded per-rank buffers.  The same ``--seed`` and ``--size-mb`` always give
byte-identical files.

Usage::

    python -m bench.generate --size-mb 100 --out bench/data/100mb --seed 1
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import struct
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

GENERATOR_VERSION = 5
WORLD = 8
OOM_RANK = 3
HOST = "gpu-node-017"
STEP_SECONDS = 1.23
FLUSH_CHARS = 1 << 20  # per-rank buffer, characters
TAIL_RESERVE = 12_000  # bytes per rank kept for the fatal sequence
EVAL_EVERY = 100
CKPT_EVERY = 200
HF_LOG_EVERY = 10
DS_PRINT_EVERY = 10
TRAIN_ITERS = 1_000_000  # the planned run is far longer than the corpus
WATCHDOG_TIMEOUT_MS = 600_000
TORCH_SITE = "/usr/local/lib/python3.10/dist-packages"
MEGATRON = "/workspace/Megatron-DeepSpeed"

# ---------------------------------------------------------------------------
# small formatting helpers


def _ts_ds(t: float) -> str:
    """DeepSpeed / stdlib logging asctime: ``2024-12-18 20:17:21,426``."""
    d = datetime.fromtimestamp(t, tz=UTC)
    return f"{d:%Y-%m-%d %H:%M:%S},{d.microsecond // 1000:03d}"


def _ts_megatron(t: float) -> str:
    return f"{datetime.fromtimestamp(t, tz=UTC):%Y-%m-%d %H:%M:%S}"


def _c10(level: str, t: float, rng: random.Random, src: str, rank: int) -> str:
    """c10 logger prefix of torch>=2.4: ``[rank0]:[E1218 20:27:21.426415540 file:line] ``."""
    d = datetime.fromtimestamp(t, tz=UTC)
    md = d.month * 100 + d.day  # 3 digits from January to September
    # the fraction is CLOCK_MONOTONIC nanoseconds (boot-relative), not the wall clock's
    ns = (int((t + _MONO_OFFSET[rank]) * 1e9) + rng.randrange(1000)) % 10**9
    return f"[rank{rank}]:[{level}{md} {d:%H:%M:%S}.{ns:09d} {src}] "


def _fmt_interval(sec: float) -> str:
    """tqdm.format_interval: ``MM:SS`` or ``H:MM:SS``."""
    sec = int(sec)
    h, rem = divmod(sec, 3600)
    m, s = divmod(rem, 60)
    return f"{h:d}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


_MONO_OFFSET = [0.0] * 64  # per-rank boot offset of CLOCK_MONOTONIC, set by Rank()

_PARTIALS = " ▏▎▍▌▋▊▉"


def _bar10(frac: float) -> str:
    """tqdm's default 10-column unicode bar (file is not a terminal, so no ncols)."""
    frac = min(max(frac, 0.0), 1.0)
    full, rem = divmod(int(frac * 10 * 8), 8)
    if full >= 10:
        return "█" * 10
    return "█" * full + (_PARTIALS[rem] if rem else " ") + " " * (9 - full)


def _tqdm(n: int, total: int, elapsed: float, rate: float, desc: str = "", unit: str = "it") -> str:
    pct = 100.0 * n / total if total else 0.0
    remaining = (total - n) / rate if rate > 0 else 0.0
    rate_fmt = f"{rate:5.2f}{unit}/s" if rate >= 1 else f"{1 / rate:5.2f}s/{unit}"
    left = f"{desc}: " if desc else ""
    return (
        f"{left}{pct:3.0f}%|{_bar10(n / total)}| {n}/{total} "
        f"[{_fmt_interval(elapsed)}<{_fmt_interval(remaining)}, {rate_fmt}]"
    )


def _ptr(rng: random.Random) -> int:
    return 0x7F0000000000 + rng.randrange(0x10000000000) & ~0xFF


# ---------------------------------------------------------------------------
# per-rank output


class RankFile:
    """Buffered writer that counts bytes, physical lines and ``\\r`` segments."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fh = open(path, "wb")  # noqa: SIM115 - closed in close()
        self.parts: list[str] = []
        self.pending = 0
        self.bytes = 0
        self.lines = 0
        self.cr = 0
        self.kinds: dict[str, int] = {}  # physical lines written per kind of content (the mix)
        self.nccl = True  # False in the mixes without NCCL INFO

    def w(self, s: str, kind: str = "other") -> None:
        self.kinds[kind] = self.kinds.get(kind, 0) + s.count("\n")
        self.parts.append(s)
        self.pending += len(s)
        if self.pending >= FLUSH_CHARS:
            self.flush()

    def size(self) -> int:
        return self.bytes + self.pending

    def flush(self) -> None:
        if not self.parts:
            return
        data = "".join(self.parts).encode("utf-8")
        self.parts.clear()
        self.pending = 0
        self.bytes += len(data)
        self.lines += data.count(b"\n")
        self.cr += data.count(b"\r")
        self.fh.write(data)

    def close(self) -> None:
        self.flush()
        self.fh.close()


# ---------------------------------------------------------------------------
# the job model


class Bucket:
    __slots__ = ("count", "dtype", "op", "recv", "send")

    def __init__(self, op: str, count: int, dtype: int, send: int, recv: int) -> None:
        self.op, self.count, self.dtype, self.send, self.recv = op, count, dtype, send, recv


class Job:
    """Global (rank-independent) state; every rank derives its lines from it."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.rng = random.Random(f"rankwatch-bench:{seed}:job")
        r = self.rng
        self.t0 = datetime(2024, 12, 18, 6, 0, 0, tzinfo=UTC).timestamp() + r.randrange(3600) + r.random()
        self.comm_id = r.getrandbits(64)
        self.pids = [r.randrange(2000, 60000) for _ in range(WORLD)]
        self.master_ip = f"10.{r.randrange(1, 250)}.{r.randrange(0, 250)}.{r.randrange(2, 250)}"
        self.bus_ids = ["18000", "2a000", "3a000", "5d000", "9a000", "ab000", "ba000", "db000"]
        self.op_count = 0  # NCCL opCount of the world communicator (same on every rank)
        self.seq = 0  # PyTorch's WorkNCCL SeqNum of the default PG
        self.loss_scale = 65536
        self.hysteresis = 2
        self.skipped = 0
        self.samples = 0
        self.gbs = 256
        self.lr_peak = 3.0e-4
        self.warmup = 2000
        # gradient buckets of ZeRO-1 / DDP-style reduction (fp16 grads)
        sizes = [r.randrange(4, 26) * 262144 for _ in range(r.randrange(14, 20))]
        self.n_grad = len(sizes)
        self.grad_counts = sizes
        # ZeRO-1 parameter all-gathers after the optimizer step (same on every rank)
        self.allgather_counts = [r.randrange(2, 14) * 1048576 for _ in range(r.randrange(3, 6))]
        self.step = 0
        self.t = self.t0

    def lr(self, step: int) -> float:
        if step < self.warmup:
            return self.lr_peak * step / self.warmup
        return self.lr_peak * 0.5 * (1 + math.cos(math.pi * min(1.0, (step - self.warmup) / 200_000)))

    def loss(self, step: int) -> float:
        base = 2.05 + 8.6 * math.exp(-step / 1800.0) + 0.35 * math.exp(-step / 25_000.0)
        return base * (1 + self.rng.gauss(0, 0.012))

    def grad_norm(self, step: int) -> float:
        g = 0.25 + 4.0 * math.exp(-step / 600.0) + abs(self.rng.gauss(0, 0.08))
        # a float32 tensor's .item(): printed by Python with all its binary digits
        return struct.unpack("f", struct.pack("f", g))[0]


class Rank:
    """Per-rank identity: pids, thread ids, pointers, its own jitter RNG."""

    def __init__(self, job: Job, rank: int, out: Path) -> None:
        self.rank = rank
        self.rng = random.Random(f"rankwatch-bench:{job.seed}:rank{rank}")
        r = self.rng
        self.pid = job.pids[rank]
        _MONO_OFFSET[rank] = r.random() * 1000
        self.tid_main = self.pid
        self.tid_init = self.pid + r.randrange(90, 400)
        self.tid_proxy = self.tid_init + r.randrange(3, 40)
        self.tid_service = self.tid_proxy + 1
        self.comm = 0x55D000000000 + (r.randrange(0x100000000) << 4)
        self.stream = 0x55D000000000 + (r.randrange(0x100000000) << 4)
        self.pfx = f"{HOST}:{self.pid}:{self.tid_main} [{rank}] NCCL INFO "
        self.pfx_init = f"{HOST}:{self.pid}:{self.tid_init} [{rank}] NCCL INFO "
        self.pfx_service = f"{HOST}:{self.pid}:{self.tid_service} [{rank}] NCCL INFO "
        grad_bufs = [_ptr(r) for _ in range(job.n_grad)]
        # one COLL line template per collective of a step; only opCount varies
        tail = f" root 0 comm 0x{self.comm:x} [nranks={WORLD}] stream 0x{self.stream:x}\n"
        self.step_colls: list[str] = []
        for cnt, buf in zip(job.grad_counts, grad_bufs, strict=True):
            self.step_colls.append(
                f"AllReduce: opCount %x sendbuff 0x{buf:x} recvbuff 0x{buf:x} count {cnt} datatype 6 op 0{tail}"
            )
        self.n_async = len(self.step_colls)  # collectives enqueued before the first host sync
        # overflow check (MAX of one float), grad-norm (SUM), ZeRO-1 param all-gathers, loss average
        ov = _ptr(r)
        self.step_colls.append(
            f"AllReduce: opCount %x sendbuff 0x{ov:x} recvbuff 0x{ov:x} count 1 datatype 7 op 2{tail}"
        )
        gn = _ptr(r)
        self.step_colls.append(
            f"AllReduce: opCount %x sendbuff 0x{gn:x} recvbuff 0x{gn:x} count 1 datatype 7 op 0{tail}"
        )
        for cnt in job.allgather_counts:  # the schedule is the job's; only the pointers are per rank
            s, d = _ptr(r), _ptr(r)
            self.step_colls.append(
                f"AllGather: opCount %x sendbuff 0x{s:x} recvbuff 0x{d:x} count {cnt} datatype 6 op 0{tail}"
            )
        lb = _ptr(r)
        self.step_colls.append(
            f"AllReduce: opCount %x sendbuff 0x{lb:x} recvbuff 0x{lb:x} count 2 datatype 7 op 0{tail}"
        )
        self.barrier = (
            f"AllReduce: opCount %x sendbuff 0x{lb:x} recvbuff 0x{lb:x} count 1 datatype 7 op 0{tail}"
        )
        self.f = RankFile(out / f"rank{rank}.log")
        self.train_bar_open = False
        self.train_bar_start = 0.0


# ---------------------------------------------------------------------------
# content blocks


def nccl_init(job: Job, rk: Rank, t: float) -> None:
    if not rk.f.nccl:
        return

    def w(s: str) -> None:
        rk.f.w(s, "nccl")

    p, pi, r = rk.pfx, rk.pfx_init, rk.rng
    rank = rk.rank
    w(f"{p}Bootstrap : Using eth0:{job.master_ip}<0>\n")
    w(f"{p}cudaDriverVersion 12040\n")
    w(f"{p}NCCL version 2.21.5+cuda12.4\n")
    w(f"{pi}NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.\n")
    w(f"{pi}Failed to open libibverbs.so[.1]\n")
    w(f"{pi}NET/Socket : Using [0]eth0:{job.master_ip}<0>\n")
    w(f"{pi}Using non-device net plugin version 0\n")
    w(f"{pi}Using network Socket\n")
    bus = job.bus_ids[rank]
    commid = f"0x{job.comm_id:x}"
    w(
        f"{pi}ncclCommInitRank comm 0x{rk.comm:x} rank {rank} nranks {WORLD} cudaDev {rank} "
        f"nvmlDev {rank} busId {bus} commId {commid} - Init START\n"
    )
    aff = "ffffffff,00000000,ffffffff" if rank < 4 else "00000000,ffffffff,00000000,ffffffff"
    w(f"{pi}Setting affinity for GPU {rank} to {aff}\n")
    w(f"{pi}NVLS multicast support is available on dev {rank}\n")
    w(
        f"{pi}comm 0x{rk.comm:x} rank {rank} nRanks {WORLD} nNodes 1 localRanks {WORLD} localRank {rank} MNNVL 0\n"
    )
    w(f"{pi}NVLS Head  0: " + " ".join(f"{i:2d}" for i in range(WORLD)) + "\n")
    ring = "   " + "   ".join(str(i) for i in range(WORLD))
    nch = 24
    for c in range(nch if rank == 0 else 0):
        w(f"{pi}Channel {c:02d}/{nch} :{ring}\n")
    nxt, prv = (rank + 1) % WORLD, (rank - 1) % WORLD
    trees = " ".join(f"[{c}] {nxt}/-1/-1->{rank}->{prv}" for c in range(nch))
    w(f"{pi}Trees {trees}\n")
    w(f"{pi}P2P Chunksize set to 524288\n")
    for c in range(nch):
        w(f"{pi}Channel {c:02d}/0 : {rank}[{rank}] -> {nxt}[{nxt}] via P2P/CUMEM/read\n")
    w(f"{pi}Connected all rings\n")
    for c in range(nch):
        w(f"{pi}Channel {c:02d}/0 : {rank}[{rank}] -> {prv}[{prv}] via P2P/CUMEM/read\n")
    w(f"{pi}Connected all trees\n")
    w(
        f"{pi}NVLS comm 0x{rk.comm:x} headRank {rank} nHeads {WORLD} buffSize 1048576 memSize 2097152 "
        f"nvlsPerRankSize 201326592 nvlsTotalSize 1610612736\n"
    )
    w(f"{pi}Connected NVLS\n")
    w(f"{pi}threadThresholds 8/8/64 | 64/8/64 | 512 | 512\n")
    w(
        f"{pi}24 coll channels, 24 collnet channels, 16 nvls channels, 32 p2p channels, 32 p2p channels per peer\n"
    )
    w(
        f"{pi}TUNER/Plugin: Plugin load returned 2 : libnccl-net.so: cannot open shared object file: "
        f"No such file or directory : when loading libnccl-tuner.so\n"
    )
    w(f"{pi}TUNER/Plugin: Using internal tuner plugin.\n")
    w(
        f"{pi}ncclCommInitRank comm 0x{rk.comm:x} rank {rank} nranks {WORLD} cudaDev {rank} nvmlDev {rank} "
        f"busId {bus} commId {commid} - Init COMPLETE\n"
    )
    tot = 0.9 + r.random() * 0.6
    w(
        f"{pi}Init timings: rank {rank} nranks {WORLD} total {tot:.2f} (kernels 0.{r.randrange(10, 30)}, "
        f"alloc 0.0{r.randrange(1, 9)}, bootstrap 0.0{r.randrange(1, 9)}, allgathers 0.00, "
        f"topo 0.{r.randrange(30, 50)}, graphs 0.0{r.randrange(1, 4)}, connections 0.{r.randrange(10, 30)}, "
        f"rest 0.0{r.randrange(1, 9)})\n"
    )


def startup_python(job: Job, rk: Rank, t: float) -> None:
    w = rk.f.w
    w(
        f"{TORCH_SITE}/torch/utils/checkpoint.py:295: FutureWarning: `torch.cpu.amp.autocast(args...)` is "
        "deprecated. Please use `torch.amp.autocast('cpu', args...)` instead.\n"
        "  with torch.enable_grad(), device_autocast_ctx, torch.cpu.amp.autocast(**ctx.cpu_autocast_kwargs):"
        "  # type: ignore[attr-defined]\n"
    )
    w(
        f"{MEGATRON}/megatron/model/fused_layer_norm.py:61: UserWarning: TypedStorage is deprecated. It will be "
        "removed in the future and UntypedStorage will be the only storage class. This should only matter to you "
        "if you are using storages directly.  To access UntypedStorage directly, use tensor.untyped_storage() "
        "instead of tensor.storage()\n"
        "  warnings.warn(\n"
    )
    if rk.rank == 0:
        ts = _ts_ds(t)
        w(
            f"[{ts}] [INFO] [real_accelerator.py:219:get_accelerator] Setting ds_accelerator to cuda (auto detect)\n"
        )
        w(
            f"[{ts}] [INFO] [logging.py:128:log_dist] [Rank 0] DeepSpeed info: version=0.15.4, git-hash=unknown, "
            "git-branch=unknown\n"
        )
        w(f"[{ts}] [INFO] [logging.py:128:log_dist] [Rank 0] Creating torch.float16 ZeRO stage 1 optimizer\n")
        w(f"[{ts}] [INFO] [config.py:1005:print] DeepSpeedEngine configuration:\n")
        for k, v in (
            ("bfloat16_enabled", "False"),
            (
                "dynamic_loss_scale_args",
                "{'init_scale': 65536, 'scale_window': 1000, 'delayed_shift': 2, "
                "'consecutive_hysteresis': False, 'min_scale': 1}",
            ),
            ("fp16_enabled", "True"),
            ("gradient_clipping", "1.0"),
            ("initial_dynamic_scale", "65536"),
            ("loss_scale", "0"),
            ("steps_per_print", str(DS_PRINT_EVERY)),
            ("train_batch_size", str(job.gbs)),
            ("zero_optimization_stage", "1"),
        ):
            w(f"[{ts}] [INFO] [config.py:1005:print]   {k} {'.' * (29 - len(k))} {v}\n")
        # datasets.map progress: hundreds of \r updates on one physical line
        total = 10_000 * (1 + rk.rng.randrange(4))
        n, el = 0, 0.0
        rate = 2900.0 + rk.rng.random() * 600
        segs = []
        while n < total:
            n = min(total, n + int(rate * 0.1 * (0.8 + 0.4 * rk.rng.random())) + 1)
            el += 0.1
            cur = rate * (0.9 + 0.2 * rk.rng.random())
            segs.append("\r" + _tqdm(n, total, el, cur, "Map (num_proc=8)", " examples"))
        w("".join(segs) + "\n")
    if rk.rank == WORLD - 1:
        w("------------------------ arguments ------------------------\n")
        for k, v in (
            ("bf16", "False"),
            ("fp16", "True"),
            ("global_batch_size", str(job.gbs)),
            ("initial_loss_scale", "65536.0"),
            ("log_interval", "1"),
            ("lr", str(job.lr_peak)),
            ("params_dtype", "torch.float16"),
            ("train_iters", str(TRAIN_ITERS)),
            ("world_size", str(WORLD)),
        ):
            w(f"  {k} {'.' * (48 - len(k))} {v}\n")
        w("-------------------- end of arguments ---------------------\n")
        w("using torch.float16 for parameters ...\n")


def collectives(job: Job, rk: Rank, first: int, lines: list[str], upto: int | None = None) -> None:
    """Append the COLL lines of one step, starting at opCount ``first``."""
    if not rk.f.nccl:
        return
    w, p = rk.f.w, rk.pfx
    for i, tpl in enumerate(lines if upto is None else lines[:upto]):
        w(p + (tpl % (first + i)), "nccl")


def train_bar_update(job: Job, rk: Rank, step: int, t: float) -> None:
    """Rank 0's HF training bar: one ``\\r`` update per step, no newline (next text glues on)."""
    if not rk.train_bar_open:
        rk.train_bar_open = True
        rk.train_bar_start = t
    el = t - job.t0
    rate = step / el if el > 0 else 1.0
    rk.f.w("\r" + _tqdm(step, TRAIN_ITERS, el, rate))


def hf_log(job: Job, rk: Rank, step: int, loss: float, gn: float) -> None:
    """``tqdm.write(str(logs))``: clear the bar on its line, then print the dict."""
    epoch = step * job.gbs / 2_400_000
    lr = job.lr(step)
    d = {"loss": round(loss, 4), "grad_norm": gn, "learning_rate": float(f"{lr:.3g}"), "epoch": epoch}
    rk.f.w("\r" + " " * 78 + "\r" + str(d) + "\n", "metrics")


def eval_block(job: Job, rk: Rank, step: int, t: float) -> None:
    """Per-rank evaluation bar (leave=False): many \\r updates, cleared at the end."""
    r = rk.rng
    w = rk.f.w
    w(
        f"{TORCH_SITE}/torch/utils/data/dataloader.py:617: UserWarning: This DataLoader will create 16 worker "
        "processes in total. Our suggested max number of worker in current system is 12, which is smaller than "
        "what this DataLoader is going to create. Please be aware that excessive worker creation might get "
        "DataLoader running slow or even freeze, lower the worker number to avoid potential slowness/freeze if "
        "necessary.\n"
        "  warnings.warn(\n",
        "logging",
    )
    total = 200 + r.randrange(200)
    rate = 6.0 + r.random() * 3
    segs = []
    last = 0
    for n in range(1, total + 1):
        el = n / rate
        if n != total and int(el * 10) == last:  # mininterval 0.1 s
            continue
        last = int(el * 10)
        segs.append("\r" + _tqdm(n, total, el, rate, f"Evaluating (rank {rk.rank})"))
    segs.append("\r" + " " * 70 + "\r")
    w("".join(segs))
    # the gather at the end of evaluation, then the result line shares the cleared bar's line
    first = job.op_count
    if rk.f.nccl:
        w(rk.pfx + (rk.barrier % first), "nccl")
    if rk.rank == WORLD - 1:
        ppl = math.exp(min(20.0, job.loss(step)))
        w("-" * 99 + "\n")
        w(
            f" validation loss at iteration {step} | lm loss value: {math.log(ppl):.6E} | lm loss PPL: {ppl:.6E} | \n"
        )
        w("-" * 99 + "\n")


def checkpoint_block(job: Job, rk: Rank, step: int, t: float, upload_fails: bool) -> None:
    w = rk.f.w
    ts = _ts_ds(t)
    first = job.op_count
    if rk.f.nccl:
        w(rk.pfx + (rk.barrier % first), "nccl")
    if rk.rank == WORLD - 1:
        w(f"saving checkpoint at iteration {step:7d} to /checkpoints/gpt-1.3b\n")
    if rk.rank == 0:
        path = f"/checkpoints/gpt-1.3b/global_step{step}"
        w(
            f"[{ts}] [INFO] [logging.py:128:log_dist] [Rank 0] [Torch] Checkpoint global_step{step} is about "
            "to be saved!\n"
        )
        w(
            f"[{ts}] [INFO] [torch_checkpoint_engine.py:21:save] [Torch] Saving {path}/mp_rank_00_model_states.pt...\n"
        )
        w(
            f"[{ts}] [INFO] [torch_checkpoint_engine.py:23:save] [Torch] Saved {path}/mp_rank_00_model_states.pt.\n"
        )
    w(
        f"[{ts}] [INFO] [torch_checkpoint_engine.py:21:save] [Torch] Saving /checkpoints/gpt-1.3b/global_step{step}/"
        f"zero_pp_rank_{rk.rank}_mp_rank_00_optim_states.pt...\n"
    )
    w(
        f"[{ts}] [INFO] [torch_checkpoint_engine.py:23:save] [Torch] Saved /checkpoints/gpt-1.3b/global_step{step}/"
        f"zero_pp_rank_{rk.rank}_mp_rank_00_optim_states.pt.\n"
    )
    if rk.rank == WORLD - 1:
        w(
            f"  successfully saved checkpoint from iteration {step:7d} to /checkpoints/gpt-1.3b [ t 1/1, p 1/1 ]\n"
        )
    if rk.rank == 0 and upload_fails:
        # a handled exception, logged with logger.exception by a side-car uploader: harmless
        w(
            f"[{ts}] [WARNING] [ckpt_sync.py:88:_put] upload of global_step{step}/mp_rank_00_model_states.pt "
            "failed (attempt 1/5), retrying in 4s\n"
            "Traceback (most recent call last):\n"
            '  File "/workspace/tools/ckpt_sync.py", line 81, in _put\n'
            "    resp = self.session.put(url, data=fh, timeout=60)\n"
            '  File "/usr/local/lib/python3.10/dist-packages/requests/sessions.py", line 649, in put\n'
            '    return self.request("PUT", url, data=data, **kwargs)\n'
            '  File "/usr/local/lib/python3.10/dist-packages/requests/adapters.py", line 501, in send\n'
            "    raise ConnectionError(err, request=request)\n"
            "requests.exceptions.ConnectionError: ('Connection aborted.', ConnectionResetError(104, "
            "'Connection reset by peer'))\n"
            f"[{_ts_ds(t + 4.2)}] [INFO] [ckpt_sync.py:95:_put] upload of global_step{step}/"
            "mp_rank_00_model_states.pt succeeded (attempt 2/5)\n"
        )


def deepspeed_step(job: Job, rk: Rank, step: int, t: float) -> None:
    w = rk.f.w
    lr = job.lr(step)
    w(
        f"[{_ts_ds(t)}] [INFO] [logging.py:128:log_dist] [Rank 0] step={step}, skipped={job.skipped}, "
        f"lr=[{lr:.10g}], mom=[(0.9, 0.95)]\n"
    )
    cur = job.gbs / STEP_SECONDS * (0.97 + 0.06 * rk.rng.random())
    mem = 21.3 + rk.rng.random() * 0.2
    w(
        f"[{_ts_ds(t + 0.001)}] [INFO] [timer.py:260:stop] epoch=0/micro_step={step * 4}/global_step={step}, "
        f"RunningAvgSamplesPerSec={job.gbs / STEP_SECONDS:.10g}, CurrSamplesPerSec={cur:.10g}, "
        f"MemAllocated={mem:.2f}GB, MaxMemAllocated=38.02GB\n",
        "metrics",
    )


def megatron_line(job: Job, rk: Rank, step: int, t: float, loss: float, gn: float, skipped: bool) -> None:
    ms = STEP_SECONDS * 1000 * (0.97 + 0.06 * rk.rng.random())
    parts = [
        f" [{_ts_megatron(t)}] iteration {step:8d}/{TRAIN_ITERS:8d} |",
        f" consumed samples: {job.samples:12d} |",
        f" elapsed time per iteration (ms): {ms:.1f} |",
        f" learning rate: {job.lr(step):.6E} |",
        f" global batch size: {job.gbs:5d} |",
    ]
    if not skipped:
        parts.append(f" lm loss: {loss:.6E} |")
    parts.append(f" loss scale: {float(job.loss_scale):.1f} |")
    if not skipped:
        parts.append(f" grad norm: {gn:.3f} |")
    parts.append(f" number of skipped iterations: {int(skipped):3d} |")
    parts.append(f" number of nan iterations: {0:3d} |")
    rk.f.w("".join(parts) + "\n", "metrics")


def overflow_line(job: Job, rk: Rank, t: float) -> bool:
    """DeepSpeed DynamicLossScaler.update_scale on an overflow; returns True when the scale dropped."""
    ts = _ts_ds(t)
    if job.hysteresis > 1:
        rk.f.w(
            f"[{ts}] [INFO] [loss_scaler.py:190:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. "
            f"Attempted loss scale: {job.loss_scale}, but hysteresis is {job.hysteresis}. Reducing hysteresis "
            f"to {job.hysteresis - 1}\n",
            "metrics",
        )
        return False
    rk.f.w(
        f"[{ts}] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. "
        f"Attempted loss scale: {job.loss_scale}, reducing to {job.loss_scale // 2}\n",
        "metrics",
    )
    return True


# ---------------------------------------------------------------------------
# the noisy mix: what real jobs add around the metrics (MIXES["noisy"])

_LOGGERS = (
    ("data.streaming", "shard {a:05d}: prefetched {b} samples in {c:.2f}s (queue {d}/8)"),
    ("data.tokenizer", "packed {b} sequences ({a} tokens), {c:.1f}% padding"),
    ("utils.memory", "host memory: rss {c:.1f} GiB, page cache {d}.{a:03d} GiB, pinned 2.00 GiB"),
    ("trainer.callbacks", "on_step_end: {d} callbacks in {c:.3f}s"),
    ("checkpoint.async", "background writer idle, {d} pending shards, last flush {c:.1f}s ago"),
    ("data.sampler", "rank-local sampler at index {a} of {b} (epoch 0, seed 1234)"),
)
_STDLIB_NOISE = (
    "INFO:datasets.iterable_dataset:Resolving shard {a} of {b} in streaming mode",
    "INFO:torch.distributed.checkpoint:Rank-local plan has {d} items ({a} bytes)",
    "WARNING:transformers.modeling_utils:`use_cache=True` is incompatible with gradient checkpointing. "
    "Setting `use_cache=False`.",
)


def noisy_step(job: Job, rk: Rank, step: int, t: float, loss: float, gn: float, mix: str) -> None:
    """One step's worth of a real job's chatter on one rank: per-rank tqdm fragments, python
    logging, DeepSpeed timers, a repeating UserWarning, and this rank's own metric line."""
    r = rk.rng
    w = rk.f.w
    ts = _ts_ds(t)
    # per-rank micro-batch bar: each physical line holds 1-3 \r updates (~12 % of the lines)
    mb = 16
    frags = []
    n = 0
    for _ in range(5 + (r.random() < 0.5)):
        parts = []
        for _ in range(1 + r.randrange(3)):
            n = min(mb, n + 1 + r.randrange(2))
            parts.append("\r" + _tqdm(n, mb, n * 0.077, 13.0 + r.random(), f"rank {rk.rank} micro-batches"))
        frags.append("".join(parts) + "\n")
    w("".join(frags), "tqdm")
    # python logging, stdlib logging, DeepSpeed timers (~26 %)
    out = []
    for _ in range(4):
        name, msg = _LOGGERS[r.randrange(len(_LOGGERS))]
        text = msg.format(a=r.randrange(100000), b=r.randrange(1, 65536), c=r.random() * 9, d=r.randrange(1, 9))
        out.append(f"{ts} - INFO - {name} - {text}\n")
    for _ in range(2):
        tpl = _STDLIB_NOISE[r.randrange(len(_STDLIB_NOISE))]
        out.append(tpl.format(a=r.randrange(100000), b=r.randrange(1, 4096), d=r.randrange(1, 64)) + "\n")
    f, b = 110 + r.random() * 20, 230 + r.random() * 30
    out.append(
        f"[{ts}] [INFO] [logging.py:128:log_dist] [Rank {rk.rank}] time (ms) | fwd_microstep: {f:.2f} | "
        f"bwd_microstep: {b:.2f} | bwd_inner_microstep: {b - 11:.2f} | bwd_allreduce_microstep: 10.{r.randrange(100):02d} "
        f"| step_microstep: {14 + r.random():.2f}\n"
    )
    out.append(
        f"[{ts}] [INFO] [logging.py:128:log_dist] [Rank {rk.rank}] time (ms) | fwd: {f * 4:.2f} | "
        f"bwd: {b * 4:.2f} | bwd_inner: {(b - 11) * 4:.2f} | bwd_allreduce: {40 + r.random():.2f} | step: {58 + r.random():.2f}\n"
    )
    out.append(f"[{ts}] [INFO] [timer.py:264:log] rank={rk.rank} time (ms) | optimizer_step: {12 + r.random():.2f}\n")
    out.append(
        f"{TORCH_SITE}/torch/utils/checkpoint.py:87: UserWarning: None of the inputs have requires_grad=True. "
        "Gradients will be None\n  warnings.warn(\n"
    )
    if r.random() < 0.5:
        out.append(f"{ts} - DEBUG - trainer.hooks - step {step}: {r.randrange(3, 9)} hooks ran\n")
    w("".join(out), "logging")
    # this rank's own metric line (a custom loop's logger.info), ~1 per rank-step (~3 % with the rest)
    own = loss * (1 + 0.004 * (r.random() - 0.5))
    w(
        f"{ts} - INFO - train - step {step}/{TRAIN_ITERS} | loss {own:.4f} | grad_norm {gn:.4f} | "
        f"loss_scale {float(job.loss_scale):.1f} | lr {job.lr(step):.3e} | {STEP_SECONDS:.2f} s/step\n",
        "metrics",
    )


# ---------------------------------------------------------------------------
# the fatal ending


def _oom_traceback(job: Job, rk: Rank, t: float) -> None:
    r = rk.rng
    pre = f"[rank{rk.rank}]: "
    frames = [
        (f"{MEGATRON}/pretrain_gpt.py", 356, "<module>", "pretrain(train_valid_test_datasets_provider,"),
        (f"{MEGATRON}/megatron/training.py", 222, "pretrain", "iteration = train(forward_step_func,"),
        (f"{MEGATRON}/megatron/training.py", 1265, "train", "train_step(forward_step_func,"),
        (f"{MEGATRON}/megatron/training.py", 676, "train_step", "losses_reduced = forward_backward_func("),
        (
            f"{MEGATRON}/megatron/core/pipeline_parallel/schedules.py",
            329,
            "forward_backward_no_pipelining",
            "output_tensor = forward_step(",
        ),
        (
            f"{MEGATRON}/megatron/core/pipeline_parallel/schedules.py",
            183,
            "forward_step",
            "output_tensor, loss_func = forward_step_func(data_iterator, model)",
        ),
        (
            f"{MEGATRON}/pretrain_gpt.py",
            278,
            "forward_step",
            "output_tensor, other_losses = model(tokens, position_ids, attention_mask,",
        ),
        (
            f"{TORCH_SITE}/torch/nn/modules/module.py",
            1736,
            "_wrapped_call_impl",
            "return self._call_impl(*args, **kwargs)",
        ),
        (
            f"{TORCH_SITE}/torch/nn/modules/module.py",
            1747,
            "_call_impl",
            "return forward_call(*args, **kwargs)",
        ),
        (
            f"{TORCH_SITE}/deepspeed/runtime/engine.py",
            1899,
            "forward",
            "loss = self.module(*inputs, **kwargs)",
        ),
        (f"{MEGATRON}/megatron/model/transformer.py", 1772, "forward", "hidden_states, moe_loss = layer("),
        (f"{MEGATRON}/megatron/model/transformer.py", 561, "forward", "attention_scores = torch.baddbmm("),
    ]
    w = rk.f.w
    w(pre + "Traceback (most recent call last):\n")
    for path, line, fn, code in frames:
        w(f'{pre}  File "{path}", line {line}, in {fn}\n')
        w(f"{pre}    {code}\n")
    free = r.randrange(80, 900)
    in_use = 79.10 - free / 1024
    alloc = in_use - 2.0 - r.random()
    w(
        f"{pre}torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU {rk.rank} has a total "
        f"capacity of 79.10 GiB of which {free:.2f} MiB is free. Including non-PyTorch memory, this process has "
        f"{in_use:.2f} GiB memory in use. Of the allocated memory {alloc:.2f} GiB is allocated by PyTorch, and "
        f"{in_use - alloc - 0.6:.2f} GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory "
        "is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
        "documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n"
    )
    w(
        _c10("W", t + 0.8, r, "ProcessGroupNCCL.cpp:1250", rk.rank)
        + "Warning: WARNING: process group has NOT been destroyed before we destruct ProcessGroupNCCL. On normal "
        "program exit, the application should call destroy_process_group to ensure that any pending NCCL "
        "operations have finished in this process. In rare cases this process can exit before this point and "
        "block the progress of another member of the process group. This constraint has always been present,  "
        "but this warning has only been added since PyTorch 2.4 (function operator())\n"
    )


def _watchdog_timeout(job: Job, rk: Rank, t: float, seq: int, numel: int, first: int) -> None:
    r = rk.rng
    w = rk.f.w
    n = rk.rank
    elapsed = WATCHDOG_TIMEOUT_MS + r.randrange(20, 120)
    work = (
        f"WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn={numel}, NumelOut={numel}, "
        f"Timeout(ms)={WATCHDOG_TIMEOUT_MS})"
    )
    caught = f"[Rank {n}] Watchdog caught collective operation timeout: {work} ran for {elapsed} milliseconds before timing out."
    pg = f"[PG ID 0 PG GUID 0(default_pg) Rank {n}] "
    w(_c10("E", t, r, "ProcessGroupNCCL.cpp:616", n) + caught + "\n")
    w(
        _c10("E", t, r, "ProcessGroupNCCL.cpp:1785", n)
        + f"{pg}Exception (either an error or timeout) detected by "
        f"watchdog at work: {seq}, last enqueued NCCL work: {seq + job.n_grad - 1}, last completed NCCL work: {seq - 1}.\n"
    )
    who = "this local rank" if n == first else f" rank {first}"
    w(
        _c10("E", t + 0.001, r, "ProcessGroupNCCL.cpp:1834", n)
        + f"{pg}Timeout at NCCL work: {seq}, last enqueued NCCL "
        f"work: {seq + job.n_grad - 1}, last completed NCCL work: {seq - 1}.\n"
    )
    w(
        _c10("E", t + 0.002, r, "ProcessGroupNCCL.cpp:1551", n)
        + f"{pg}Received a dump signal due to a collective "
        f"timeout from {who} and we will try our best to dump the debug info. Last enqueued NCCL work: "
        f"{seq + job.n_grad - 1}, last completed NCCL work: {seq - 1}.This is most likely caused by incorrect usages of "
        "collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the "
        "scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other "
        "reasons such as network errors or bugs in the communications library (e.g. NCCL), etc. \n"
    )
    w(
        _c10("E", t + 0.003, r, "ProcessGroupNCCL.cpp:1595", n)
        + f"{pg}ProcessGroupNCCL preparing to dump debug info.\n"
    )
    w(
        _c10("E", t + 0.004, r, "ProcessGroupNCCL.cpp:630", n)
        + f"[Rank {n}] Some NCCL operations have failed or "
        "timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on "
        "corrupted/incomplete data.\n"
    )
    w(
        _c10("E", t + 0.004, r, "ProcessGroupNCCL.cpp:636", n)
        + f"[Rank {n}] To avoid data inconsistency, we are "
        "taking the entire process down.\n"
    )
    what = f"{pg}Process group watchdog thread terminated with exception: {caught}"
    w(_c10("E", t + 0.005, r, "ProcessGroupNCCL.cpp:1595", n) + what + "\n")
    base = 0x7F00_0000_0000 + (r.randrange(0x100000) << 12)
    frames = [
        ("c10::Error::Error(c10::SourceLocation, std::string) + 0x96", "libc10.so"),
        (
            "c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, "
            "std::ratio<1l, 1000l> > >) + 0x1d2",
            "libtorch_cuda.so",
        ),
        ("c10d::ProcessGroupNCCL::watchdogHandler() + 0x233", "libtorch_cuda.so"),
        ("c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x14d", "libtorch_cuda.so"),
        ("<unknown function> + 0x145c0", "libtorch.so"),
        ("<unknown function> + 0x94ac3", "/lib/x86_64-linux-gnu/libc.so.6"),
        ("<unknown function> + 0x126850", "/lib/x86_64-linux-gnu/libc.so.6"),
    ]

    def stack(at: str) -> None:
        w(
            f"Exception raised from {at} at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:618 (most recent call first):\n"
        )
        for i, (fn, lib) in enumerate(frames):
            where = lib if lib.startswith("/") else f"{TORCH_SITE}/torch/lib/{lib}"
            w(f"frame #{i}: {fn} (0x{base + i * 0x1F3A8:x} in {where})\n")
        w("\n")

    stack("checkTimeout")
    w("terminate called after throwing an instance of 'c10::DistBackendError'\n")
    w(f"  what():  {what}\n")
    stack("checkTimeout")
    w(
        "Exception raised from ncclCommWatchdog at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1601 "
        "(most recent call first):\n"
    )
    w(
        f"frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x{base:x} in "
        f"{TORCH_SITE}/torch/lib/libc10.so)\n"
    )
    w(
        f"frame #1: <unknown function> + 0xe5c6fc (0x{base + 0x5C6FC:x} in {TORCH_SITE}/torch/lib/libtorch_cuda.so)\n"
    )
    w("\n")


def fatal_sequence(job: Job, ranks: list[Rank], step: int) -> None:
    """Rank 3 OOMs in the forward of ``step``; the others hang in its gradient all-reduce."""
    t_oom = job.t + 0.35
    seq = job.seq + 1  # the first gradient bucket of the step
    numel = job.grad_counts[0]
    survivors = [rk for rk in ranks if rk.rank != OOM_RANK]
    first = job.rng.choice(survivors).rank  # first to time out: signals the dump to the others
    for rk in ranks:
        if rk.rank == OOM_RANK:
            _oom_traceback(job, rk, t_oom)
            continue
        # the async bucket all-reduces of this step were enqueued, then the rank blocked on the
        # overflow check's host sync
        collectives(job, rk, job.op_count, rk.step_colls, upto=rk.n_async)
        if abs(rk.rank - OOM_RANK) == 1:
            rk.f.w(f"{rk.pfx_service}[Service thread] Connection closed by localRank {OOM_RANK}\n")
        t_to = (
            t_oom + WATCHDOG_TIMEOUT_MS / 1000 + (0.0 if rk.rank == first else 0.05 + rk.rng.random() * 0.4)
        )
        _watchdog_timeout(job, rk, t_to, seq, numel, first)


# ---------------------------------------------------------------------------
# driver


MIXES = {
    # ~98 % NCCL INFO (NCCL_DEBUG_SUBSYS=INIT,COLL): the original corpus
    "nccl": {"nccl": True, "noisy": False},
    # a real job with NCCL_DEBUG=INFO: ~55 % NCCL INFO, ~12 % tqdm fragments, ~26 % other
    # logging, ~3 % metric and overflow lines, rare tracebacks and the fatal lines
    "noisy": {"nccl": True, "noisy": True},
    # the same job without NCCL_DEBUG
    "noisy-nonccl": {"nccl": False, "noisy": True},
}


def generate(out: Path, size_mb: float, seed: int = 1, quiet: bool = False, mix: str = "nccl") -> dict:
    if mix not in MIXES:
        raise SystemExit(f"--mix must be one of {', '.join(MIXES)}")
    cfg = MIXES[mix]
    if not 1 <= size_mb <= 4096:
        raise SystemExit("--size-mb must be between 1 and 4096 (10 to 1024 is the supported range)")
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("rank*.log"):
        old.unlink()
    manifest_path(out).unlink(missing_ok=True)
    target_rank = int(size_mb * 1_000_000 / WORLD)
    job = Job(seed)
    ranks = [Rank(job, r, out) for r in range(WORLD)]
    for rk in ranks:
        rk.f.nccl = bool(cfg["nccl"])
    t_start = time.perf_counter()

    for rk in ranks:
        startup_python(job, rk, job.t)
        nccl_init(job, rk, job.t)

    ckpt_rng = random.Random(f"rankwatch-bench:{seed}:ckpt")
    step = 0
    last_report = t_start
    while True:
        step += 1
        job.step = step
        job.t += STEP_SECONDS * (0.98 + 0.04 * job.rng.random())
        if sum(rk.f.size() for rk in ranks) / WORLD >= target_rank - TAIL_RESERVE and step > 20:
            break
        loss = job.loss(step)
        gn = job.grad_norm(step)
        overflow = step <= 3  # benign warm-up overflows of the fp16 dynamic loss scaler
        first_op = job.op_count
        for rk in ranks:
            if rk.rank == 0:
                train_bar_update(job, rk, step, job.t)
            collectives(job, rk, first_op, rk.step_colls)
        job.op_count += len(ranks[0].step_colls)
        job.seq += len(ranks[0].step_colls)  # one c10d work per collective
        if overflow:
            job.skipped += 1
            dropped = overflow_line(job, ranks[0], job.t)
            if dropped:
                job.loss_scale //= 2
            else:
                job.hysteresis -= 1
        if step == 1:
            for rk in ranks:
                rk.f.w(
                    f"{TORCH_SITE}/torch/optim/lr_scheduler.py:224: UserWarning: Detected call of "
                    "`lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, you should call "
                    "them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  Failure to do "
                    "this will result in PyTorch skipping the first value of the learning rate schedule. See more "
                    "details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate\n"
                    "  warnings.warn(\n"
                )
        job.samples += job.gbs
        megatron_line(job, ranks[-1], step, job.t, loss, gn, overflow)
        if cfg["noisy"]:
            for rk in ranks:
                noisy_step(job, rk, step, job.t, loss, gn, mix)
        if step % DS_PRINT_EVERY == 0:
            deepspeed_step(job, ranks[0], step, job.t)
        if step % (1 if cfg["noisy"] else HF_LOG_EVERY) == 0:
            hf_log(job, ranks[0], step, loss, gn)
        if step % EVAL_EVERY == 0:
            for rk in ranks:
                eval_block(job, rk, step, job.t)
            job.op_count += 1
            job.seq += 1
            job.t += 45.0
        if step % CKPT_EVERY == 0:
            fails = ckpt_rng.random() < 0.4
            for rk in ranks:
                checkpoint_block(job, rk, step, job.t, fails)
            job.op_count += 1
            job.seq += 1
            job.t += 20.0
        if not quiet and time.perf_counter() - last_report > 5:
            last_report = time.perf_counter()
            done = sum(rk.f.size() for rk in ranks) / (target_rank * WORLD)
            print(f"  generating {out}: {100 * done:5.1f}% (step {step})", file=sys.stderr)

    fatal_sequence(job, ranks, step)
    for rk in ranks:
        rk.f.close()

    files = []
    for rk in ranks:
        files.append({"path": rk.f.path.name, "bytes": rk.f.bytes, "lines": rk.f.lines, "cr": rk.f.cr})
    kinds: dict[str, int] = {}
    for rk in ranks:
        for k, v in rk.f.kinds.items():
            kinds[k] = kinds.get(k, 0) + v
    total_lines = sum(kinds.values()) or 1
    manifest = {
        "generator_version": GENERATOR_VERSION,
        "mix": mix,
        "line_mix": {k: round(v / total_lines, 4) for k, v in sorted(kinds.items())},
        "seed": seed,
        "size_mb": size_mb,
        "world_size": WORLD,
        "bytes": sum(f["bytes"] for f in files),
        "lines": sum(f["lines"] for f in files),
        "cr_segments": sum(f["cr"] for f in files),
        "steps": step,
        "files": files,
        "expected": {
            "failure": "cuda_oom",
            "initiator_rank": OOM_RANK,
            "step": step,
            "collateral": "collective_timeout on ranks "
            + ",".join(str(r) for r in range(WORLD) if r != OOM_RANK),
        },
        "generate_seconds": round(time.perf_counter() - t_start, 2),
    }
    manifest_path(out).write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def manifest_path(out: Path) -> Path:
    return out.parent / f"{out.name}.manifest.json"


def load_manifest(out: Path, size_mb: float, seed: int, mix: str = "nccl") -> dict | None:
    """The manifest of ``out`` if it matches (generator version, seed, size) and every file is intact."""
    try:
        m = json.loads(manifest_path(out).read_text())
    except (OSError, ValueError):
        return None
    if (
        m.get("generator_version") != GENERATOR_VERSION
        or m.get("seed") != seed
        or m.get("size_mb") != size_mb
        or m.get("mix", "nccl") != mix
    ):
        return None
    files = m.get("files", [])
    if len(files) != m.get("world_size"):
        return None
    for f in files:
        p = out / f["path"]
        if not p.is_file() or p.stat().st_size != f["bytes"]:
            return None
    return m


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.generate", description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=float, default=10, help="total size of the 8 files in MB (10 to 1024)")
    ap.add_argument("--out", type=Path, required=True, help="target directory (rank0.log … rank7.log)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mix", default="noisy", choices=sorted(MIXES), help="what the job logs (default noisy)")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    m = generate(a.out, a.size_mb, a.seed, a.quiet, a.mix)
    print(
        f"wrote {a.out}: {m['bytes'] / 1e6:.1f} MB, {m['lines']} lines, {m['cr_segments']} \\r segments, "
        f"{m['steps']} steps in {m['generate_seconds']} s; line mix {m['line_mix']}"
    )
    return 0


if __name__ == "__main__":
    os.umask(0o022)
    sys.exit(main())
