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
