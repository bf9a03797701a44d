"""Throughput, evaluation-loss, memory and NCCL-version lines → SAMPLE events (``scope="perf"``).

These feed the seed-symptom detectors (``detectors/symptoms.py``): mixed precision that
does not speed up, bf16 less accurate than fp32, bf16 using as much memory as fp32, and
the NCCL version per rank. Every event is its own SAMPLE, independent of ``seg.sampled``
(a Megatron iteration line gives a metrics SAMPLE *and* a perf SAMPLE), and carries
``data["scope"] = "perf"`` and ``data["perf"]`` (which format it came from). A perf
SAMPLE never carries ``loss`` (so the NaN logic of ``detect.py`` ignores it); evaluation
losses are ``eval_loss``.

Keys: ``throughput`` + ``throughput_unit`` (``samples/s``, ``tokens/s``, ``it/s``,
``TFLOP/s/GPU``), ``iter_ms``, ``eval_loss``, ``mem_alloc_gb``, ``mem_max_gb``,
``mem_reserved_gb``, ``mem_max_reserved_gb``, ``mem_states_gb`` (Megatron's theoretical
weight+optimizer footprint), ``mem_label`` (DeepSpeed ``see_memory_usage`` message),
``nccl_version``. Sizes are in GiB (DeepSpeed's "GB" is 1024^3).

Formats and sources:
- HF Trainer end-of-training metrics (log-formats.md §4.1): ``{'train_runtime': 120.5,
  'train_samples_per_second': 53.1, ...}`` (5.x quotes the numbers) and ``log_metrics``'
  ``  train_samples_per_second =     53.1``; eval dicts ``{'eval_loss': 0.51, ...}``.
- DeepSpeed ``ThroughputTimer`` (§2.2): ``epoch=0/micro_step=8000/global_step=1000,
  RunningAvgSamplesPerSec=212.4, CurrSamplesPerSec=215.9, MemAllocated=21.37GB,
  MaxMemAllocated=38.02GB``; pipeline engine ``steps: 1000 loss: 2.3127 iter time (s):
  4.812 samples/sec: 212.801``; ``see_memory_usage`` (deepspeed/runtime/utils.py): a
  message line, then ``MA 1.23 GB         Max_MA 1.5 GB         CA 2.0 GB         Max_CA 2 GB``.
- Megatron ``training_log`` (§3.1): ``elapsed time per iteration (ms): 5321.7 |
  throughput per GPU (TFLOP/s/GPU): 402.8 |``; ``evaluate_and_print_results``:
  `` validation loss at iteration 1000 | lm loss value: 2.345678E+00 | lm loss PPL: ...``;
  ``report_memory``: ``[Rank 0] (after 20 iterations) memory (MB) | allocated: 1570.7 |
  max allocated: 2589.1 | reserved: 2608.0 | max reserved: 2608.0`` (several records can be
  glued on one physical line); ``Theoretical memory footprints: weight and optimizer=1519.18 MB``.
- Lightning: ModelCheckpoint ``Epoch 3, global step 400: 'val_loss' reached 0.41234 (best
  0.41234), saving model to ...``, EarlyStopping ``Metric val_loss improved by 0.023 >=
  min_delta = 0.0. New best score: 0.389``; RichProgressBar ``... 63/63 0:00:02 • 0:00:00
  31.18it/s v_num: 0`` (``it/s`` / ``s/it`` right after the bar's times). tqdm bars never
  reach the rules (the fast path drops them and keeps only their step counter), so their
  rate is not read, and ``it/s`` is not a trigger (progress bars stay off the slow path).
- PyTorch: CUDA OOM messages (§1.7: ``14.21 GiB already allocated; ... 14.73 GiB reserved
  in total by PyTorch`` before 2.1, ``Of the allocated memory 77.50 GiB is allocated by
  PyTorch, and 1.08 GiB is reserved by PyTorch but unallocated.`` after);
  ``max_memory_allocated``-style user lines (``max_memory_allocated=12.3GiB``, ``peak memory:
  12.3 GB``).
- NCCL ``NCCL INFO NCCL version 2.21.5+cuda12.4`` (§6) and PyTorch's NCCL errors ending in
  ``NCCL version 2.19.3``.
"""

