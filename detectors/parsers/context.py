"""Job context → CONTEXT events: precision, loss scaling, GPU model, framework, world size.

Sources (log-formats.md §2.3, §3.3, §4.3, §5, §8.3): HF ``TrainingArguments`` dumps
(``fp16=True,``), DeepSpeed config dumps (``fp16_enabled ...... True``, ``"bf16":{``),
DeepSpeed optimizer creation lines, Megatron argument dumps (``bf16 ...... True``,
``params_dtype ...... torch.bfloat16``), accelerate (``Mixed precision type: fp16``),
Lightning (``Using 16bit ... Automatic Mixed Precision (AMP)``, ``Using bfloat16 ...``),
generic ``precision=fp16 loss_scaling=false world_size=4`` lines, GPU names (nvidia-smi,
``torch.cuda.get_device_name``, Lightning's tensor-core hint) and world sizes (NCCL
``nranks``, ``WORLD_SIZE``, ``Num processes``, Lightning ``MEMBER: g/N``, MMEngine's runtime
environment ``GPU number: N``, which is its world size).

A CONTEXT event carries one fact: ``data = {"key": ..., "value": ...}``.
"""

from __future__ import annotations

import re

from detectors.model import EventKind
from detectors.parsers.base import Rule, Segment

__all__ = ["RULES"]

_TRUE = {"true", "1", "yes", "on"}

_FLAG = re.compile(
    r"(?<![\w-])(?:--)?(?P<k>fp16|bf16|bfloat16|half)(?:_enabled|_full_eval)?['\"]?(?:\s*+[=:]\s*+|\s++(?:\.{2,}+\s*+)?)['\"]?(?P<v>True|true|False|false|1|0)\b"
)
_PRECISION = re.compile(
    r"(?:\bprecision|Mixed precision type|mixed_precision)['\"]?\s*[=:]\s*['\"]?(?P<v>fp16|bf16|fp32|fp8|no|16-mixed|bf16-mixed|16-true|bf16-true|32-true|32|16|bf16)\b"
)
# a command line's precision flag with a space or "=" ("--precision half": EDSR; "--dtype float16",
# "--mixed_precision fp16")
_PRECISION_FLAG = re.compile(
    r"--(?:precision|dtype|mixed[_-]precision)(?:=|\s+)['\"]?(?P<v>half|single|fp16|bf16|bfloat16|float16|fp32|float32|16-mixed|bf16-mixed|16|32)\b"
)
_AMP = re.compile(r"Using (?P<v>16bit|16-bit|bfloat16) (?:\w+ )?Automatic Mixed Precision")
_DS_OPT = re.compile(r"Creating (?:(?P<fp16>fp16) (?:unfused )?optimizer with (?P<kind>dynamic|static) loss scale|(?P<bf16>BF16) optimizer|(?P<dtype>torch\.\w+) ZeRO stage)")
_DTYPE = re.compile(r"(?:params_dtype\s*\.*\s*|using )(?P<v>torch\.(?:half|float16|bfloat16|float32|float))\b")
_SCALING = re.compile(r"(?:loss_scaling|grad_scaler|use_grad_scaler|dynamic_loss_scale)['\"]?\s*[=:]\s*['\"]?(?P<v>true|false|True|False|on|off|1|0)\b")
_WORLD = re.compile(
    # (Coqui's Trainer prints "| > Num. of GPUs: 4" and runs DDP on all of them; TensorFlow's
    # distribution-strategy examples print "Number of devices: 2", the replicas in sync)
    r"(?:\bworld_size|\bWORLD_SIZE|\b[Ww]orld[ -]size|dist_world_size|\bnranks|Num processes|Starting with|MEMBER: \d+/|using world size:|GPU number:"
    r"|Num\. of GPUs|^Number of devices"
    # (the same in Chinese and Russian scripts' own start-up lines: "进程数 = 2", "число процессов: 4")
    r"|进程数|число процессов"
    r"|\b(?:mpirun|horovodrun)\s(?:\S+\s+)*?-{1,2}np?)['\"]?\s*+[=:]?\s*+(?P<v>\d+)"
)
# torchtitan's mesh (torchtitan/distributed/parallel_dims.py, and forks of it): "Building 1-D device
# mesh with ['dp_shard'], [8]", "Building 2-D device mesh with ('dp', 'tp'), [4, 2]" (the sizes of the
# mesh's dimensions) or "Building device mesh with parallelism: pp=1, dp_replicate=1, dp_shard=4,
# cp=1, tp=1, ep=1, etp=1" (ep and etp split the other dimensions, they add no ranks): the world is
# the product of the sizes
_MESH = re.compile(r"Building (?:\d-D )?device mesh with (?:[\[(][^\])]{0,200}[\])],\s*\[(?P<dims>\d+(?:,\s*\d+){0,5})\]"
                   r"|parallelism: (?P<par>(?:\w+=\d+(?:,\s*)?){1,10}))")
