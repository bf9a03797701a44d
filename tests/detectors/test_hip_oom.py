"""ROCm's HIP runtime reports a failed allocation as ``hipErrorOutOfMemory`` (TensorFlow-ROCm's
stream executor spells it ``HIP_ERROR_OutOfMemory``; PyTorch-ROCm says ``HIP error: out of
memory``). Real pastes: keras-team/keras#13889 (TF 2.12, ROCm 5.6), ROCm/hip#2132 (a HIP
program's own check), vladmandic/sdnext#4801 (PyTorch-ROCm's hint line)."""

from __future__ import annotations

from tests.helpers import engine_verdict

_TF_ROCM = [
    "cdipietrantonio@nid002070:/scratch/pawsey0001/cdipietrantonio/models> python3 01_horovod_mnist.py",
    "2023-11-01 16:19:17.812101: E tensorflow/compiler/xla/stream_executor/rocm/rocm_driver.cc:606] failed to allocate"
    " 127.99TiB (140729850295296 bytes) from device: HIP_ERROR_OutOfMemory",
    "2023-11-01 16:19:17.812133: E tensorflow/compiler/xla/stream_executor/rocm/rocm_driver.cc:606] failed to allocate"
    " 115.19TiB (126656857505792 bytes) from device: HIP_ERROR_OutOfMemory",
]
_HIP_CHECK = ["error: 'hipErrorOutOfMemory'(2) at square.cpp:76"]
_TORCH_ROCM = [
    "Traceback (most recent call last):",
    '  File "train.py", line 40, in <module>',
    "    out = model(x)",
    "torch.AcceleratorError: HIP error: out of memory",
    "Search for `hipErrorOutOfMemory' in https://rocm.docs.amd.com/projects/HIP/en/latest/index.html for more information.",
    "HIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
    "For debugging consider passing AMD_SERIALIZE_KERNEL=3",
]


def test_hip_out_of_memory_is_a_device_oom() -> None:
    for lines in (_TF_ROCM, _HIP_CHECK, _TORCH_ROCM):
        assert [i.failure for i in engine_verdict(lines)][:1] == ["cuda_oom"], lines[0]


def test_another_hip_error_is_not_an_oom() -> None:
    lines = ["Traceback (most recent call last):", '  File "train.py", line 40, in <module>',
             "RuntimeError: HIP error: no kernel image is available for execution on the device"]
    assert all(i.failure != "cuda_oom" for i in engine_verdict(lines))


def _ds_oom(r: int, size: str) -> list[str]:
    return [f"[rank{r}]: Traceback (most recent call last):", f'[rank{r}]:   File "/home/sky/LLM/run/quantize.py", line 44, in train_step',
            f"[rank{r}]:     ds_engine.backward(loss)",
            f"[rank{r}]: torch.OutOfMemoryError: HIP out of memory. Tried to allocate {size}. GPU {r} has a total capacity of "
            "23.98 GiB of which 0 bytes is free. Of the allocated memory 22.80 GiB is allocated by PyTorch"]


def test_the_same_allocation_failing_at_one_step_on_every_gpu_names_no_rank() -> None:
    # a DeepSpeed bf16 quantisation run on two ROCm GPUs (corpus holdout24 h24d-008): both ranks fail
    # the same 76 MiB allocation in the same backward: a symmetric step, no rank started it
    steps = [f"[rank{r}]: step 2 loss 3.21{r}" for r in (0, 1)]
    top = engine_verdict([*steps, *_ds_oom(1, "76.00 MiB"), *_ds_oom(0, "76.00 MiB")])[0]
    assert (top.failure, top.rank) == ("cuda_oom", None)
    top = engine_verdict([*steps, *_ds_oom(1, "76.00 MiB"), *_ds_oom(0, "2.00 GiB")])[0]
    assert (top.failure, top.rank) == ("cuda_oom", 1)


def _torchrun_summary(root: int, others: list[tuple[int, int]]) -> list[str]:
    # torchrun's ChildFailedError summary: the other failures first, the root cause last
    lines = ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ", "=" * 40, "sft.py FAILED",
             "-" * 40, "Failures:"]
    for i, (r, code) in enumerate(others, 1):
        lines += [f"[{i}]:", "  time      : 2026-04-20_11:41:13", "  host      : node1", f"  rank      : {r} (local_rank: {r})",
                  f"  exitcode  : {code} (pid: {170970 + r})",
                  "  error_file: <N/A>" if code > 0 else f"  error_file: <N/A>\n  traceback : Signal {-code} (SIGTERM) received by PID {170970 + r}"]
    lines += ["-" * 40, "Root Cause (first observed failure):", "[0]:", "  time      : 2026-04-20_11:41:12",
              "  host      : node1", f"  rank      : {root} (local_rank: {root})", f"  exitcode  : 1 (pid: {170970 + root})",
              "  error_file: <N/A>", "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
              "=" * 40]
    return lines


def test_the_same_allocation_on_several_gpus_takes_torchruns_root_cause_even_listed_last() -> None:
    # ms-swift loading weights on 8 GPUs (corpus holdout25 h25b-020): ranks 3 and 4 fail the same
    # 20 MiB allocation, only rank 4's line carries a progress count; torchrun's summary lists rank
    # 4 among the failures and rank 3 as its root cause
    lines = [*_ds_oom(3, "20.00 MiB"),
             "Loading weights:  89%|########9 | 901/1013 [00:13<00:00, 430.77it/s]Loading weights: 100%|##########| "
             "1013/1013 [00:13<00:00, 72.23it/s]",
             *_ds_oom(4, "20.00 MiB")]
    lines += _torchrun_summary(3, [(0, -15), (4, 1), (5, -15)])
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("cuda_oom", 3)
