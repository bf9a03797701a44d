"""Several processes that each run out of memory at one step (issue #12, cuda_oom): the step does not
fit, no rank started it, and the others' reports are no consequences of the first. Named only
when a launcher says which of them failed first (torchrun's first observed failure)."""

from __future__ import annotations

from detectors.diagnosis import build_report
from tests.helpers import engine_verdict, fed_state

# PaddlePaddle's allocator error as its workers print it (simplify23/Light-STR-Competition-No.5
# debug/workerlog.1, commit 281b5e5, corpus holdout29 h29a-020): each worker's log in a section
# of its own, as ``tail`` prints several files
_PADDLE = ("SystemError: (Fatal) Operator hard_swish raises an paddle::memory::allocation::BadAlloc exception.",
           "The exception content is", ":ResourceExhaustedError: ", "",
           "Out of memory error on GPU {g}. Cannot allocate 504.000244MB memory on GPU {g}, available memory is only "
           "13{f}.062500MB.", "", "Please check whether there is any other process using GPU {g}.")


def _paddle(local: int, gpu: int, free: int) -> list[str]:
    return [f"==> debug/workerlog.{local} <==",
            f"I0507 10:31:32.280385  4390 nccl_context.cc:189] init nccl context nranks: 4 local rank: {local} gpu id: "
            f"{gpu} ring id: 0", "Traceback (most recent call last):", '  File "tools/train.py", line 120, in <module>',
            "    main(config, device, logger, vdl_writer)",
            *(ln.format(g=gpu, f=free) for ln in _PADDLE)]


# PyTorch's message (visionrd-ai/copilot-svtas log/workerlog.0 and .1, commit adf2d8e, corpus holdout29
# h29a-015): two workers on one GPU, each naming the other's process, with its own free memory
_TORCH = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 98.00 MiB. GPU 0 has a total capacity of "
          "23.69 GiB of which {free} MiB is free. Including non-PyTorch memory, this process has 11.80 GiB memory in use.")


def _torch(local: int, free: str) -> list[str]:
    return [f"==> log/workerlog.{local} <==", "Traceback (most recent call last):",
            '  File "tools/launch/train.py", line 88, in <module>', "    main()",
            '  File "torch/nn/modules/conv.py", line 454, in _conv_forward', "    return F.conv2d(input, weight, bias, self.stride,",
            _TORCH.format(free=free)]


def test_each_workers_own_oom_at_one_step_names_no_rank() -> None:
    lines = _paddle(1, 5, 5) + _paddle(2, 6, 3) + _paddle(3, 7, 5)
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("cuda_oom", None)
    narrative = build_report(fed_state(lines))["incidents"][0]["root_cause"]
    assert narrative[0].startswith("Ranks 1, 2, 3 each ran out of memory")


def test_two_workers_on_one_gpu_both_run_out() -> None:
    top = engine_verdict(_torch(0, "58.81") + _torch(1, "72.81"))[0]
    assert (top.failure, top.rank) == ("cuda_oom", None)


def test_one_report_read_under_two_ranks_stays_that_ranks() -> None:
    # the same message word for word under two ranks is one report read twice (a CPU torchrun job of
    # ours, corpus holdout23 g23-035: the quoted ``raise`` line and the exception line below it)
    lines = _torch(0, "58.81") + _torch(1, "58.81")
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("cuda_oom", 0)


def test_the_launchers_first_failed_worker_among_them_is_named() -> None:
    # torchrun's agent line (the shape of ../shared/real-logs 054's): its first observed failure
    lines = _torch(0, "58.81") + _torch(1, "72.81") + [
        "E1207 16:34:50.933000 31904 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: 1) "
        "local_rank: 1 (pid: 32698) of binary: /venv/bin/python3"]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("cuda_oom", 1)
