"""The same failures in the words of other callers and libraries: XLA's and torch.cuda.nccl's checks
of NCCL calls, the verbs provider's error completions, Caffe2's CUDA enforce, Ray's OOM killer.
Real lines, their threads named; none comes from the corpus cases that showed the class."""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict

CASES = [
    # --- XLA (JAX, TF-XLA) checking an NCCL call: xla/service/gpu/nccl_utils.cc and the thunks
    ("nccl_error", [  # https://github.com/jax-ml/jax/issues/17399
        "W external/xla/xla/service/gpu/runtime/support.cc:58] Intercepted XLA runtime error:",
        "INTERNAL: external/xla/xla/service/gpu/nccl_utils.cc:275: NCCL operation ncclCommInitRank(&comm, nranks, id, "
        "rank) failed: unhandled cuda error"]),
    ("nccl_error", [  # https://github.com/tensorflow/tensorflow/issues/62757
        "  (0) INTERNAL:  Failed to execute XLA Runtime executable: run time error: custom call 'xla.gpu.all_reduce' "
        "failed: external/local_xla/xla/service/gpu/nccl_utils.cc:297: NCCL operation ncclCommInitRank(&comm, nranks, "
        "id, rank) failed: invalid usage; current tracing scope: all-reduce-start.4; current profiling annotation: "
        "XlaModule:#hlo_module=a_inference_run_step_7562__.4006,program_id=447#."]),
    ("nccl_error", [  # https://github.com/jax-ml/jax/issues/15628
        "2023-04-16 15:44:18.280050: E external/xla/xla/pjrt/pjrt_stream_executor_client.cc:2432] Execution of replica "
        "1 failed: INTERNAL: Failed to execute XLA Runtime executable: run time error: custom call 'xla.gpu.all_reduce' "
        "failed: external/xla/xla/service/gpu/nccl_all_reduce_thunk.cc:244: NCCL operation ncclGroupEnd() failed: "
        "unhandled cuda error."]),
    # --- torch/csrc/cuda/nccl.cpp: 'NCCL Error N: reason'
    ("nccl_error", ["RuntimeError: NCCL Error 1: unhandled cuda error"]),  # pytorch/pytorch#11756 (DataParallel)
    ("nccl_error", [  # https://github.com/TheAtticusProject/cuad/issues/9
        "terminate called after throwing an instance of 'std::runtime_error'",
        "  what():  NCCL Error 1: unhandled cuda error"]),
    # https://github.com/bubbliiiing/yolov5-pytorch/issues/123
    ("nccl_error", ["RuntimeError: NCCL Error 2: unhandled system error (run with NCCL_DEBUG=INFO for details)"]),
    # --- libmlx5 (rdma-core providers/mlx5/cq.c) dumping an error completion
    ("nccl_error", [  # an RDMA guide's send/recv test (the CQE dump and the verbs status that follow)
        "mlx5: n136-096-142: got completion with error:",
        "00000000 00000000 00000000 00000000",
        "00000000 00008716 0a001f8e 000027d2",
        "completion was found in CQ with status 0xd"]),
    ("nccl_error", [  # an HPC user's MPI job over DAPL (the provider's line is the same whoever drives it)
        "mlx5: j03r2n01: got completion with error:",
        "00000000 00000000 00000000 00000000",
        "000000b9 00000000 00000000 00000000"]),
    # --- Caffe2's CUDA_ENFORCE: cudaErrorMemoryAllocation (2)
    ("cuda_oom", [  # https://github.com/facebookresearch/Detectron/issues/554
        "RuntimeError: [enforce fail at context_gpu.cu:336] error == cudaSuccess. 2 vs 0. Error at: "
        "/var/lib/jenkins/conda-bld/caffe2-cuda9.0-cudnn7_1526317478991/work/caffe2/core/context_gpu.cu:336: out of "
        "memory Error from operator: "]),
    ("cuda_oom", [  # the Detectron video-inference guide's example of the error
        "terminate called after throwing an instance of 'caffe2::EnforceNotMet'",
        "  what():  [enforce fail at context_gpu.cu:343] error == cudaSuccess. 2 vs 0. Error at: "
        "/var/lib/jenkins/workspace/caffe2/core/context_gpu.cu:343: out of memory Error from operator: "]),
    # --- Ray's memory monitor killing a task or actor (ray.exceptions.OutOfMemoryError)
    ("host_oom", [  # https://github.com/ray-project/ray/pull/30312 (the message as Ray prints it)
        "E                       ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.",
        "E                       Memory on the node (IP: 172.17.0.2, ID: 8c5a1410013588601db2a6344fa1e07476f4378155083682818ebb94) "
        "where the task (task ID: 41617bc740ae9ca27726b37f8578c02f4cf1698d01000000, name=allocate_memory, pid=548, memory "
        "used=12.18GB) was running was 21.91GB / 33.28GB (0.658192), which exceeds the memory usage threshold of 0.65. "
        "Ray killed this worker (ID: 0f7695fad1848c8703eb36240efa3a80cb82ea43206919f4"]),
    ("host_oom", [  # https://github.com/ray-project/ray/issues/32195 (a release test's log: only the closing sentence)
        "Refer to the documentation on how to address the out of memory issue: "
        "https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html. Consider provisioning more memory on "
        "this node or reducing task parallelism by requesting more CPUs per task. To adjust the kill threshold, set the "
        "environment variable `RAY_memory_usage_threshold` when starting Ray."]),
]


@pytest.mark.parametrize(("failure", "lines"), CASES)
def test_a_library_wording_of_a_known_failure(failure: str, lines: list[str]) -> None:
    found = engine_verdict(lines)
    assert found and found[0].failure == failure, [(i.failure, i.rank) for i in found]


def test_the_verbs_provider_named_in_nccl_info_is_no_failure() -> None:
    # NCCL's INFO line naming the mlx5 HCA it uses (NVIDIA/nccl#1052): the provider's name alone is no error
    line = "node2:14159:14168 [0] NCCL INFO NET/IB : Using [0]mlx5_4:1/RoCE [RO]; OOB enp24s0np0:10.10.10.1<0>"
    assert not [i for i in engine_verdict([line]) if i.severity == "critical"]


@pytest.mark.parametrize("line", [
    "TypeError: BFloat16 is not supported on MPS",  # oobabooga/textgen#5216, QwenLM/Qwen#497
    # https://github.com/pytorch/pytorch/issues/78168 (an M1 Max)
    "TypeError: Trying to convert BFloat16 to the MPS backend but it does not have support for that dtype.",
])
def test_apples_mps_backend_refusing_bf16_is_bf16_unsupported(line: str) -> None:
    found = engine_verdict(["Traceback (most recent call last):", '  File "app.py", line 3, in <module>',
                            "    model.to(device, dtype=torch.bfloat16)", line])
    assert found and found[0].failure == "bf16_unsupported_gpu"