_MESH_DIMS = ("pp", "dp_replicate", "dp_shard", "cp", "tp")
# a Slurm srun command line starting the job's tasks (one task per rank, several per node): --ntasks
# N, or --ntasks-per-node N on --nodes M (default 1); a node range ("-N2-4") gives no size
_SRUN = re.compile(r"(?:^|[\s;&|$+])srun\s")
_SRUN_TASKS = re.compile(r"\s(?:-n\s?|--ntasks[= ])(?P<n>\d+)(?![-\d])")
_SRUN_PER_NODE = re.compile(r"\s--ntasks-per-node[= ](?P<n>\d+)(?![-\d])")
_SRUN_NODES = re.compile(r"\s(?:-N\s?|--nodes[= ])(?P<n>\d+)(?P<range>-)?")
# a torchrun / torch.distributed.launch command line: --nproc_per_node N on --nnodes M (default 1)
_NPROC = re.compile(r"--nproc[_-]per[_-]node[= ](?P<n>\d+)\b")
_NNODES = re.compile(r"--nnodes[= ](?P<v>\S+)")
# a Lightning Trainer configured by Hydra overrides ("Error executing job with overrides: [...,
# 'trainer.num_nodes=1', 'trainer.devices=3']"): a process per device on every node; "auto",
# -1 or a device list give no size
_PL_DEVICES = re.compile(r"\btrainer\.(?:devices|gpus)=(?P<n>\d+)\b")
_PL_NODES = re.compile(r"\btrainer\.num_nodes=(?P<v>\d+)\b")
_GPU = re.compile(
    r"(?P<v>(?:NVIDIA |Tesla |Quadro |GeForce )(?:RTX |GTX )?(?:A100|A800|H100|H800|H200|GH200|B100|B200|GB200|B300|GB300|A10G|A10|A16|A2|A30|A40|L40S|L40|L4|V100|T4|P100|P40|P4|K80|M40|M60|RTX ?\d{4}|A\d{4}|\d{4})[\w-]*(?: \w+GB(?: HBM\d)?)?)"
)
_CAP = re.compile(r"compute capability (?:\(CC\) )?(?P<v>\d+\.\d+)|sm_(?P<sm>\d{2,3})\b")


def _ctx(seg: Segment, key: str, value: object) -> None:
    seg.emit(EventKind.CONTEXT, data={"key": key, "value": value})


def _precision_from(v: str) -> str | None:
    v = v.lower()
    if v in ("fp16", "16-mixed", "16", "16bit", "16-bit", "16-true", "torch.half", "torch.float16", "half", "float16"):
        return "fp16"
    if v in ("bf16", "bf16-mixed", "bf16-true", "bfloat16", "torch.bfloat16"):
        return "bf16"
    if v in ("fp32", "32", "32-true", "no", "torch.float32", "torch.float", "single", "float32"):
        return "fp32"
    return None


# the dynamic loss scaler's starting scale as the run sets it: "initial loss scale 16777216.0",
# GradScaler(init_scale=...), DeepSpeed's '"initial_scale_power": 24' (2^N)
_INIT_SCALE = re.compile(r"(?i:initial[ _]loss[ _]scale|init[ _]scale)['\"]?\s{0,2}[:=]?\s{0,2}(?P<v>\d+(?:\.\d*)?(?:[eE]\+?\d+)?)\b"
                         r"|initial_scale_power['\"]?\s{0,2}[:=]\s{0,2}(?P<p>\d{1,2})\b")