from __future__ import annotations

import math
import re

from detectors.model import Event, EventKind
from detectors.parsers.base import Rule, Segment
from detectors.parsers.metrics import parse_number

__all__ = ["RULES"]

_N = r"(?:[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|nan|NaN|inf|Inf)"
_UNIT_GB = {"b": 1 / 1024**3, "kb": 1 / 1024**2, "kib": 1 / 1024**2, "mb": 1 / 1024, "mib": 1 / 1024,
            "gb": 1.0, "gib": 1.0, "tb": 1024.0, "tib": 1024.0}


def _gb(value: str, unit: str) -> float | None:
    v = parse_number(value)
    f = _UNIT_GB.get(unit.lower())
    if v is None or f is None or not math.isfinite(v):
        return None
    return round(v * f, 6)


def _emit(seg: Segment, source: str, step: int | None = None, **values: object) -> Event | None:
    data = {k: v for k, v in values.items() if v is not None}
    if not data:
        return None
    data["scope"] = "perf"
    data["perf"] = source
    return seg.emit(EventKind.SAMPLE, step=step, data=data)


def _finite(text: str) -> float | None:
    v = parse_number(text)
    return v if v is not None and math.isfinite(v) and v >= 0 else None


_STEP = re.compile(r"\b(?:global_step|global step|iteration|iter|step|steps)[=: ]+(?P<n>\d+)\b")


def _step_in(text: str) -> int | None:
    m = _STEP.search(text)
    return int(m.group("n")) if m else None


# --- throughput ---------------------------------------------------------------------------
_HF_SAMPLES = re.compile(rf"train_samples_per_second'?\s*[:=]\s*'?(?P<v>{_N})")
_HF_STEPS = re.compile(rf"train_steps_per_second'?\s*[:=]\s*'?(?P<v>{_N})")
_DS_TIMER = re.compile(
    rf"RunningAvgSamplesPerSec=(?P<avg>{_N}), CurrSamplesPerSec=(?P<cur>{_N})"
    rf"(?:, MemAllocated=(?P<ma>{_N})(?P<mau>[KMGT]i?B), MaxMemAllocated=(?P<mx>{_N})(?P<mxu>[KMGT]i?B))?"
)
_DS_GSTEP = re.compile(r"global_step=(?P<n>\d+)")
# (no unbounded scan from each repeated start: a gap stops at the next start, a number
# never starts inside a run of digits — hostile lines stay linear, tests/reliability)
_DS_PIPE = re.compile(rf"steps: (?P<step>\d+) (?:(?!steps: ).)*?iter time \(s\): (?P<t>{_N}) samples/sec: (?P<v>{_N})")
_MEG_MS = re.compile(rf"elapsed time per iteration \(ms\): (?P<v>{_N})")
_MEG_TFLOPS = re.compile(rf"throughput per GPU \(TFLOP/s/GPU\): (?P<v>{_N})")
_MEG_ITER = re.compile(r"iteration\s+(?P<it>\d+)/\s*\d+ \|")
_RATE_AFTER = re.compile(
    rf"(?<!\d)(?P<v>{_N}) ?(?P<u>samples|tokens|sequences|seqs|it|imgs|images)(?:/s\b|/sec\b| per second\b)"
)
_RATE_BEFORE = re.compile(
    rf"\b(?P<u>samples|tokens|sequences|seqs|images|imgs)(?:/s|/sec|_per_sec|_per_second|_per_s| per second)\b"
    rf"(?:/gpu|_per_gpu)?'?\s*+[:=]?\s*+'?(?P<v>{_N})"
)
_SEC_PER_IT = re.compile(rf"(?<!\d)(?P<v>{_N}) ?s/it\b")
_UNITS = {"samples": "samples/s", "sequences": "samples/s", "seqs": "samples/s", "images": "samples/s",
          "imgs": "samples/s", "tokens": "tokens/s", "it": "it/s"}


