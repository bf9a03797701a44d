"""torchrun's ChildFailedError summary: ``Root Cause (first observed failure)`` names the first
failed worker; the blocks under ``Failures:`` are the *other* failed workers, listed before it.
An excerpt cut above the summary keeps only part of it: the order of the blocks is no evidence.
Every block is a real one (URLs below)."""

from __future__ import annotations

from functools import partial

from tests.helpers import top_verdict


def _block(idx: int, time: str, host: str, rank: int, pid: int) -> list[str]:
    return [f"[{idx}]:", f"  time      : {time}", f"  host      : {host}", f"  rank      : {rank} (local_rank: {rank})",
            f"  exitcode  : 1 (pid: {pid})", "  error_file: <N/A>",
            "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"]


_top = partial(top_verdict, path="x.log")


def test_root_cause_wins_over_the_other_failures_listed_first() -> None:
    # https://github.com/FangyunWei/SLRT/issues/66 (corpus h6a-032): 8 ranks exit 1 in the same second,
    # the excerpt starts inside the 'Failures:' list, the root cause is rank 0
    lines = ["  exitcode  : 1 (pid: 2680833)", "  error_file: <N/A>"]
    for r in (4, 5, 6, 7):
        lines += _block(r, "2024-08-17_13:24:04", "server", r, 2680830 + r)
    lines += ["-" * 60, "Root Cause (first observed failure):", *_block(0, "2024-08-17_13:24:04", "server", 0, 2680830),
              "=" * 60]
    assert _top(lines) == ("rank_exception", 0)


def test_other_failures_alone_name_no_rank() -> None:
    # https://github.com/djiajunustc/TransVG/issues/27 (corpus h6a-036): the excerpt ends inside the
    # 'Failures:' list, before the root cause block
    lines = ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ", "=" * 60, "train.py FAILED",
             "-" * 60, "Failures:"]
    for i, r in enumerate((2, 3, 4), 1):
        lines += _block(i, "2022-03-28_19:11:13", "5c6c6efee186", r, 3165 + r)
    assert _top(lines) == ("rank_exception", None)


def test_a_whole_summary_names_its_root_cause() -> None:
    # the same TransVG summary with its root cause block (the layout torchrun always prints)
    lines = ["train.py FAILED", "-" * 60, "Failures:"]
    for i, r in enumerate((2, 3, 4), 1):
        lines += _block(i, "2022-03-28_19:11:13", "5c6c6efee186", r, 3165 + r)
    lines += ["-" * 60, "Root Cause (first observed failure):", *_block(0, "2022-03-28_19:11:13", "5c6c6efee186", 1, 3166),
              "=" * 60]
    assert _top(lines) == ("rank_exception", 1)


def test_the_same_signal_on_the_root_cause_and_another_worker_names_the_root_cause() -> None:
    # https://github.com/Topdu/OpenOCR/issues/71 (round 16's h21b-021): both workers died of SIGBUS in the
    # same second; 'Failures:' lists rank 1 before the root cause, rank 0
    def sig_block(idx: int, rank: int, pid: int) -> list[str]:
        return [f"[{idx}]:", "  time      : 2024-12-31_16:45:52", "  host      : server",
                f"  rank      : {rank} (local_rank: {rank})", f"  exitcode  : -7 (pid: {pid})", "  error_file: <N/A>",
                f"  traceback : Signal 7 (SIGBUS) received by PID {pid}"]
    lines = ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ", "=" * 54, "tools/train_rec.py FAILED",
             "-" * 54, "Failures:", *sig_block(1, 1, 467398), "-" * 54, "Root Cause (first observed failure):",
             *sig_block(0, 0, 467397), "=" * 54]
    assert _top(lines) == ("rank_segfault", 0)