def _context(m: re.Match[str], seg: Segment) -> bool:
    body = seg.body
    for fm in _FLAG.finditer(body):
        if fm.group("v").lower() in _TRUE:
            k = fm.group("k")
            _ctx(seg, "precision", "bf16" if k in ("bf16", "bfloat16") else "fp16")
    pm = _PRECISION.search(body) or _AMP.search(body) or _PRECISION_FLAG.search(body)
    if pm and (p := _precision_from(pm.group("v"))):
        _ctx(seg, "precision", p)
        if p == "fp16" and _AMP.search(body):
            _ctx(seg, "loss_scaling", True)  # Lightning's 16-mixed always uses a GradScaler
    om = _DS_OPT.search(body)
    if om:
        if om.group("fp16"):
            _ctx(seg, "precision", "fp16")
            _ctx(seg, "loss_scaling", om.group("kind") == "dynamic")
        elif om.group("bf16"):
            _ctx(seg, "precision", "bf16")
        elif om.group("dtype") and (p := _precision_from(om.group("dtype"))):
            _ctx(seg, "precision", p)
    dm = _DTYPE.search(body)
    if dm and (p := _precision_from(dm.group("v"))):
        _ctx(seg, "precision", p)
    im = _INIT_SCALE.search(body)
    if im:
        v = float(im.group("v")) if im.group("v") else 2.0 ** int(im.group("p"))
        if 1 <= v <= 2.0 ** 40:
            _ctx(seg, "initial_scale", v)
    sm = _SCALING.search(body)
    if sm:
        _ctx(seg, "loss_scaling", sm.group("v").lower() in _TRUE)
    wm = _WORLD.search(body)
    if wm and 0 < int(wm.group("v")) <= 1_000_000:
        _ctx(seg, "world_size", int(wm.group("v")))
    if not wm and "srun" in body and _SRUN.search(body) and (n := _srun_tasks(body)) is not None and n >= 2:
        _ctx(seg, "world_size", n)
    mesh = _MESH.search(body) if not wm and "device mesh" in body else None
    if mesh is not None and (n := _mesh_size(mesh)) is not None:
        _ctx(seg, "world_size", n)
    pl = _PL_DEVICES.search(body)
    if pl and not wm and int(pl.group("n")) > 0:
        plnodes = _PL_NODES.search(body)
        _ctx(seg, "world_size", int(pl.group("n")) * (int(plnodes.group("v")) if plnodes else 1))
    nm = _NPROC.search(body)
    if nm and not wm:
        nodes = _NNODES.search(body)
        if nodes is None or nodes.group("v").isdigit():  # an elastic range (1:4) gives no size
            _ctx(seg, "world_size", int(nm.group("n")) * (int(nodes.group("v")) if nodes else 1))
    gm = _GPU.search(body)
    if gm:
        _ctx(seg, "gpu", gm.group("v").strip())
    cm = _CAP.search(body)
    if cm:
        cap = cm.group("v") or f"{cm.group('sm')[:-1]}.{cm.group('sm')[-1]}"
        _ctx(seg, "compute_capability", cap)
    return False  # context never explains a line away: it may also be a failure line


_FRAMEWORKS = (
    ("deepspeed", re.compile(r"\[(?:logging|engine|config|launch|runner|loss_scaler|stage_1_and_2|stage3|fused_optimizer)\.py:\d+:\w+\]|DeepSpeed info: version=|\[deeps(?:peed|cale)\]")),
    # fairseq's logger names between pipes: "| INFO | fairseq.trainer |", "| INFO | train_inner |"
    ("fairseq", re.compile(r"\| (?:fairseq(?:_cli)?\.[\w.]+|train_inner) \|")),
    ("megatron", re.compile(r"iteration\s+\d+/\s*\d+ \||- arguments -|megatron")),
    ("hf_trainer", re.compile(r"\*\*\*\*\* Running training \*\*\*\*\*|\{'loss': |TrainingArguments\(")),
    ("lightning", re.compile(r"Automatic Mixed Precision \(AMP\)|LOCAL_RANK: \d+ - CUDA_VISIBLE_DEVICES|\[rank: \d+\] |lightning")),
    # NVIDIA nccl-tests (all_reduce_perf, broadcast_perf ...): its parameter line, its device table
    # and its result table's header (broadcast's has no redop column): a communication benchmark
    ("nccl_tests", re.compile(r"#\s+size\s+count\s+type\s+(?:redop\s+)?root|# nThread \d+ nGpus \d+ minBytes"
                              r"|#\s*Rank\s+\d+\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s")),
)


def _framework(m: re.Match[str], seg: Segment) -> bool:
    for name, rx in _FRAMEWORKS:
        if rx.search(seg.raw):
            _ctx(seg, "framework", name)
            break
    return False


def _dist_init(m: re.Match[str], seg: Segment) -> bool:
    """``| distributed init (rank 3): tcp://host:port`` (fairseq, and DETR's init_distributed_mode
    copied into DeiT, MAE, ConvNeXt...), YOLOX's ``Rank 6 initialization finished.``, torch's
    ``Rank 3: Completed store-based barrier ...``: that rank joined the process group; the line's
    rank (read from the message) makes it a rank the job has."""
    if seg.rank is not None:
        _ctx(seg, "dist_init", True)
    return False