def _throughput(m: re.Match[str], seg: Segment) -> bool:
    body = seg.body
    # HF Trainer: end-of-training summary (dict or log_metrics), one average for the whole run
    hm = _HF_SAMPLES.search(body) or _HF_STEPS.search(body)
    if hm:
        unit = "samples/s" if "samples" in hm.group(0) else "it/s"
        _emit(seg, "hf_train", None, throughput=_finite(hm.group("v")), throughput_unit=unit)
        return False
    dm = _DS_TIMER.search(body)
    if dm:
        gs = _DS_GSTEP.search(body)
        _emit(
            seg, "deepspeed_timer", int(gs.group("n")) if gs else None,
            throughput=_finite(dm.group("cur")), throughput_unit="samples/s", throughput_avg=_finite(dm.group("avg")),
            mem_alloc_gb=_gb(dm.group("ma"), dm.group("mau")) if dm.group("ma") else None,
            mem_max_gb=_gb(dm.group("mx"), dm.group("mxu")) if dm.group("mx") else None,
        )
        return False
    pm = _DS_PIPE.search(body)
    if pm:
        t = _finite(pm.group("t"))
        _emit(seg, "deepspeed_pipe", int(pm.group("step")), throughput=_finite(pm.group("v")),
              throughput_unit="samples/s", iter_ms=round(t * 1000, 3) if t is not None else None)
        return False
    mm = _MEG_MS.search(body)
    if mm:
        it = _MEG_ITER.search(body)
        tf = _MEG_TFLOPS.search(body)
        _emit(seg, "megatron", int(it.group("it")) if it else None, iter_ms=_finite(mm.group("v")),
              throughput=_finite(tf.group("v")) if tf else None, throughput_unit="TFLOP/s/GPU" if tf else None)
        return False
    rm = _RATE_AFTER.search(body) or _RATE_BEFORE.search(body)
    if rm:
        v = _finite(rm.group("v"))
        unit = _UNITS.get(rm.group("u"), "samples/s")
        _emit(seg, "rate", _step_in(body), throughput=v, throughput_unit=unit if v is not None else None)
        return False
    sm2 = _SEC_PER_IT.search(body)
    if sm2:
        v = _finite(sm2.group("v"))
        _emit(seg, "rate", _step_in(body), iter_ms=round(v * 1000, 3) if v is not None else None)
    return False


# --- evaluation loss ----------------------------------------------------------------------
_EVAL_KEY = r"(?:eval_loss|eval/loss|val_loss|val/loss|valid_loss|validation_loss|val_lm_loss)"
_MEG_VAL = re.compile(rf"validation loss at (?:iteration (?P<it>\d+)|the end of training)(?:(?!validation loss at )[^|])*+\| lm loss value: (?P<v>{_N})")
_PL_CKPT = re.compile(rf"Epoch (?P<ep>\d+), global step (?P<step>\d+): '?(?P<k>[\w/.-]+)'? reached (?P<v>{_N})")
_PL_EARLY = re.compile(rf"Metric (?P<k>[\w/.-]+) improved(?: by {_N} >= min_delta = {_N})?\. New best score: (?P<v>{_N})")
_EVAL_KV = re.compile(rf"'?(?P<k>{_EVAL_KEY})'?(?:\s*+[:=]\s*+|\s++)'?(?P<v>{_N})'?")
_EPOCH = re.compile(rf"'epoch'\s*:\s*'?(?P<v>{_N})")
_VAL_NAME = re.compile(r"^(?:eval|val|valid|validation)[_/]?(?:lm_)?loss$")
# the evaluation averaged over no sample at all ("'val_n': 0", "eval_samples=0"): its mean is NaN
# by definition (an empty validation shard), not a model gone non-finite
_EVAL_NONE = re.compile(r"""\b(?:val|valid|eval)_(?:n|count|samples)['"]?\s*[:=]\s*0(?![\d.])""")


