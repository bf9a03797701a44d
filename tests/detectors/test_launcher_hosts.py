"""A launcher that reports failed workers on several hosts shows a multi-node job: a local
``GPU N`` in a rank-less error then names no global rank. On one host it still may (inferred).
Every line is a real one (URLs below)."""

from __future__ import annotations

from functools import partial

from tests.helpers import top_verdict

# https://github.com/EveryVoiceTTS/EveryVoice/issues/178 (corpus h6b-010): two nodes, ib12gpu-001/002
_OOM_GPU2 = ("OutOfMemoryError: CUDA out of memory. Tried to allocate 112.00 MiB. GPU 2 has a total capacty of 15.78 GiB "
             "of which 27.19 MiB is free. Process 307065 has 15.75 GiB memory in use.")
_TWO_NODES = ["srun: error: ib12gpu-002: task 4: Exited with exit code 1",
              "srun: error: ib12gpu-001: tasks 0-1: Exited with exit code 1",
              "srun: error: ib12gpu-002: task 7: Exited with exit code 1",
              "srun: error: ib12gpu-002: task 6: Exited with exit code 1",
              "srun: error: ib12gpu-001: task 2: Exited with exit code 1"]

# https://github.com/open-mmlab/mmdetection3d/issues/2116 (corpus): one node, gpu-4-11
_OOM_GPU1 = ("RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB (GPU 1; 79.35 GiB total capacity; 76.56 GiB "
             "already allocated; 2.62 MiB free; 77.09 GiB reserved in total by PyTorch)")
_ONE_NODE = ["srun: error: gpu-4-11: task 1: Exited with exit code 1",
             "srun: launch/slurm: _step_signal: Terminating StepId=36525.0",
             "srun: error: gpu-4-11: task 0: Terminated",
             "srun: error: gpu-4-11: tasks 2-3: Terminated"]


_top = partial(top_verdict, path="x.log")


def test_failures_on_two_hosts_make_the_gpu_index_no_rank() -> None:
    assert _top([_OOM_GPU2, *_TWO_NODES]) == ("cuda_oom", None)


def test_the_same_report_on_one_host_keeps_the_gpu_index() -> None:
    # the EveryVoice lines with every task on one host: a single node, GPU 2 is the best evidence (inferred)
    one_host = [line.replace("ib12gpu-001", "ib12gpu-002") for line in _TWO_NODES]
    assert _top([_OOM_GPU2, *one_host]) == ("cuda_oom", 2)


def test_one_host_srun_report_names_the_failed_task() -> None:
    assert _top([_OOM_GPU1, *_ONE_NODE]) == ("cuda_oom", 1)
