"""Several files pasted as one, under ``tail``'s ``==> path <==`` headers.

GNU coreutils ``tail``/``head`` given several files print each under ``==> NAME <==``
(src/tail.c ``write_header``: ``"%s==> %s <==\\n"``, a blank line before every header but the
first). Users paste ``tail -n 20 logs/*/attempt_0/*/stderr.log`` or ``tail rank*.log``: the
path in each header is what the file's own path would have said.
"""

from __future__ import annotations

from tests.helpers import engine_verdict

_EXC = [
    "Traceback (most recent call last):",
    '  File "/home/user/exp/train.py", line 30, in main',
    '    raise ValueError("bad batch at step 13")',
    "ValueError: bad batch at step 13",
]
_PEER = [
    "Traceback (most recent call last):",
    '  File "/home/user/exp/train.py", line 31, in main',
    "    dist.all_reduce(t)",
    "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [127.0.0.1]:29500",
]


def test_torchrun_log_dir_files_pasted_under_tail_headers_name_their_local_rank() -> None:
    lines = ["==> /tmp/run/logs/none_k2x/attempt_0/0/stderr.log <==", *_PEER, "",
             "==> /tmp/run/logs/none_k2x/attempt_0/2/stderr.log <==", *_EXC]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("rank_exception", 2)


def test_per_rank_files_under_headers_and_a_header_naming_no_rank() -> None:
    nan = ["step 10 loss 2.31", "step 20 loss nan", "step 30 loss nan"]
    ok = ["step 10 loss 2.30", "step 20 loss 2.25", "step 30 loss 2.20"]
    lines = ["==> out/train_rank0.log <==", *ok, "", "==> out/train_rank3.log <==", *nan]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("nonfinite_loss", 3)
    # a header naming no rank (the launcher's own log) ends the section: its lines are no rank's
    lines = ["==> out/train_rank3.log <==", *ok, "", "==> out/launcher.log <==", *nan]
    assert engine_verdict(lines)[0].rank is None


def test_the_marker_quoted_inside_a_line_opens_no_section() -> None:
    lines = ["INFO see ==> out/train_rank3.log <== for details", *_EXC]
    assert engine_verdict(lines)[0].rank is None


def test_a_header_glued_after_a_file_without_its_last_newline_opens_the_next_section() -> None:
    # Paddle's log/endpoints.log ends without a newline; a loop of `echo "==> $f <=="; cat "$f"`
    # prints the next header right after it (hyang1985/UIE-for-FundManager log/, corpus holdout29 h29a-013)
    lines = ["==> log/endpoints.log <==", "127.0.0.1:51526", "127.0.0.1:51527==> log/workerlog.2 <==", *_EXC]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("rank_exception", 2)


# PaddlePaddle's launcher keeps one log/workerlog.N per trainer of the node (N its local index);
# its signal handler prints the SIGTERM the launcher sends the others (paddle/fluid/platform/init.cc)
# (corpus holdout25 h25c-015, h25c-016, h25c-017: PaddleDetection, PaddleOCR and fleet runs)
def _paddle_init(n: int, world: int) -> str:
    return (f"I0319 13:12:49.300448  83{n:02d} nccl_context.cc:83] init nccl context nranks: {world} "
            f"local rank: {n} gpu id: {n} ring id: 0")


def _paddle_sigterm(n: int) -> list[str]:
    return ["--------------------------------------", "C++ Traceback (most recent call last):",
            "--------------------------------------", "0   paddle::framework::SignalHandle(char const*, int)",
            "", "----------------------", "Error Message Summary:", "----------------------",
            "FatalError: `Termination signal` is detected by the operating system.",
            "  [TimeInfo: *** Aborted at 1679231639 (unix time) try \"date -d @1679231639\" if you are using GNU date ***]",
            f"  [SignalInfo: *** SIGTERM (@0x20bf) received by PID 83{n:02d} (TID 0x7f60d4b6e740) from PID 8335 ***]", ""]


def test_paddle_workerlogs_pasted_under_tail_headers_name_their_worker() -> None:
    lines = ["==> log/workerlog.0 <==", _paddle_init(0, 4), *_paddle_sigterm(0),
             "==> log/workerlog.1 <==", _paddle_init(1, 4), *_EXC, "",
             "==> log/workerlog.2 <==", _paddle_init(2, 4), *_paddle_sigterm(2),
             "==> log/workerlog.3 <==", _paddle_init(3, 4), *_paddle_sigterm(3)]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("rank_exception", 1)
    assert [i for i in engine_verdict(lines) if i.failure == "launcher_teardown" and i.severity == "critical"] == []


def test_the_one_worker_the_launcher_did_not_have_to_stop_ended_first() -> None:
    lines: list[str] = []
    for n in range(8):
        lines += [f"==> log/workerlog.{n} <==", _paddle_init(n, 8), "loading annotations into memory..."]
        if n != 1:
            lines += _paddle_sigterm(n)
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("rank_killed", 1)
    # one more worker's file missing from the paste: either of two may have ended first
    cut = lines[:lines.index("==> log/workerlog.7 <==")]
    assert engine_verdict(cut)[0].rank is None
