"""Classes of line the Ray Train / skorch jobs of round 5 showed (tests/e2e/README.md, "first look,
round 5"), each with lines from other real sources (the URL above each):

1. a rank an orchestrator names away from the worker's line (Ray's pid → world_rank table, its
   ``[Rank N Error Snippet]:`` sections) and a worker death re-raised in the supervisor's own type;
2. a line folded from several workers by a log aggregator (``[repeated Nx across cluster]``);
3. a plain whitespace-aligned table whose columns are named only in its header.
"""

from __future__ import annotations

from detectors.diagnosis import build_report
from detectors.model import EventKind
from detectors.parse import default_parser
from detectors.parsers.base import FileState, JobParseState
from detectors.parsers.metrics import PLAIN_TABLE_GAP, _plain_header_cols
from tests.helpers import fed_state


def _ranks(lines: list[str]) -> list[tuple[int | None, str | None]]:
    """(rank, rank_from) of each line's first event, in order (lines without events left out)."""
    fs = FileState("console.log", year=2026, job=JobParseState())
    parser = default_parser()
    out = []
    for i, line in enumerate(lines, 1):
        evs = parser.parse_line(line, i, fs)
        if evs:
            out.append((evs[0].rank, evs[0].rank_from))
    return out


def _incidents(lines: list[str]) -> list[tuple[str, int | None]]:
    return [(inc["failure"], inc["initiator"]["rank"]) for inc in build_report(fed_state(lines))["incidents"]]


# --- 1. the orchestrator's mapping ------------------------------------------------------------

# https://github.com/ray-project/ray/issues/45799 (Ray Train v1's table, verbatim; pid 429 is a worker
# on two nodes)
_TABLE_45799 = [
    "(TorchTrainer pid=16518) Started distributed worker processes:",
    "(TorchTrainer pid=16518) - (ip=10.114.131.76, pid=16729) world_rank=0, local_rank=0, node_rank=0",
    "(TorchTrainer pid=16518) - (ip=10.114.131.76, pid=16730) world_rank=1, local_rank=1, node_rank=0",
    "(TorchTrainer pid=16518) - (ip=10.114.131.76, pid=16731) world_rank=2, local_rank=2, node_rank=0",
    "(TorchTrainer pid=16518) - (ip=10.114.141.217, pid=429) world_rank=8, local_rank=0, node_rank=1",
    "(TorchTrainer pid=16518) - (ip=10.114.129.98, pid=387) world_rank=9, local_rank=0, node_rank=2",
    "(TorchTrainer pid=16518) - (ip=10.114.131.89, pid=429) world_rank=10, local_rank=0, node_rank=3",
]
# the worker's exception line as Ray relays it (Ray's prefix, the message of round 5's job)
_ERR = "ValueError: corrupt sample in shard 3: expected 16 features, got 0"


def test_a_workers_line_takes_its_rank_from_the_pid_table() -> None:
    assert _ranks([*_TABLE_45799, f"(RayTrainWorker pid=16731) {_ERR}"]) == [(2, "prefix")]
    assert _incidents([*_TABLE_45799, f"(RayTrainWorker pid=16730) {_ERR}"]) == [("rank_exception", 1)]


# Ray 1.x relayed a worker's lines behind "(pid=N)" alone, no actor name; NCCL's tree line of that
# process names its communicator rank, and the same process's return-code chain under its WARN is
# no job-wide detail (https://github.com/ray-project/ray/issues/16979, corpus holdout22 h22b-015)
_RAY1_P2P = [
    "RuntimeError: NCCL error in: /opt/conda/conda-bld/pytorch_1607370116979/work/torch/lib/c10d/ProcessGroupNCCL.cpp:784, "
    "unhandled cuda error, NCCL version 2.7.8",
    "(pid=34272) dev-duanjiangfei-ap0:34272:34565 [0] NCCL INFO Trees [0] -1/-1/-1->3->2|2->3->-1/-1/-1 "
    "[1] -1/-1/-1->3->2|2->3->-1/-1/-1",
    "(pid=34272) dev-duanjiangfei-ap0:34272:34565 [0] NCCL INFO Channel 00 : 3[b0] -> 0[80] via P2P/IPC",
    "(pid=34272) ",
    "(pid=34272) dev-duanjiangfei-ap0:34272:34565 [0] transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle : "
    "217 peer access is not supported between these two devices",
    "(pid=34272) dev-duanjiangfei-ap0:34272:34565 [0] NCCL INFO transport.cc:68 -> 1",
    "(pid=34272) dev-duanjiangfei-ap0:34272:34565 [0] NCCL INFO init.cc:766 -> 1",
    "(pid=34272) dev-duanjiangfei-ap0:34272:34565 [0] NCCL INFO group.cc:73 -> 1 [Async thread]",
    "(pid=34275) dev-duanjiangfei-ap0:34275:34567 [0] NCCL INFO Trees [0] 2/-1/-1->1->0|0->1->2/-1/-1",
]


