"""A collective whose sizes disagree is reported by the rank that *received* the other size
(gloo's ``op.preamble.length <= op.nbytes. A vs B``, then SIGABRT), which need not be the rank
whose call differs. When one rank's own lines just above stand apart from its peers' (the same
line with other numbers, or a warning no peer printed), that rank is named, as inferred.

The gloo lines are the real ones of CPU ``torchrun`` jobs (torch 2.13, gloo's
``transport/tcp/pair.cc:456`` enforce, SIGABRT, then the launcher's ``exitcode: -6``), the shape
of corpus holdout25 g25d-003, g25-015 and holdout24 g24-018; the per-rank lines are each job's
own logging (``rank=3 vocab_size=…``, a ``|INFO|rank=1|`` pipe format, rich's handler)."""

from __future__ import annotations

from detectors.engine import Engine
from detectors.oddrank import odd_rank
from tests.helpers import engine_verdict

_ENFORCE = [
    "terminate called after throwing an instance of 'gloo::EnforceNotMet'",
    "  what():  [enforce fail at /__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:456] "
    "op.preamble.length <= op.nbytes. 4096 vs 4032. Received data size doesn't match expected size. "
    "Is there a distributed collective mismatch in your code?",
    "E1207 04:55:56.101000 6493 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: -6) "
    "local_rank: 1 (pid: 6611) of binary: /usr/bin/python3.11",
]


def test_the_rank_whose_config_line_differs_is_named_not_the_one_that_aborted() -> None:
    lines = ["rank=0 vocab_size=32000 emb.weight=(32000, 64)", "rank=2 vocab_size=32000 emb.weight=(32000, 64)",
             "rank=1 vocab_size=32000 emb.weight=(32000, 64)", "rank=3 vocab_size=32008 emb.weight=(32008, 64)",
             *_ENFORCE]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("nccl_error", 3)
    assert top.data["rank_from"] == "odd_one_out" and top.data["inferred"]
    assert any("vocab_size=32008" in line for line in top.narrative)


def test_without_its_lines_the_rank_that_aborted_is_named() -> None:
    top = engine_verdict(_ENFORCE)[0]
    assert (top.failure, top.rank) == ("nccl_error", 1)
    assert top.data.get("rank_from") != "odd_one_out"


def test_a_pipe_format_with_clocks_and_a_loss_that_differs_on_the_odd_rank() -> None:
    got = odd_rank(["04:36:58.427|INFO|rank=0|sync|model built: embedding rows=1000",
                    "04:36:58.428|INFO|rank=1|sync|model built: embedding rows=1003",
                    "04:36:58.439|INFO|rank=2|sync|model built: embedding rows=1000",
                    "04:37:04.270|INFO|rank=0|sync|step 1 loss 1.5126, syncing 16068 grad elements",
                    "04:37:04.375|INFO|rank=1|sync|step 1 loss 1.5005, syncing 16116 grad elements",
                    "04:37:04.308|INFO|rank=2|sync|step 1 loss 1.5126, syncing 16068 grad elements"])
    assert got is not None and (got.rank, got.why) == (1, "differs")
    assert "rows=1003" in got.line


def test_a_warning_only_one_rank_printed() -> None:
    got = odd_rank(["[02:17:40] INFO     [rank 2] step 40 loss 0.6272 grad_elems 610",
                    "           INFO     [rank 1] step 40 loss 0.6712 grad_elems 610",
                    "           INFO     [rank 3] step 40 loss 0.6113 grad_elems 610",
                    "           WARNING  [rank 3] grad buffer size changed 610 -> 1122 before all_reduce (step 41)"])
    assert got is not None and (got.rank, got.why) == (3, "warned")


def test_two_ranks_cannot_outvote_each_other() -> None:
    # neither stands apart by itself: a pair, which the caller resolves by which one aborted
    got = odd_rank(["[rank 1/2] start, params 676 metrics dtype torch.float64",
                    "[rank 0/2] start, params 676 metrics dtype torch.float32"])
    assert got is not None and got.why == "pair"


def test_lines_that_differ_on_every_rank_or_on_several_name_no_one() -> None:
    # per-rank losses of different data differ everywhere; two ranks standing apart in two lines
    assert odd_rank(["[rank0] step 5 loss 2.31", "[rank1] step 5 loss 2.27", "[rank2] step 5 loss 2.45"]) is None
    assert odd_rank(["[rank0] shard 100 samples", "[rank1] shard 100 samples", "[rank2] shard 96 samples",
                     "[rank0] hidden 48", "[rank1] hidden 56", "[rank2] hidden 48"]) is None


def test_tracebacks_and_ports_are_not_a_ranks_own_report() -> None:
    assert odd_rank(["[rank0]: RuntimeError: Connection closed by peer [127.0.0.1]:9130",
                     "[rank1]: RuntimeError: Connection closed by peer [127.0.0.1]:9130",
                     "[rank2]: RuntimeError: Connection closed by peer [127.0.0.1]:4410"]) is None


def test_the_lines_before_are_read_across_chunks() -> None:
    # the daemon reads a file in chunks: the lines of an earlier chunk still count
    engine = Engine("t")
    fs = engine.open_file("train.log")
    first = ["[rank 0] built model hidden=48", "[rank 2] built model hidden=56", "[rank 1] built model hidden=48",
             "[rank 3] built model hidden=48"]
    engine.feed("".join(f"{x}\n" for x in first).encode(), 1, fs)
    engine.feed("".join(f"{x}\n" for x in _ENFORCE).encode(), len(first) + 1, fs)
    top = engine.verdict()[0]
    assert (top.failure, top.rank) == ("nccl_error", 2)


def test_in_a_two_rank_job_the_rank_that_did_not_abort_is_named() -> None:
    # rank 0 aborted (it received rank 1's larger tensor); their own lines show the sizes differ
    lines = ["time=07:05:51 rank=0 event=init vocab_size=500 world=2",
             "time=07:05:52 rank=1 event=init vocab_size=502 world=2",
             "rank=1 flat_grad_numel=8202", "rank=0 flat_grad_numel=8170",
             *[x.replace("local_rank: 1", "local_rank: 0") for x in _ENFORCE]]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("nccl_error", 1)
    assert top.data["rank_from"] == "odd_one_out"


def test_two_ranks_losses_of_different_data_are_no_size_difference() -> None:
    assert odd_rank(["[rank0] step 5 loss 2.3125 tokens 4096", "[rank1] step 5 loss 2.2871 tokens 4096"]) is None
    got = odd_rank(["[rank 1/2] start, params 676 metrics dtype torch.float64",
                    "[rank 0/2] start, params 676 metrics dtype torch.float32"])
    assert got is not None and (got.rank, got.other) == (0, 1)


def test_pids_differ_on_every_process_and_are_not_compared() -> None:
    assert odd_rank(["rank=0 init done: backend=gloo pid=29814", "rank=1 init done: backend=gloo pid=29815"]) is None