def _nccl_tests_row(m: re.Match[str], seg: Segment) -> bool:
    """A row of nccl-tests' result table (``   8   2   float   sum   -1   20.55   0.00   0.00   0 ...``:
    size, count, type, the reduction op or root, then times and bandwidths): the benchmark got past
    its set-up and ran."""
    _ctx(seg, "nccl_tests_ran", True)
    return False


def _spawned(m: re.Match[str], seg: Segment) -> bool:
    """A traceback through torch.multiprocessing.spawn: one process per GPU on this node."""
    _ctx(seg, "launcher", "mp.spawn")
    return False


def _omp_banner(m: re.Match[str], seg: Segment) -> bool:
    """torchrun's (and torch.distributed.launch's) banner ``Setting OMP_NUM_THREADS environment
    variable for each process to be 1 in default``, printed only when it starts more than one
    process on the node (``nproc_per_node > 1``); mmcv's and others' ``UserWarning`` with the same
    words (dataloader workers) is not it."""
    if "Warning:" not in seg.body[: m.start()]:
        _ctx(seg, "several_processes", True)
    return False


def _trained(m: re.Match[str], seg: Segment) -> bool:
    """A framework's own word that training ran to its end: what failed before it did not stop
    the run."""
    _ctx(seg, "trained_to_end", True)
    return False


def _pslite(m: re.Match[str], seg: Segment) -> bool:
    """ps-lite's rendezvous (the parameter-server transport of BytePS and MXNet's dist kvstore,
    logged with PS_VERBOSE): a node's ``ADD_NODE`` control message to the scheduler (or the
    scheduler's reply) while the nodes register, and ``the scheduler is connected to N workers and
    M servers`` / ``W[9] is connected to others`` once every node has (ps-lite src/van.cc)."""
    _ctx(seg, "pslite", "joined" if "connected" in m.group(0) else "joining")
    return False


def _endpoint_wait(m: re.Match[str], seg: Segment) -> bool:
    """Paddle's start-up wait for its peers' endpoints (paddle.distributed's ``wait_server_ready``:
    ``server not ready, wait 3 sec to retry...`` then ``not ready endpoints:['192.168.4.7:6070']``,
    every 3 s until every trainer's endpoint answers): the endpoints still waited for."""
    listed = _ENDPOINT.findall(seg.body[m.end():m.end() + 400])
    _ctx(seg, "endpoint_wait", ",".join(listed[:8]) or "?")
    return False


_ENDPOINT = re.compile(r"'([^'\s]{1,80}:\d{1,5})'")


def _rich_record(m: re.Match[str], seg: Segment) -> bool:
    return False  # nothing to emit: the record line only had to reach the parse (parse.py: rich continuation)


def _srun_tasks(body: str) -> int | None:
    """The ranks an srun command line starts (``_SRUN_TASKS`` / ``_SRUN_PER_NODE`` x ``_SRUN_NODES``),
    or None when it does not say. Only with more than one task per node: a launcher that starts
    its own processes (torchrun, accelerate, a wrapper script running one) runs one task per node,
    and its tasks are nodes, not ranks."""
    if any(w in body for w in ("torchrun", "nproc", "distributed.launch", "distributed.run", "accelerate", "deepspeed")):
        return None  # (its own launcher on the same line gives the world: _NPROC)
    nodes = _SRUN_NODES.search(body)
    if nodes is not None and nodes.group("range"):
        return None
    n_nodes = int(nodes.group("n")) if nodes else 1
    if (t := _SRUN_TASKS.search(body)) is not None:
        n = int(t.group("n"))
        return n if n > n_nodes and n <= 1_000_000 else None
    per = _SRUN_PER_NODE.search(body)
    if per is None or int(per.group("n")) < 2:
        return None
    n = int(per.group("n")) * n_nodes
    return n if n <= 1_000_000 else None


def _mesh_size(m: re.Match[str]) -> int | None:
    """The ranks a torchtitan device mesh spans (``_MESH``), or None."""
    n = 1
    if m.group("dims"):
        for d in m.group("dims").split(","):
            n *= int(d)
    else:
        sizes = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m.group("par"))}
        if "dp_shard" not in sizes:
            return None  # (another program's "parallelism: ..." line)
        for k in _MESH_DIMS:
            n *= sizes.get(k, 1)
    return n if 0 < n <= 1_000_000 else None


