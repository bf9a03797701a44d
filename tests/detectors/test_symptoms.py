"""The seed's symptoms as detectors (detectors/symptoms.py), on real-format lines and real runs.

Hand-written lines follow the frameworks' own formats (sources: ../shared/log-formats.md
section numbers, and the framework file that prints them). The recordings under
``fixtures/seed/`` are real torchrun runs of one tiny job in fp32, bf16 and fp16 (see
``fixtures/seed/generate.py``).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from detectors.correlate import Incident, incidents
from detectors.detect import JobState
from detectors.parse import default_parser
from detectors.parsers.base import FileState, JobParseState
from detectors.symptoms import (
    ACCURACY_REL_GAP,
    EARLY_STEPS,
    MEMORY_EXPECTED_RATIO,
    MIN_SPEEDUP,
)
from detectors.tracks import SymptomTrack, _Thinned
from tests.conftest import REPO
from tests.helpers import fed_state

SEED = Path(__file__).resolve().parent / "fixtures" / "seed"
_RANK = re.compile(r"rank_?(\d+)")


def job(files: dict[str, str], name: str = "run") -> JobState:
    """Parse ``{path: text}`` through the real parser and detect stage."""
    parser = default_parser()
    st = JobState(job=name)
    jps = JobParseState()
    for path, text in files.items():
        m = _RANK.search(path)
        rank = int(m.group(1)) if m else None
        fs = FileState(path, rank=rank, year=2025, job=jps)
        st.note_file(rank, None)
        for i, line in enumerate(text.splitlines(), 1):
            for ev in parser.parse_line(line, i, fs):
                st.add(ev)
    return st


def found(run: JobState, baseline: JobState | None = None, expect: float | None = None) -> dict[str, Incident]:
    run.symptoms.configure(baseline=baseline, expect_speedup=expect)
    return {i.failure: i for i in incidents(run)}


# ----------------------------------------------------------------------------- a. speed-up
def ds_timer(samples_per_sec: list[float], ma: float = 21.37, mx: float = 38.02) -> str:
    """DeepSpeed ThroughputTimer (deepspeed/utils/timer.py; log-formats.md §2.2)."""
    return "\n".join(
        f"[2024-11-02 08:0{i // 10}:{i % 10}4,908] [INFO] [timer.py:260:stop] epoch=0/micro_step={(i + 1) * 80}"
        f"/global_step={(i + 1) * 10}, RunningAvgSamplesPerSec={v - 1:.1f}, CurrSamplesPerSec={v:.1f}, "
        f"MemAllocated={ma}GB, MaxMemAllocated={mx}GB"
        for i, v in enumerate(samples_per_sec))


DS_BF16 = "[2025-02-21 12:00:03,410] [INFO] [config.py:1005:print]   bfloat16_enabled ............. True\n"
DS_FP16 = "[2025-02-21 12:00:03,411] [INFO] [config.py:1005:print]   fp16_enabled ................. True\n"
MEG_FP32 = "  params_dtype .................................... torch.float32\n"  # Megatron args dump (§3.3)


def test_no_speedup_against_a_baseline_is_a_warning() -> None:
    # the first value is a warm-up outlier and is ignored (WARMUP_FRACTION)
    run = job({"rank_0.log": DS_BF16 + ds_timer([50.0] + [212.0 + (i % 3) for i in range(12)])})
    base = job({"rank_0.log": MEG_FP32 + ds_timer([60.0] + [200.0 + (i % 3) for i in range(12)])}, "base")
    inc = found(run, base)["amp_no_speedup"]
    assert inc.severity == "warning" and inc.rank is None
    assert inc.data["unit"] == "samples/s" and inc.data["speedup"] == pytest.approx(213 / 201, rel=1e-3)
    assert "speed-up 1.06x" in inc.narrative[0] and f"below {MIN_SPEEDUP:g}x" in inc.narrative[0]
    assert inc.evidence[1].path.startswith("baseline:")
    assert "The logs name no GPU" in inc.narrative[1]


def test_expected_speedup_is_configurable() -> None:
    run = job({"rank_0.log": DS_BF16 + ds_timer([260.0] * 8)})
    base = job({"rank_0.log": MEG_FP32 + ds_timer([200.0] * 8)}, "base")
    assert "amp_no_speedup" not in found(run, base)  # 1.3x clears the default 1.15x
    inc = found(run, base, expect=1.5)["amp_no_speedup"]
    assert "expected at least 1.5x (--expect-speedup)" in inc.narrative[0]


def test_megatron_ms_per_iteration_and_hf_summary() -> None:
    def meg(ms: float, n: int = 10) -> str:  # Megatron training_log (§3.1)
        return "\n".join(
            f" [2026-01-14 09:21:0{i % 10}.113254] iteration {i:8d}/  500000 | consumed samples: {i * 512:12d} | "
            f"elapsed time per iteration (ms): {ms + (i % 2) * 5:.1f} | learning rate: 2.999624E-04 | global batch size:   512 | "
            f"lm loss: 2.481377E+00 | loss scale: 1.0 | grad norm: 0.318 | number of skipped iterations:   0 | "
            f"number of nan iterations:   0 |" for i in range(1, n + 1))

    gpu = "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-1a2b)\n"
    run = job({"rank_7.log": gpu + "  bf16 ............................................ True\n" + meg(5300.0)})
    base = job({"rank_7.log": gpu + MEG_FP32 + meg(5600.0)}, "base")
    inc = found(run, base)["amp_no_speedup"]
    assert inc.data["unit"] == "ms/iteration" and inc.data["speedup"] == pytest.approx(5605 / 5305, rel=1e-3)
    assert "has 16-bit tensor cores" in inc.narrative[1]
    # HF Trainer's end-of-training summary (§4.1), 4.x and 5.x value formats
    run = job({"rank_0.log": "TrainingArguments(output_dir=out, fp16=True, bf16=False)\n"
               "{'train_runtime': 120.5, 'train_samples_per_second': 53.1, 'train_steps_per_second': 1.66, "
               "'train_loss': 0.43, 'epoch': 3.0}\n"})
    base = job({"rank_0.log": "{'train_runtime': '125.0', 'train_samples_per_second': '51.2', "
                "'train_steps_per_second': '1.6', 'train_loss': '0.43', 'epoch': '3'}\n"}, "base")
    assert found(run, base)["amp_no_speedup"].data["speedup"] == pytest.approx(53.1 / 51.2, rel=1e-3)


def test_fp16_on_a_gpu_without_tensor_cores_needs_no_baseline() -> None:
    run = job({"rank_0.log": "GPU 0: Tesla P40 (UUID: GPU-0f3c)\n" + DS_FP16})
    inc = found(run)["amp_no_speedup"]
    assert inc.data["reason"] == "no_fast_fp16" and "compute capability 6.1" in inc.narrative[0]
    assert found(job({"rank_0.log": "GPU 0: Tesla V100-SXM2-16GB (UUID: GPU-0f3c)\n" + DS_FP16})) == {}


def test_autocast_disabling_itself_is_reported() -> None:
    # torch/amp/autocast_mode.py (torch >= 2.3) warning when no GPU is visible
    line = ("/usr/lib/python3.11/site-packages/torch/amp/autocast_mode.py:266: UserWarning: CUDA is not available "
            "or torch_xla is imported. Disabling autocast.")
    inc = found(job({"rank_0.log": DS_BF16 + line}))["amp_no_speedup"]
    assert inc.severity == "warning" and "disabled itself" in inc.narrative[0]
    assert inc.evidence[0].line == 2


# ----------------------------------------------------------------------------- b. accuracy
def hf_evals(losses: list[float]) -> str:
    """HF Trainer eval dicts (ProgressCallback.on_log; §4.1), one per epoch."""
    return "\n".join(f"{{'eval_loss': {v}, 'eval_runtime': 3.2, 'eval_samples_per_second': 312.5, "
                     f"'eval_steps_per_second': 9.8, 'epoch': {i + 1}.0}}" for i, v in enumerate(losses))


HF_BF16 = "TrainingArguments(output_dir=out, fp16=False, bf16=True)\n"


def test_persistent_eval_gap_and_plateau() -> None:
    run = job({"rank_0.log": HF_BF16 + hf_evals([1.20, 0.95, 0.90, 0.898, 0.897])})
    base = job({"rank_0.log": hf_evals([1.19, 0.93, 0.85, 0.82, 0.80])}, "base")
    inc = found(run, base)["bf16_accuracy_gap"]
    assert inc.severity == "warning"
    assert inc.data["plateau"] is True and inc.data["gap"] == pytest.approx((0.897 - 0.80) / 0.80, rel=1e-3)
    assert "epoch 5" in inc.narrative[0] and "flattened" in inc.narrative[1] and "while the baseline still improves" in inc.narrative[1]


def test_noise_is_not_a_gap() -> None:
    run = job({"rank_0.log": HF_BF16 + hf_evals([1.20, 0.95, 0.86, 0.815, 0.79])})
    base = job({"rank_0.log": hf_evals([1.19, 0.96, 0.85, 0.82, 0.80])}, "base")
    assert "bf16_accuracy_gap" not in found(run, base)
    # a gap just under the threshold is not reported either
    run = job({"rank_0.log": HF_BF16 + hf_evals([0.80 * (1 + ACCURACY_REL_GAP * 0.9)] * 3)})
    base = job({"rank_0.log": hf_evals([0.80] * 3)}, "base")
    assert "bf16_accuracy_gap" not in found(run, base)


def test_megatron_and_lightning_validation_lines() -> None:
    def meg_val(vals: list[float]) -> str:  # megatron/training/training.py evaluate_and_print_results
        return "\n".join(f" validation loss at iteration {(i + 1) * 1000} | lm loss value: {v:.6E} | lm loss PPL: 1.0E+01 | "
                         for i, v in enumerate(vals))

    run = job({"rank_7.log": "  bf16 ............................................ True\n" + meg_val([2.9, 2.6, 2.55, 2.5])})
    base = job({"rank_7.log": meg_val([2.85, 2.45, 2.30, 2.21])}, "base")
    inc = found(run, base)["bf16_accuracy_gap"]
    assert inc.step == 4000 and "step 4000" in inc.narrative[0]

    def pl(vals: list[float]) -> str:  # Lightning ModelCheckpoint(verbose=True)
        return "\n".join(f"[rank: 0] Epoch {i}, global step {(i + 1) * 100}: 'val_loss' reached {v:0.5f} (best {v:0.5f}), "
                         f"saving model to '/ckpt/epoch={i}.ckpt' as top 1" for i, v in enumerate(vals))

    run = job({"rank_0.log": "Using bfloat16 Automatic Mixed Precision (AMP)\n" + pl([0.7, 0.6, 0.58])})
    base = job({"rank_0.log": pl([0.69, 0.52, 0.47])}, "base")
    assert found(run, base)["bf16_accuracy_gap"].step == 300


def test_training_loss_fallback_without_eval_losses() -> None:
    def steps(final: float) -> str:
        return "\n".join(f"step {i} | loss {2.0 - (2.0 - final) * min(1.0, i / 80):.4f} | grad_norm 1.0" for i in range(1, 101))

    run = job({"rank_0.log": "precision=bf16\n" + steps(0.60)})
    base = job({"rank_0.log": "precision=fp32\n" + steps(0.50)}, "base")
    inc = found(run, base)["bf16_accuracy_gap"]
    assert "final training loss" in inc.narrative[0] and inc.data["gap"] == pytest.approx(0.2, abs=0.01)


# ----------------------------------------------------------------------------- c. memory
def see_memory_usage(label: str, ma: float, max_ma: float) -> str:
    """DeepSpeed see_memory_usage (deepspeed/runtime/utils.py): message, then MA/Max_MA/CA/Max_CA."""
    return (f"[2023-03-01 10:00:00,123] [INFO] [utils.py:784:see_memory_usage] {label}\n"
            f"[2023-03-01 10:00:00,124] [INFO] [utils.py:785:see_memory_usage] MA {ma} GB         Max_MA {max_ma} GB"
            f"         CA {max_ma + 1} GB         Max_CA {max_ma + 1:.0f} GB \n")


def test_bf16_using_more_memory_than_fp32() -> None:
    run = job({"rank_0.log": DS_BF16 + see_memory_usage("Before initializing optimizer states", 2.1, 2.3)
               + see_memory_usage("After initializing optimizer states", 14.8, 15.2) + ds_timer([200.0] * 3, 15.1, 31.9)})
    base = job({"rank_0.log": MEG_FP32 + see_memory_usage("After initializing optimizer states", 16.4, 16.6)
                + ds_timer([200.0] * 3, 16.5, 29.8)}, "base")
    inc = found(run, base)["bf16_memory_overhead"]
    assert inc.severity == "warning" and inc.data["field"] == "mem_max_gb"
    assert inc.data["ratio"] == pytest.approx(31.9 / 29.8, rel=1e-3)
    assert "MORE than fp32" in inc.narrative[0] and "16 bytes per parameter" in inc.narrative[1]
    assert "'Before initializing optimizer states'" in inc.narrative[2]


def test_memory_that_did_not_halve_is_info_and_half_is_fine() -> None:
    def meg_mem(alloc: float, peak: float) -> str:  # Megatron report_memory, several records per line (real logs)
        rec = (f"[Rank {{r}}] (after 10 iterations) memory (MB) | allocated: {alloc} | max allocated: {peak} | "
               f"reserved: {peak + 500} | max reserved: {peak + 500}")
        return "Theoretical memory footprints: weight and optimizer=20029.52 MB\n" + rec.format(r=1) + rec.format(r=0) + "\n"

    run = job({"rank_0.log": "  bf16 ............................................ True\n" + meg_mem(20000.0, 27000.0)})
    base = job({"rank_0.log": meg_mem(20500.0, 31000.0)}, "base")
    inc = found(run, base)["bf16_memory_overhead"]
    assert inc.severity == "info" and inc.data["ratio"] == pytest.approx(27000 / 31000, rel=1e-3)
    assert MEMORY_EXPECTED_RATIO <= inc.data["ratio"] < 1.0
    assert "theoretical weight-and-optimizer footprint" in inc.narrative[2]
    run = job({"rank_0.log": "  bf16 ............................................ True\n" + meg_mem(9000.0, 14000.0)})
    assert "bf16_memory_overhead" not in found(run, base)


def test_oom_reserved_figures_are_memory_samples() -> None:
    line = ("[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity "
            "of 79.18 GiB of which 59.62 MiB is free. Including non-PyTorch memory, this process has 79.10 GiB memory in "
            "use. Of the allocated memory 77.50 GiB is allocated by PyTorch, and 1.08 GiB is reserved by PyTorch but "
            "unallocated.")
    st = job({"rank_0.log": line})
    (p,) = st.symptoms.memory.items
    assert p.data["mem_alloc_gb"] == 77.5 and p.data["mem_reserved_gb"] == pytest.approx(78.58)
    assert {i.failure for i in incidents(st)} == {"cuda_oom"}


# ----------------------------------------------------------------------------- d. early loss
def steps_fp16(losses: list[float], scales: list[float] | None = None) -> str:
    out = ["config: precision=fp16 loss_scaling=true world_size=1"]
    for i, v in enumerate(losses, 1):
        grad = "nan" if scales and i < len(scales) and scales[i] < scales[i - 1] else "1.0"
        out.append(f"step {i} | loss {v:.4f} | grad_norm {grad}" + (f" | loss_scale {scales[i - 1]:g}" if scales else ""))
    return "\n".join(out)


def test_noisy_but_decreasing_fp16_loss_is_info_with_the_skips_explained() -> None:
    losses = [2.0, 2.1, 1.9, 2.05, 1.8, 1.85, 1.6, 1.7, 1.5, 1.55, 1.4, 1.45, 1.3, 1.35, 1.2, 1.25]
    scales = [65536.0, 32768.0, 16384.0] + [16384.0] * 13
    inc = found(job({"rank_0.log": steps_fp16(losses, scales)}))["fp16_early_instability"]
    assert inc.severity == "info" and inc.data["unstable"] is False and inc.data["skipped"] == 2
    assert "skipped by the dynamic loss scaler" in inc.narrative[1] and "no action needed" in inc.narrative[-1]


def test_unstable_early_fp16_loss_is_a_warning() -> None:
    flat = [2.0, 2.2, 1.9, 2.3, 2.0, 2.4, 1.95, 2.35, 2.1, 2.3, 2.0, 2.4]
    # not trending down while the scaler skipped a good share of the steps (it held the weights still):
    # overflows that began after five calm steps, not the scaler's start-up search (whose skips are
    # calibration: see test_deepspeed_overflow_pairs.py)
    scales = [65536.0 / 2 ** max(0, i - 4) for i in range(len(flat))]
    inc = found(job({"rank_0.log": steps_fp16(flat, scales)}))["fp16_early_instability"]
    assert inc.severity == "warning" and "did not trend down" in inc.narrative[0]
    # ... or while an fp32 baseline of the same steps trended down
    fp32 = steps_fp16([2.0 - i * 0.05 for i in range(12)]).replace("fp16", "fp32")
    inc = found(job({"rank_0.log": steps_fp16(flat)}), baseline=job({"rank_0.log": fp32}))["fp16_early_instability"]
    assert inc.severity == "warning" and "specific to the fp16 run" in inc.narrative[-1]
    # with neither, a noisy loss that does not trend down is the run's own noise: a note (round 18)
    inc = found(job({"rank_0.log": steps_fp16(flat)}))["fp16_early_instability"]
    assert inc.severity == "info" and "compare with an fp32 run" in inc.narrative[-1]
    jump = [2.0, 1.9, 1.8, 1.75, 1.7, 1.6, 4.5, 1.55, 1.5, 1.45, 1.4, 1.35]
    inc = found(job({"rank_0.log": steps_fp16(jump)}))["fp16_early_instability"]
    assert inc.severity == "warning" and "jumped to 2.6x its recent level at step 7" in inc.narrative[0]
    assert inc.evidence[1].line == 8  # the step-7 line (line 1 is the config line)


def test_monotone_or_non_fp16_or_late_loss_is_not_reported() -> None:
    assert found(job({"rank_0.log": steps_fp16([2.0 - i * 0.05 for i in range(20)])})) == {}
    fp32 = steps_fp16([2.0, 2.2, 1.9, 2.3, 2.0, 2.4, 1.95, 2.35, 2.1, 2.3, 2.0, 2.4]).replace("fp16", "fp32")
    assert found(job({"rank_0.log": fp32})) == {}
    late = "\n".join(f"step {EARLY_STEPS + i} | loss {2.0 + (i % 2) * 0.3:.4f} | grad_norm 1.0" for i in range(1, 30))
    assert found(job({"rank_0.log": "precision=fp16\n" + late})) == {}


def test_info_observations_are_left_out_next_to_a_critical_incident() -> None:
    text = steps_fp16([2.0, 2.1, 1.9, 2.05, 1.8, 1.85, 1.6, 1.7, 1.5, 1.55, 1.4, 1.45]) + "\nstep 13 | loss nan | grad_norm nan"
    assert set(found(job({"rank_0.log": text}))) == {"amp_bf16_vs_fp16"}


# ----------------------------------------------------------------------------- NCCL versions
def test_different_nccl_versions_across_ranks() -> None:
    # NCCL init.cc showVersion (§6), one line per communicator rank 0, host:pid:tid prefix
    ok = "gpu-node-017:469398:469398 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
    odd = "gpu-node-042:51002:51002 [0] NCCL INFO NCCL version 2.19.3+cuda12.2\n"
    st = job({"rank_0.log": ok, "rank_1.log": ok, "rank_2.log": ok, "rank_8.log": odd})
    inc = found(st)["nccl_version_mismatch"]
    assert inc.rank == 8 and inc.severity == "warning"
    assert "2.19.3 (rank 8); 2.21.5 (rank 0, rank 1, rank 2)" in inc.narrative[0]
    timeout = ("[rank0]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation "
               "timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600020 "
               "milliseconds before timing out.\n")
    st = job({"rank_0.log": ok + timeout, "rank_1.log": ok, "rank_8.log": odd})
    assert found(st)["nccl_version_mismatch"].severity == "critical"


def test_nccl_own_mismatch_warning_outranks_the_nccl_error() -> None:
    warn = ("gpu-node-042:51002:51090 [0] init.cc:1243 NCCL WARN Mismatched NCCL version detected : rank 0 version 22105 "
            "rank 8 version 21903\n")
    err = ("[rank8]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
           "ProcessGroupNCCL.cpp:1970, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3\n")
    incs = incidents(job({"rank_8.log": warn + err}))
    assert incs[0].failure == "nccl_version_mismatch" and incs[0].rank == 8
    assert "nccl_version_mismatch" not in {i.failure for i in incs[1:]}


# ----------------------------------------------------------------------------- the track
def test_thinned_series_stays_bounded_and_keeps_the_ends() -> None:
    t = _Thinned(cap=100)
    for i in range(10_000):
        t.append(i)
    assert len(t.items) <= 100 and t.items[0] == 0 and t.items[-1] >= 9_800
    track = SymptomTrack()
    assert track.options.baseline is None and track.options.expect_speedup is None


# ----------------------------------------------------------------------------- real runs
def diagnose_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "monitor", "diagnose", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=120)


@pytest.fixture(scope="module")
def recorded() -> dict[str, Path]:
    runs = {p: SEED / p for p in ("fp32", "bf16", "fp16")}
    missing = [p for p, d in runs.items() if not (d / "run").is_dir()]
    if missing:
        pytest.fail(f"seed recordings missing: {missing}; run `python -m tests.detectors.fixtures.seed.generate`")
    return runs


def test_recorded_bf16_run_against_fp32(recorded: dict[str, Path]) -> None:
    r = diagnose_cli(str(recorded["bf16"]), "--baseline", str(recorded["fp32"]), "--format", "json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["context"]["precision"] == "bf16" and rep["context"]["framework"] == "megatron"
    by = {i["failure"]: i for i in rep["incidents"]}
    assert set(by) == {"bf16_accuracy_gap", "amp_no_speedup"}
    gap = by["bf16_accuracy_gap"]
    assert gap["severity"] == "warning" and gap["initiator"]["rank"] is None and gap["initiator"]["step"] == 300
    assert "holds for the last 5 of 6 comparison(s)" in gap["root_cause"][0]
    ev = gap["initiator"]["evidence"]
    assert "validation loss at iteration 300" in ev[0]["text"] and ev[1]["path"].startswith("baseline:")
    assert "fp32 baseline" in by["amp_no_speedup"]["root_cause"][0]
    assert any("baseline:" in n and "precision fp32" in n for n in rep["notes"])


def test_recorded_fp16_run_against_fp32(recorded: dict[str, Path]) -> None:
    r = diagnose_cli(str(recorded["fp16"]), "--baseline", str(recorded["fp32"]), "--format", "json")
    assert r.returncode == 0, r.stderr
    by = {i["failure"]: i for i in json.loads(r.stdout)["incidents"]}
    assert "bf16_accuracy_gap" not in by  # the entry is about bf16
    early = by["fp16_early_instability"]
    assert early["severity"] == "info"
    text = " ".join(early["root_cause"])
    assert "skipped by the dynamic loss scaler" in text and "just as non-monotonic" in text
    assert by["loss_scale_warmup"]["severity"] == "info"


def test_recorded_runs_alone_are_healthy_and_fail_on_works(recorded: dict[str, Path]) -> None:
    for p in ("fp32", "bf16"):
        r = diagnose_cli(str(recorded[p]), "--format", "json")
        assert r.returncode == 0 and json.loads(r.stdout)["incidents"] == [], (p, r.stdout[:500])
    r = diagnose_cli(str(recorded["bf16"]), "--baseline", str(recorded["fp32"]), "--expect-speedup", "1.5",
                     "--fail-on", "amp_no_speedup", "-f", "json")
    assert r.returncode == 3 and "amp_no_speedup" in r.stderr


def test_baseline_errors_are_one_readable_message(tmp_path: Path, recorded: dict[str, Path]) -> None:
    r = diagnose_cli(str(recorded["bf16"]), "--baseline", str(tmp_path / "nope"), "-f", "json")
    assert r.returncode == 2 and "--baseline" in r.stderr and "Traceback" not in r.stderr
    r = diagnose_cli(str(recorded["bf16"]), "--expect-speedup", "1.5", "-f", "json")
    assert r.returncode == 0 and any("--baseline" in n for n in json.loads(r.stdout)["notes"])


def test_a_flat_early_loss_after_the_scalers_first_steps_is_no_instability() -> None:
    """corpus g16-020: five halvings in the first steps, then a loss flat within 4 % of 2.08
    for 120 steps: the ups are noise, no warning (a loss that jumps still warns)."""
    lines = [f"[rank 0] Gradient overflow. Skipping step {s}, loss scale reduced to {2 ** (24 - s)}" for s in range(1, 6)]
    flat = [2.10, 2.09, 2.03, 2.10, 2.07, 2.04, 2.07, 2.09, 2.08, 2.08, 2.16, 2.05]
    ok = lines + [f"[rank 0] step {10 * (i + 1):4d} | loss {v:.4f} | scale 524288" for i, v in enumerate(flat)]
    found = {i.failure: i.severity for i in incidents(fed_state(ok, "train.log"))}
    assert found.get("fp16_early_instability") in (None, "info")
    jumpy = [*flat[:8], 6.5, *flat[9:]]
    bad = lines + [f"[rank 0] step {10 * (i + 1):4d} | loss {v:.4f} | scale 524288" for i, v in enumerate(jumpy)]
    found = {i.failure: i.severity for i in incidents(fed_state(bad, "train.log"))}
    assert found.get("fp16_early_instability") == "warning"


def test_skips_are_weighed_against_the_steps_the_window_spans() -> None:
    """Warm-up skips at steps 1 and 4 and one probe at step 105 beside 12 flat loss lines, one
    per 10 steps, at chance level: a few skips over 120 steps is no window the scaler held still,
    so the flat loss is noise (a generated fp16 job's shape, corpus holdout23)."""
    skip = "[fp16] step {s}: gradient overflow, skipping update; loss scale {a} -> {b}"
    lines = [skip.format(s=1, a=1048576, b=524288), skip.format(s=4, a=524288, b=262144)]
    flat = [2.3343, 2.3361, 2.3270, 2.2630, 2.3338, 2.2952, 2.3172, 2.3064, 2.2999, 2.3108]
    lines += [f"[train] step {10 * (i + 1)} loss {v:.4f} scale {262144 if i < 5 else 524288}" for i, v in enumerate(flat)]
    lines += [skip.format(s=105, a=1048576, b=524288), "[train] step 110 loss 2.2991 scale 524288",
              "[train] step 120 loss 2.3163 scale 524288"]
    found = {i.failure: i.severity for i in incidents(fed_state(lines, "train.log"))}
    assert found.get("fp16_early_instability") in (None, "info")


def test_an_early_jump_must_be_a_new_high_of_the_window() -> None:
    # a noisy fp16 loss (random-data batches) falling overall: 0.62 is more than twice its recent median
    # but below the 0.92 it started at, so it is noise, not a jump (a generated job, corpus g23c-015)
    noisy = [0.92, 0.60, 0.29, 0.52, 0.64, 0.43, 0.35, 0.40, 0.20, 0.28, 0.22, 0.25, 0.21, 0.62, 0.24, 0.22]
    inc = found(job({"rank_0.log": steps_fp16(noisy)})).get("fp16_early_instability")
    assert inc is None or inc.severity == "info"