def _eval(m: re.Match[str], seg: Segment) -> bool:
    body = seg.body
    vm = _MEG_VAL.search(body)
    if vm:
        _emit(seg, "megatron_val", int(vm.group("it")) if vm.group("it") else None, eval_loss=parse_number(vm.group("v")))
        return False
    cm = _PL_CKPT.search(body)
    if cm:
        if _VAL_NAME.match(cm.group("k")):
            _emit(seg, "lightning_checkpoint", int(cm.group("step")), eval_loss=parse_number(cm.group("v")),
                  epoch=float(cm.group("ep")))
        return False
    em = _PL_EARLY.search(body)
    if em:
        if _VAL_NAME.match(em.group("k")):
            _emit(seg, "lightning_early_stopping", None, eval_loss=parse_number(em.group("v")))
        return False
    km = _EVAL_KV.search(body)
    if km and _EVAL_NONE.search(body) and math.isnan(parse_number(km.group("v")) or 0.0):
        return False
    if km:
        ep = _EPOCH.search(body)
        _emit(seg, "hf_eval" if body.lstrip().startswith("{") else "eval", _step_in(body),
              eval_loss=parse_number(km.group("v")), epoch=parse_number(ep.group("v")) if ep else None)
    return False


# --- memory -------------------------------------------------------------------------------
_U = r"(?:[KMGT]i?B|bytes)"
_DS_MA = re.compile(
    rf"MA (?P<ma>{_N}) (?P<mau>{_U})\s+Max_MA (?P<mx>{_N}) (?P<mxu>{_U})\s+CA (?P<ca>{_N}) (?P<cau>{_U})\s+Max_CA (?P<mc>{_N}) (?P<mcu>{_U})"
)
_DS_LABEL = re.compile(r"see_memory_usage\]\s*(?P<label>\S.*)$")
_MEG_MEM = re.compile(
    rf"(?:\[Rank (?P<rank>\d+)\] )?\(after (?P<it>\d+) iterations\) memory \(MB\) \| allocated: (?P<a>{_N}) \| "
    rf"max allocated: (?P<ma>{_N}) \| reserved: (?P<r>{_N}) \| max reserved: (?P<mr>{_N})"
)
_MEG_THEORY = re.compile(rf"Theoretical memory footprints: weight and optimizer=(?P<w>{_N}) MB")
_OOM_OLD = re.compile(rf"(?<!\d)(?P<a>{_N}) (?P<au>{_U}) already allocated;(?:(?!already allocated;).)*?(?<!\d)(?P<r>{_N}) (?P<ru>{_U}) reserved in total by PyTorch")
_OOM_NEW = re.compile(
    rf"Of the allocated memory (?P<a>{_N}) (?P<au>{_U}) is allocated by PyTorch, and (?P<u>{_N}) (?P<uu>{_U}) is reserved by PyTorch but unallocated"
)
_TOTAL = re.compile(rf"total capacity of (?P<t>{_N}) (?P<tu>{_U})|\((?:GPU \d+; )?(?P<t2>{_N}) (?P<tu2>{_U}) total capacity")
_MAX_ALLOC = re.compile(
    rf"(?P<k>max_memory_allocated|max memory allocated|max_memory_reserved|max memory reserved|peak (?:gpu )?memory(?: allocated)?)"
    rf"(?:\(\))?['\"]?\s*+[:=]?\s*+(?P<v>{_N})\s*+(?P<u>{_U})",
    re.IGNORECASE,
)


