"""torchrun's ChildFailedError summary quotes each failed worker's error file (``error_file:``
then ``traceback : Traceback ...`` and the worker's exception) when the workers' own output went to
files (``--redirects 3 --log-dir``): the console holds only the launcher's lines. A worker whose
quoted error is a collective timeout raised that timeout: its exception exit is the timeout's, no
crash of its own, root cause or not (corpus holdout33 g33b-015: a pipeline whose every stage
receives before it sends, four identical gloo timeouts, torchrun's root cause rank 0)."""

from __future__ import annotations

from tests.helpers import engine_verdict

_SITE = "/usr/local/lib/python3.11/site-packages"


def _entry(i: int, rank: int, error: str) -> list[str]:
    return [f"[{i}]:", "  time      : 2026-12-08_02:57:49", "  host      : localhost",
            f"  rank      : {rank} (local_rank: {rank})", f"  exitcode  : 1 (pid: {31254 + rank}) ",
            f"  error_file: /tmp/logs15/none_46uhrl1g/attempt_0/{rank}/error.json",
            "  traceback : Traceback (most recent call last):",
            f'    File "{_SITE}/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 367, in wrapper',
            "      return f(*args, **kwargs)", '    File "/workspace/train.py", line 15, in main',
            "      dist.recv(act, src=(rank - 1) % world)",
            f'    File "{_SITE}/torch/distributed/distributed_c10d.py", line 2799, in recv', "      work.wait()",
            f"  {error}"]


def _summary(root_error: str) -> list[str]:
    timeout = ("RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out "
               "waiting 20000ms for recv operation to complete")
    lines = ["E1208 02:57:51.801000 31237 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: 1) "
             "local_rank: 0 (pid: 31254) of binary: /usr/local/bin/python3",
             "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ", "=" * 60, "job/train.py FAILED",
             "-" * 60, "Failures:"]
    for i, r in enumerate((1, 2, 3), 1):
        lines += _entry(i, r, timeout)
    return [*lines, "-" * 60, "Root Cause (first observed failure):", *_entry(0, 0, root_error or timeout), "=" * 60]


def test_every_worker_quoting_a_timeout_is_no_crash_of_the_root_cause() -> None:
    top = engine_verdict(_summary(""))[0]
    assert top.failure == "collective_timeout" and top.rank is None


def test_a_root_cause_quoting_its_own_error_is_still_named() -> None:
    top = engine_verdict(_summary("ValueError: stage 0 got an empty batch"))[0]
    assert (top.failure, top.rank) == ("rank_exception", 0)
