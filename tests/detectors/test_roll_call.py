"""Complete logs that stop right after a roll call one rank missed: every rank of the world but
one printed the same line last (numbers aside), nothing failed, exited or finished after it. The
missing rank is the one the others went on to wait for: an ``info`` ``rank_hang`` naming it,
only when the input is known to be complete (offline); the live engine stays quiet. A Slurm time
limit right after such a round makes it a warning, live and offline alike. Fixtures are real
lines from the sources named; the negative cases are the shapes that must not read as a roll call
(a paste cut in the middle of a round, a warning every rank prints, a NaN in one rank's round)."""

from __future__ import annotations

from detectors.engine import Engine

# open-mmlab/mmdetection3d#952: the reporter's per-rank debug print in __getitem__, 8 GPUs
_MMDET3D = ["rank 4, fetch sample 1469", "rank 2, fetch sample 3282", "rank 5, fetch sample 2757",
            "rank 1, fetch sample 1355", "rank 3, fetch sample 279", "rank 0, fetch sample 4107",
            "rank 7, fetch sample 2834"]

# FoxNickel/OmniAvatar's committed rank.log: a Lightning module's own "[Rank N]" debug lines, 4 GPUs
_OMNI = [f"[Rank {r}] {text}".replace("cuda:R", f"cuda:{r}") for r in (2, 3, 0) for text in (
    "training_step -> batch_idx: 0, batch_size: 1",
    "batch[video] shape: torch.Size([1, 3, 25, 400, 640]), dtype: torch.float16, device: cuda:R",
    "batch[L] shape: torch.Size([1]), dtype: torch.int64, device: cuda:R")]


def _incidents(lines: list[str], ended: bool = True, by_line: bool = False) -> list[tuple[str, str, int | None]]:
    eng = Engine("t")
    fs = eng.open_file("console.log")
    if by_line:  # the live daemon's way: one chunk per line
        for i, line in enumerate(lines, 1):
            eng.feed(f"{line}\n".encode(), i, fs)
    else:
        eng.feed("".join(f"{line}\n" for line in lines).encode(), 1, fs)
    return [(i["failure"], i["severity"], i["initiator"]["rank"]) for i in eng.report(ended=ended)["incidents"]]


def test_the_rank_missing_from_the_last_roll_call_of_a_power_of_two_world() -> None:
    assert _incidents(_MMDET3D) == [("rank_hang", "info", 6)]
    assert _incidents(_MMDET3D, by_line=True) == [("rank_hang", "info", 6)]
    assert _incidents(_OMNI) == [("rank_hang", "info", 1)]


def test_live_it_is_no_finding_the_round_may_still_be_coming() -> None:
    assert _incidents(_MMDET3D, ended=False) == []


def test_a_full_roll_call_or_an_unknown_world_names_nobody() -> None:
    assert _incidents([*_MMDET3D, "rank 6, fetch sample 911"]) == []
    # ranks 0, 2, 3, 4, 5 of a world that need not be a power of two: 6 ranks, 5 seen
    assert _incidents(["rank 0, fetch sample 1", "rank 2, fetch sample 2", "rank 4, fetch sample 3",
                       "rank 3, fetch sample 4", "rank 5, fetch sample 5"]) == []


def test_a_rank_whose_own_last_line_came_after_the_round_is_not_behind() -> None:
    assert _incidents(["rank 6, saving the cache", *_MMDET3D]) == [("rank_hang", "info", 6)]
    # after the round began, or after it: it may as well be ahead of its peers
    assert _incidents([*_MMDET3D[:5], "rank 6, saving the cache", *_MMDET3D[5:]]) == []
    assert _incidents([*_MMDET3D, "rank 6, saving the cache"]) == []


# THUDM/GLM#32: DeepSpeed's per-rank overflow report, the paste cut in the middle of its last line
_GLM = [f"[2022-09-14 22:58:01,089] [INFO] [stage2.py:1387:step] [deepspeed] fp16 dynamic loss scale overflow! "
        f"Rank {r} Skipping step. Attempted loss scale: 536870912.0, reducing to 268435456.0" for r in (6, 4, 7, 1, 2, 5, 3)]