def _memory(m: re.Match[str], seg: Segment) -> bool:
    raw = seg.raw or seg.body
    body = seg.body
    dm = _DS_MA.search(body)
    if dm:
        _emit(seg, "deepspeed_see_memory_usage", None,
              mem_alloc_gb=_gb(dm.group("ma"), dm.group("mau")), mem_max_gb=_gb(dm.group("mx"), dm.group("mxu")),
              mem_reserved_gb=_gb(dm.group("ca"), dm.group("cau")),
              mem_max_reserved_gb=_gb(dm.group("mc"), dm.group("mcu")))
        return False
    found = False
    for mm in _MEG_MEM.finditer(raw):
        found = True
        ev = _emit(seg, "megatron_memory", int(mm.group("it")),
                   mem_alloc_gb=_gb(mm.group("a"), "MB"), mem_max_gb=_gb(mm.group("ma"), "MB"),
                   mem_reserved_gb=_gb(mm.group("r"), "MB"), mem_max_reserved_gb=_gb(mm.group("mr"), "MB"))
        if ev is not None and mm.group("rank") is not None:
            ev.rank = int(mm.group("rank"))  # the record names the rank whose memory it is
    if found:
        return False
    tm = _MEG_THEORY.search(body)
    if tm:
        _emit(seg, "megatron_theory", None, mem_states_gb=_gb(tm.group("w"), "MB"))
        return False
    om = _OOM_NEW.search(body)
    if om:
        a = _gb(om.group("a"), om.group("au"))
        u = _gb(om.group("u"), om.group("uu"))
        _emit(seg, "oom_message", None, mem_alloc_gb=a, mem_reserved_gb=round(a + u, 6) if a is not None and u is not None else None,
              mem_total_gb=_total(body), mem_oom=True)
        return False
    om = _OOM_OLD.search(body)
    if om:
        _emit(seg, "oom_message", None, mem_alloc_gb=_gb(om.group("a"), om.group("au")),
              mem_reserved_gb=_gb(om.group("r"), om.group("ru")), mem_total_gb=_total(body), mem_oom=True)
        return False
    values: dict[str, object] = {}
    for am in _MAX_ALLOC.finditer(body):
        key = "mem_max_reserved_gb" if "reserved" in am.group("k").lower() else "mem_max_gb"
        values.setdefault(key, _gb(am.group("v"), am.group("u")))
    if values:
        _emit(seg, "max_memory", _step_in(body), **values)
        return False
    lm = _DS_LABEL.search(raw)
    if lm:
        _emit(seg, "deepspeed_see_memory_usage", None, mem_label=lm.group("label").strip()[:120])
    return False


def _total(body: str) -> float | None:
    tm = _TOTAL.search(body)
    if not tm:
        return None
    return _gb(tm.group("t"), tm.group("tu")) if tm.group("t") else _gb(tm.group("t2"), tm.group("tu2"))


# --- NCCL version -------------------------------------------------------------------------
_NCCL_VERSION = re.compile(r"NCCL version (?P<v>\d+\.\d+\.\d+)(?P<build>\+[\w.]+)?")


def _nccl_version(m: re.Match[str], seg: Segment) -> bool:
    vm = _NCCL_VERSION.search(seg.body)
    if vm:
        _emit(seg, "nccl", None, nccl_version=vm.group("v"), nccl_build=vm.group("build"))
    return False


RULES = [
    Rule(
        "perf.throughput",
        r"train_(?:samples|steps)_per_second|SamplesPerSec=|samples/sec: |elapsed time per iteration \(ms\)"
        r"|\d ?(?:samples|tokens|sequences|seqs|imgs|images)(?:/s|/sec| per second)|\d:\d\d:\d\d \d+(?:\.\d+)?(?:it/s|s/it)"
        r"|(?:samples|tokens|sequences|seqs|images|imgs)(?:/s|/sec|_per_sec|_per_second|_per_s| per second)",
        _throughput,
    ),
    Rule(
        "perf.eval",
        rf"{_EVAL_KEY}|validation loss at |reached [-+]?\d|New best score: ",
        _eval,
    ),
    Rule(
        "perf.memory",
        r"see_memory_usage\]|MA [\d.]+ [KMGT]i?B +Max_MA|memory \(MB\) \| allocated|Theoretical memory footprints"
        r"|[Mm]ax_memory_(?:allocated|reserved)|[Mm]ax memory (?:allocated|reserved)|[Pp]eak (?:[Gg][Pp][Uu] )?memory"
        r"|reserved in total by PyTorch|is reserved by PyTorch but unallocated",
        _memory,
        on_raw=True,
    ),
    Rule("perf.nccl_version", r"NCCL version \d+\.\d+\.\d+", _nccl_version),
]
