"""torch 1.9–1.10 elastic: a worker that wrote no error file is reported by a banner, not by the
later ``failed (exitcode: N) local_rank: L`` line. Its second line names the worker:
``Child process PID (local_rank L) FAILED (exitcode E)``; the launcher names the failed worker
itself, so on a single node that is the initiating rank. Real banners from two threads below."""

from __future__ import annotations

from detectors.diagnosis import build_report
from tests.helpers import fed_state

_STAR = "*" * 70


def _banner(pid: int, local_rank: int, code: int) -> list[str]:
    # the banner as torch 1.9/1.10 prints it (verbatim from the threads named in each test)
    return [_STAR, "               CHILD PROCESS FAILED WITH NO ERROR_FILE                ", _STAR,
            "CHILD PROCESS FAILED WITH NO ERROR_FILE",
            f"Child process {pid} (local_rank {local_rank}) FAILED (exitcode {code})",
            f"Error msg: Process failed with exitcode {code}",
            "Without writing an error file to <N/A>.",
            "While this DOES NOT affect the correctness of your application,",
            "no trace information about the error will be available for inspection.",
            "Consider decorating your top level entrypoint function with",
            "torch.distributed.elastic.multiprocessing.errors.record. Example:"]


def _top(lines: list[str]) -> dict:
    incidents = build_report(fed_state(lines, "console.log"))["incidents"]
    assert incidents, "no incident"
    return incidents[0]


def test_the_banner_alone_names_the_failed_worker() -> None:
    # https://github.com/facebookresearch/MetaICL/issues/8: torch.distributed.run --nproc_per_node=8
    inc = _top(_banner(17057, 0, 1))
    assert inc["failure"] == "rank_exception"
    assert inc["initiator"]["rank"] == 0
    assert inc["initiator"]["rank_from"] == "launcher"
    assert "Child process 17057 (local_rank 0) FAILED (exitcode 1)" in inc["initiator"]["evidence"][0]["text"]


def test_an_untagged_traceback_above_the_banner_is_that_worker_s() -> None:
    # https://github.com/csjliang/LPTN/issues/23: the worker's own traceback, with no rank prefix,
    # then the agent's banner and its warnings.warn line (the exception line itself is cut from
    # the excerpt we read: ``KeyError: 'val'`` stands in for it)
    lines = ["Traceback (most recent call last):", '  File "codes/train.py", line 249, in <module>', "    main()",
             "KeyError: 'val'", *_banner(32378, 0, 1), _STAR,
             "  warnings.warn(_no_error_file_warning_msg(rank, failure))"]
    inc = _top(lines)
    assert inc["failure"] == "rank_exception"
    assert inc["initiator"]["rank"] == 0


def test_a_signal_exit_code_is_read_as_the_signal() -> None:
    # the banner's exit code is the Popen return code, negative for a signal: a constructed
    # variant of the real banner (SIGKILL, local_rank 3), as later torch prints "exitcode: -9"
    inc = _top(_banner(5343, 3, -9))
    assert inc["initiator"]["rank"] == 3
    assert inc["failure"] in {"rank_killed", "host_oom"}