def test_ray_1s_bare_pid_prefix_and_a_process_own_return_codes() -> None:
    from detectors.prefixes import split_prefixes

    p = split_prefixes(_RAY1_P2P[4], 2021)
    assert (p.pid, p.host, p.body[:9]) == (34272, "dev-duanjiangfei-ap0", "NCCL WARN")
    assert split_prefixes("(pid=34272, ip=10.0.0.3) epoch 1", 2021).body == "epoch 1"
    rep = build_report(fed_state(_RAY1_P2P))
    top = rep["incidents"][0]
    assert (top["failure"], top["initiator"]["rank"], top["initiator"]["inferred"]) == ("nccl_error", 3, True)


def test_a_pid_on_two_nodes_is_read_only_with_its_ip() -> None:
    lines = [*_TABLE_45799, f"(RayTrainWorker pid=429, ip=10.114.131.89) {_ERR}",
             f"(RayTrainWorker pid=429, ip=10.114.141.217) {_ERR}", f"(RayTrainWorker pid=429) {_ERR}"]
    assert _ranks(lines) == [(10, "prefix"), (8, "prefix"), (None, None)]


def test_without_a_table_a_ray_pid_names_no_rank() -> None:
    assert _ranks([f"(RayTrainWorker pid=16731) {_ERR}"]) == [(None, None)]


# https://github.com/ray-project/ray/issues/47759 (verbatim): Ray Train's driver re-raising a
# RayTrainWorker's death; the death report below the wrapper is the cause
_ACTOR_DIED_47759 = [
    "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
    "\tclass_name: RayTrainWorker",
    "\tactor_id: f2520e7442c3968c34db544c01000000",
    "\tpid: 43514",
    "\tnamespace: 8789b499-0377-4077-b340-4afddfd0a648",
    "\tip: 127.0.0.1",
    "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker "
    "unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. (1) The "
    "process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. (3) The "
    "worker is crashed unexpectedly due to SIGSEGV or other unexpected errors.",
]


def test_a_supervisors_actor_died_error_is_the_wrapper_of_the_death() -> None:
    top = _incidents(_ACTOR_DIED_47759)[0]
    assert top == ("rank_killed", None)


def test_a_supervisors_actor_error_over_a_lost_node_is_collateral() -> None:
    # https://github.com/ray-project/ray/issues/43751 (verbatim): the wrapper alone is no crash of its own
    lines = ["ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.",
             "\tclass_name: RayTrainWorker",
             "The actor is dead because its node has died. Node Id: 677df2a9020c5db45e755b0078c469e2ce51e05ea093ed3b283505a0"]
    assert [f for f, _ in _incidents(lines)] == ["launcher_teardown"]


# Ray Train 2.60's failure report (round 5's sigkill and hang jobs, tests/e2e/golden/*-raytrain-raylaunch)
def test_an_error_snippet_section_names_the_rank_of_the_lines_below_it() -> None:
    lines = ["(TrainController pid=18573) [Rank 2 Error Snippet]:",
             "(TrainController pid=18573) A worker health check failed.",
             "(TrainController pid=18573) The actor is dead because its worker process has died. Worker exit type: "
             "SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2.",
             # another speaker's line is not in the section
             f"(RayTrainWorker pid=20215) {_ERR}"]
    assert _ranks(lines) == [(2, "launcher"), (None, None)]


def test_an_older_rays_section_header() -> None:
    # https://github.com/ray-project/ray/pull/51199 (verbatim, Ray Train v2's TrainingFailedError message)
    lines = ["Training failed due to worker errors:", "[Rank 0]", "Traceback (most recent call last):",
             '  File "/Users/justin/Developer/ray/python/ray/train/v2/tests/test_data_parallel_trainer.py", line 145, '
             "in _error_func_rank_0", '    raise ValueError("error")', "ValueError: error"]
    assert _incidents(lines) == [("rank_exception", 0)]
    # a "[Rank 0]" that is a message's prefix (DeepSpeed's log_dist) opens no section
    assert _incidents(["[Rank 0] step 5 done", "ValueError: error"]) == [("rank_exception", None)]


def test_a_section_of_several_ranks_is_a_report_of_each() -> None:
    timeout = ("RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed "
               "out waiting 15000ms for recv operation to complete")
    fs = FileState("console.log", year=2026, job=JobParseState())
    parser = default_parser()
    assert parser.parse_line("[Rank 0,3 Error Snippet]:", 1, fs) == []
    evs = parser.parse_line(timeout, 2, fs)
    assert [(e.failure, e.rank, e.rank_from) for e in evs if e.kind is EventKind.MATCH] == [
        ("collective_timeout", 0, "launcher"), ("collective_timeout", 3, "launcher")]
    # far below the header, the section is over
    assert [e.rank for e in parser.parse_line(timeout, 2 + 200, fs) if e.kind is EventKind.MATCH] == [None]