RULES = [
    # rich's RichHandler record ("[02:19:17] INFO     [r2] init_process_group ...      train.py:16"): its
    # wrapped lines below, indented to the message column, are its continuation (parse.py)
    Rule("rich.record", r"^(?:\[[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\]| {10}) (?:DEBUG|INFO|WARNING|ERROR|CRITICAL) +[^ ]"
                                r"[^\n]*[^ ] {2,}[A-Za-z0-9_.-]+\.py:[0-9]+ *\r?$", _rich_record, on_raw=True),
    Rule(
        "context.precision",
        r"fp16|bf16|bfloat16|float16|[Pp]recision|[Ii]nitial[ _]loss[ _]scale|init_scale|initial_scale_power|params_dtype|loss_scaling|grad_scaler|[Ww]orld_size|WORLD_SIZE|[Ww]orld[ -]size:? ?\d|nranks:? \d|Num processes: |using world size: \d|GPU number: \d|Num\. of GPUs: \d|Number of devices: \d|(?:mpirun|horovodrun) .*-np? \d|Starting with \d+ processes|MEMBER: \d+/\d+|--nproc[_-]per[_-]node[= ]\d|trainer\.(?:devices|gpus)=\d|device mesh with|srun .*(?:--ntasks|-n ?[0-9])|(?:NVIDIA|Tesla|Quadro|GeForce) [A-Z0-9]|compute capability|sm_\d\d|Creating \S+ (?:unfused )?optimizer|ZeRO stage|进程数|число процессов",
        _context,
    ),
    Rule("context.nccl_tests_row",
         r"[0-9]+[ \t]+[0-9]+[ \t]+(?:float|half|bfloat16|double|u?int8|u?int32|u?int64|f8e4m3|f8e5m2)[ \t]+(?:sum|prod|min|max|avg|none|-?[0-9]+)[ \t]+-?[0-9]*[ \t]*[0-9]+\.[0-9]+[ \t]",
         _nccl_tests_row),
    Rule("context.spawn", r"torch/multiprocessing/spawn\.py", _spawned, on_raw=True),
    Rule("context.pslite", r"control=\{ ?cmd=ADD_NODE\b|\bis connected to others\b|[Tt]he scheduler is connected to [0-9]+ workers",
         _pslite),
    Rule("context.endpoint_wait", r"not ready endpoints: ?\[", _endpoint_wait),
    # torch/distributed/run.py: "if 'OMP_NUM_THREADS' not in os.environ and args.nproc_per_node > 1"
    Rule("context.omp_banner", r"Setting OMP_NUM_THREADS environment variable for each process to be", _omp_banner),
    # end-of-training markers: Megatron's print_datetime('after training is done')
    # (megatron/training/training.py), Lightning's fit loop ("`Trainer.fit` stopped: `max_epochs=3`
    # reached.", lightning/pytorch/loops/fit_loop.py), HF Trainer's closing info line
    # (transformers/trainer.py), fairseq_cli/train.py's "done training in 1234.5 seconds" and the
    # MLPerf logging library's closing event of a run that reached its target
    # (':::MLLOG {... "key": "run_stop", ... "metadata": {..., "status": "success"}}', mlcommons/logging)
    Rule("context.trained",
         r"\[after training is done\]|`Trainer\.fit` stopped: `max_(?:epochs|steps|time)=[^`]*` reached"
         r"|Training completed\. Do not forget to share your model|done training in [0-9.]+ seconds"
         r"|\"key\": \"run_stop\"[^\n]{0,600}?\"status\": \"success\"",
         _trained),
    # a rank announcing that it joined the process group: fairseq's and DETR's "| distributed init
    # (rank 3): env://", YOLOX's "Rank 6 initialization finished." (yolox/core/launch.py), torch
    # 1.9-2.0's "Rank 3: Completed store-based barrier for key:store_based_barrier_key:1 with 8 nodes."
    Rule("context.dist_init", r"\| distributed init \(rank [0-9]{1,6}\)|\b[Rr]ank [0-9]{1,6}:? (?:initialization finished|"
                              r"Completed store-based barrier for key)", _dist_init),
    Rule(
        "context.framework",
        r"#\s+size\s+count\s+type\s+(?:redop\s+)?root|# nThread \d+ nGpus \d+ minBytes|#[ \t]*Rank[ \t]+\d+[ \t]+(?:Group[ \t]+\d+[ \t]+)?Pid[ \t]+\d+[ \t]+on[ \t]|\[(?:logging|engine|config|loss_scaler|stage_1_and_2|stage3|fused_optimizer)\.py:\d+:\w+\]|DeepSpeed info: version=|\| (?:fairseq(?:_cli)?\.[\w.]+|train_inner) \||iteration\s+\d+/\s*\d+ \||- arguments -|\*\*\*\*\* Running training \*\*\*\*\*|\{'loss': |Automatic Mixed Precision \(AMP\)|\[rank: \d+\] ",
        _framework,
        on_raw=True,
    ),
]