def test_a_paste_cut_in_the_middle_of_the_round_names_nobody() -> None:
    cut = "[2022-09-14 22:58:01,089] [INFO] [stage2.py:1387:step] [deepspeed] fp16 dynamic loss scale overflow! Rank"
    assert all(f != "rank_hang" for f, _, _ in _incidents([*_GLM, cut]))
    assert all(f != "rank_hang" for f, _, _ in _incidents([*_GLM, cut], by_line=True))
    # the parse marks the cut copy (row kind "c"), which is no rank's note
    eng = Engine("t")
    eng.feed("".join(f"{line}\n" for line in [*_GLM, cut]).encode(), 1, eng.open_file("console.log"))
    notes = eng.state.last_notes["console.log"]
    assert ("c", 0) in notes and notes[("c", 0)][2].line == len(_GLM) + 1
    assert ("g", 0) not in notes and {r for k, r in notes if k == "g"} == {1, 2, 3, 4, 5, 6, 7}
    assert _incidents(_GLM)[0] == ("rank_hang", "info", 0)  # (uncut, the same lines are a roll call rank 0 missed)


def test_a_warning_every_rank_prints_is_no_roll_call() -> None:
    # bmaltais/kohya_ss#2933: torch 2.5's barrier warning, ranks 0, 2, 3 of 4 in the paste
    warn = ("[rank{r}]:[W1028 04:48:19.062080939 ProcessGroupNCCL.cpp:4115] [PG ID 0 PG GUID 0 Rank {r}]  using GPU {r} "
            "to perform barrier as devices used by this process are currently unknown.")
    assert _incidents([warn.format(r=r) for r in (0, 2, 3)]) == []


def test_a_nan_in_one_ranks_line_is_still_that_rank_in_the_round() -> None:
    rows = [f"{{'epoch': 3, 'rank': {r}, 'train_loss': 0.2392, 'val_loss': {v}, 'val_n': 40}}"
            for r, v in ((3, "nan"), (0, "0.1953"), (2, "0.2227"), (1, "0.2213"))]
    assert all(f != "rank_hang" for f, _, _ in _incidents(rows))


# sparticlesteve/pytorch-nccl-hang's committed slurm-8384637.out: srun --label, a loop of trials
_TRIAL = [f"{r:2d}: RANK {r}: COMPLETE!" for r in range(4)] + ["trial 14..."] + [
    f"{r:2d}: RANK {r}: running step 1/10" for r in (2, 0, 3)]
_LIMIT = " 0: slurmstepd: error: *** STEP 8384637.13 ON nid001044 CANCELLED AT 2023-05-02T03:58:46 DUE TO TIME LIMIT ***"


def test_a_time_limit_right_after_the_round_makes_the_missing_rank_the_cause() -> None:
    for ended in (True, False):
        got = _incidents([*_TRIAL, _LIMIT], ended=ended)
        assert got[0] == ("rank_hang", "warning", 1)
    # its last line (the round before) came first; with nothing after the round it is a note
    assert _incidents(_TRIAL) == [("rank_hang", "info", 1)]


def test_of_two_ranks_missing_the_one_that_took_part_in_the_earlier_rounds_stopped_short() -> None:
    # pytorch-nccl-hang's Slurm output: trials of one loop; rank 0 prints other lines of its own and
    # never "running step"; rank 3 printed it in the trial before and not in this one
    def step(ranks: tuple[int, ...]) -> list[str]:
        return [f"{r:2d}: RANK {r}: running step 1/10" for r in ranks]
    trial13 = [*step((1, 2, 3, 4, 5, 6, 7)), *[f"{r:2d}: RANK {r}: COMPLETE!" for r in range(8)]]
    assert _incidents([*trial13, "trial 14...", *step((2, 1, 4, 5, 6, 7))]) == [("rank_hang", "info", 3)]
    # two of them that took part before: no one is named
    assert all(rank is None for _, _, rank in _incidents([*trial13, "trial 14...", *step((1, 4, 5, 6, 7))]))


def test_a_librarys_debug_lines_are_no_roll_call() -> None:
    # a Horovod job's NCCL_DEBUG=INFO output under mpirun's tags, the paste ending before rank 1's line
    lines = [f"[1,{r}]<stdout>:ptv-gpu01:1101{r}:11095 [{r}] NCCL INFO rank {r} nranks 4" for r in (0, 2, 3)]
    assert all(f != "rank_hang" or rank is None for f, _, rank in _incidents(lines))