# --- 2. folded lines --------------------------------------------------------------------------

# https://github.com/ray-project/ray/issues/37873 (verbatim): Ray's dedup kept rank 1's line for
# three workers' lines
_FOLDED_37873 = ["(RayTrainWorker pid=37158) world size: 4, world rank: 0.",
                 "(RayTrainWorker pid=37159) world size: 4, world rank: 1. [repeated 3x across cluster]"]


def test_a_folded_line_names_no_rank() -> None:
    from detectors.prefixes import split_prefixes
    from detectors.ranks import resolve_rank

    fs = FileState("console.log", year=2026, job=JobParseState())
    # the table row a Ray Train job prints for those workers (the layout of _TABLE_45799)
    default_parser().parse_line("(TorchTrainer pid=37000) - (ip=10.0.0.1, pid=37159) world_rank=1, local_rank=1, "
                                "node_rank=0", 1, fs)
    unfolded = _FOLDED_37873[1].replace(" [repeated 3x across cluster]", "")
    assert [resolve_rank(split_prefixes(line, 2026), fs)[0] for line in (unfolded, _FOLDED_37873[1])] == [1, None]


def test_a_folded_line_of_a_worker_on_another_node_names_no_rank() -> None:
    from detectors.prefixes import split_prefixes
    from detectors.ranks import resolve_rank

    # https://github.com/ray-project/ray/issues/36866 (verbatim; the prefix carries the worker's node)
    folded_line = ("(RayTrainWorker pid=4533, ip=10.0.0.186) Moving model to device: cuda:0 [repeated 3x across "
                   "cluster]")
    fs = FileState("console.log", year=2026, job=JobParseState())
    # the table row a Ray Train job prints for that worker (the layout of _TABLE_45799)
    default_parser().parse_line("(TorchTrainer pid=4400) - (ip=10.0.0.186, pid=4533) world_rank=2, local_rank=0, "
                                "node_rank=1", 1, fs)
    unfolded = folded_line.replace(" [repeated 3x across cluster]", "")
    assert [resolve_rank(split_prefixes(line, 2026), fs)[:1] for line in (unfolded, folded_line)] == [(2,), (None,)]


def test_a_folded_spike_names_no_rank() -> None:
    # round 5's Ray Train spike job (tests/e2e/golden/spike-raytrain-raylaunch, colour codes removed):
    # every worker printed the all-reduced norm; the fold kept rank 0's line
    lines = ["(RayTrainWorker pid=9642) rank 0 step 1: loss 0.4732 grad_norm 1.0931",
             "(RayTrainWorker pid=9642) rank 0 step 2: loss 0.4010 grad_norm 1.0370",
             "(RayTrainWorker pid=9743) rank 3 step 5: loss 0.3011 grad_norm 0.6698 [repeated 18x across cluster]",
             "(RayTrainWorker pid=9642) rank 0 step 6: loss 0.2835 grad_norm 1.0831 [repeated 19x across cluster]",
             "(RayTrainWorker pid=9743) rank 3 step 7: loss 0.1631 grad_norm 0.7117 [repeated 8x across cluster]",
             "(RayTrainWorker pid=9642) rank 0 step 9: loss 0.3006 grad_norm 164.6192 [repeated 12x across cluster]",
             "(RayTrainWorker pid=9743) rank 3 step 10: loss 0.6150 grad_norm 1.0368 [repeated 12x across cluster]"]
    assert _incidents(lines) == [("grad_norm_explosion", None)]


# --- 3. plain tables named by their header ------------------------------------------------------

# https://github.com/skorch-dev/skorch/issues/851 (verbatim, skorch's PrintLog)
_SKORCH_851 = [
    "  epoch    train_loss    valid_loss     dur",
    "-------  ------------  ------------  ------",
    "      1        4.4168        3.0788  0.0292",
    "      2        2.0120        0.4565  0.0270",
    "      3        0.3343        0.2262  0.0263",
    "      4        0.1851        0.2223  0.0257",
    "      5        0.1491        0.1068  0.0242",
]


def _samples(lines: list[str]) -> list[dict[str, float]]:
    fs = FileState("console.log", year=2026, job=JobParseState())
    parser = default_parser()
    out = []
    for i, line in enumerate(lines, 1):
        out += [{k: v for k, v in e.data.items() if k in ("epoch", "loss", "eval_loss")}
                for e in parser.parse_line(line, i, fs) if e.kind is EventKind.SAMPLE]
    return out


def test_a_plain_tables_rows_are_read_by_the_headers_names() -> None:
    got = _samples(_SKORCH_851)
    assert got[0] == {"epoch": 1.0, "loss": 4.4168, "eval_loss": 3.0788}
    assert [s["loss"] for s in got] == [4.4168, 2.0120, 0.3343, 0.1851, 0.1491]
    assert _incidents(_SKORCH_851) == []


def test_a_nan_row_of_a_plain_table() -> None:
    # https://github.com/fastai/fastai/issues/941 (verbatim; fastai's table, its columns single-spaced
    # in the paste: "train loss" is one column)
    lines = ["epoch train loss valid loss accuracy_thresh f2_opt", "0 nan nan 0.997788 0.000000"]
    assert _incidents(lines)[0] == ("nonfinite_loss", None)


def test_header_names() -> None:
    # https://github.com/fastai/fastai/issues/2500 (verbatim header)
    assert _plain_header_cols("epoch     train_loss  valid_loss  accuracy  perplexity  time    ") == (
        "epoch", "loss", "eval_loss", None, "ppl", None)  # a perplexity is read as ln(ppl) only
    # where the row prints no loss of its own (test_instability); this row has one
    # prose is no header
    assert _plain_header_cols("Epoch 3 finished, loss went down") is None
    assert _plain_header_cols("epoch loss") == ("epoch", "loss")


def test_a_plain_per_rank_table_names_each_rows_process() -> None:
    # a per-rank TSV whose first column is the rank (a CPU torchrun job of ours, corpus holdout22
    # g22-030: rank 2 never printed step 40, the job was stopped ten minutes later)
    rows = [f"{r}\t{s}\t1.0{s:02d}\t0.31" for s in (30, 35) for r in (0, 2, 1)] + ["0\t40\t1.1706\t0.31",
                                                                                  "1\t40\t1.3002\t0.31"]
    st = fed_state(["rank\tstep\tloss\tacc", *rows])
    assert sorted((k[1], rs.last_step) for k, rs in st.ranks.items() if k is not None) == [(0, 40), (1, 40), (2, 35)]


def test_rows_far_below_the_header_are_not_its_rows() -> None:
    lines = [_SKORCH_851[0], *["some other output"] * (PLAIN_TABLE_GAP + 1), "      7           nan           nan  0.0248"]
    assert _samples(lines) == []


# https://github.com/skorch-dev/skorch docs/user/save_load.rst (verbatim, skorch's PrintLog with a
# Checkpoint callback: its ``cp`` column holds "+" on the epochs that saved one and nothing on the others)
_SKORCH_CP = [
    "  epoch    train_loss    valid_acc    valid_loss    cp     dur",
    "-------  ------------  -----------  ------------  ----  ------",
    "      1        0.6200       0.8209        0.4765     +  0.0232",
    "      2        0.3644       0.8557        0.3474     +  0.0238",
    "      3        0.2875       0.8806        0.3201     +  0.0214",
    "      4        0.2514       0.8905        0.3080     +  0.0237",
    "      5        0.2333       0.9154        0.2844     +  0.0228",
    "      6        0.2398       0.9104        0.2950        0.0239",
]


def test_a_fixed_width_rows_blank_or_marked_cells_are_read_by_where_they_stand() -> None:
    got = _samples(_SKORCH_CP)
    assert [s["loss"] for s in got] == [0.62, 0.3644, 0.2875, 0.2514, 0.2333, 0.2398]
    assert got[-1] == {"epoch": 6.0, "loss": 0.2398, "eval_loss": 0.295}


def test_a_flag_under_a_counters_name_and_a_blank_flag() -> None:
    # a script's own fixed-width table whose last column says YES only on the steps its GradScaler
    # skipped (a CPU mp.spawn job of ours, corpus holdout28 g28b-016): every row is read, the flag
    # is no count of skipped steps
    lines = ["  step       loss      scale      gnorm  skipped",
             "------------------------------------------------",
             "    39     2.3050   524288.0      0.307         ",
             "    40     2.2943   524288.0        inf      YES",
             "    42     2.2962   262144.0      0.331         "]
    fs = FileState("console.log", year=2026, job=JobParseState())
    parser = default_parser()
    got = [e.data for i, line in enumerate(lines, 1) for e in parser.parse_line(line, i, fs) if e.kind is EventKind.SAMPLE]
    assert [(d["loss_scale"], d["grad_norm"]) for d in got] == [(524288.0, 0.307), (524288.0, float("inf")),
                                                                (262144.0, 0.331)]
    assert all("skipped" not in d for d in got)


def test_cells_that_stand_under_no_column_or_two_are_not_read() -> None:
    # a row of fewer cells that do not line up with the header is another text's numbers
    lines = [_SKORCH_CP[0], "  7 0.2 0.9    0.3     0.02"]
    assert _samples(lines) == []
