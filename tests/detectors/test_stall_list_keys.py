"""Horovod's stall list names, per rank, every tensor that rank has not submitted: a rank listed
with several tensors is missing from each of them, not only from the first. Real lists from
horovod/horovod#3950 (0.28.1, horovodrun's "[0] " prefix)."""

from __future__ import annotations

from detectors.diagnosis import build_report
from tests.helpers import fed_state

_HEAD = ("[0] [2023-06-26 07:23:58.477178: W /tmp/pip-install-6w4n_ndu/horovod_4c00129df9d64c2680a27be18c9b88cd/horovod/"
         "common/stall_inspector.cc:107] One or more tensors were submitted to be reduced, gathered or broadcasted by subset "
         "of ranks and are waiting for remainder of ranks for more than 60 seconds. This may indicate that different ranks "
         "are trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause deadlock. ")
_LIST = ("[broadcast.assign_conv_block_modules.0.0.bias, broadcast.assign_conv_block_modules.0.0.weight, "
         "broadcast.assign_conv_first_modules.0.bias, broadcast.assign_conv_first_modules.0.weight, "
         "broadcast.assign_conv_last_modules.0.bias, broadcast.assign_conv_last_modules.0.weight ...]")


def test_every_listed_tensor_misses_the_rank() -> None:
    st = fed_state([_HEAD, "[0] Missing ranks:", f"[0] 0: {_LIST}", f"[0] 1: {_LIST}"], "horovod.log")
    for key in ("broadcast.assign_conv_block_modules.0.0.bias", "broadcast.assign_conv_first_modules.0.weight",
                "broadcast.assign_conv_last_modules.0.weight"):
        assert st.sync_points[key].absent == {0, 1}, key


def test_two_ranks_missing_the_same_tensors_name_no_one() -> None:
    st = fed_state([_HEAD, "[0] Missing ranks:", f"[0] 0: {_LIST}", f"[0] 1: {_LIST}"], "horovod.log")
    hang = [i for i in build_report(st)["incidents"] if i["failure"] == "rank_hang"]
    assert hang and hang[0]["initiator"]["rank"] is None


# Lightning-AI/pytorch-lightning#5155 (Horovod, 2 ranks): the first list names rank 0 alone (it took
# another path in a checkpoint callback); a minute later rank 1 is missing too, from the
# allreduces rank 0 moved on to
_PL_HEAD = ("[0]<stderr>:[2020-12-29 16:50:57.724380: W /tmp/pip-install-uk4q7bn5/horovod/horovod/common/"
            "stall_inspector.cc:105] One or more tensors were submitted to be reduced, gathered or broadcasted by "
            "subset of ranks and are waiting for remainder of ranks for more than 60 seconds. This may indicate that "
            "different ranks are trying to submit different tensors or that only subset of ranks is submitting "
            "tensors, which will cause deadlock.")
_PL_ALLREDUCE = ("[0]<stderr>:1: [allreduce.c_d1.bias, allreduce.c_d1.weight, allreduce.c_d1_bn.bias, "
                 "allreduce.c_d1_bn.weight, allreduce.c_d2.bias, allreduce.c_d2.weight ...]")


def _hang_rank(lines: list[str]) -> int | None:
    hang = [i for i in build_report(fed_state(lines, "horovod.log"))["incidents"] if i["failure"] == "rank_hang"]
    assert hang
    return hang[0]["initiator"]["rank"]


def test_the_rank_the_first_list_named_alone_started_the_two_way_wait() -> None:
    first = [_PL_HEAD, "[0]<stderr>:Missing ranks:", "[0]<stderr>:0: [broadcast.bool.sz]"]
    second = [_PL_HEAD.replace("16:50:57", "16:51:57"), "[0]<stderr>:Missing ranks:", "[0]<stderr>:0: [broadcast.bool.sz]",
              _PL_ALLREDUCE]
    assert _hang_rank(first + second) == 0
    # the same two lists, the first naming both: no one started it
    both = [*first, "[0]<stderr>:1: [allreduce.c_d1.bias]"]
    assert _hang_rank(both + second) is None
    # a later list that no longer names rank 0: the first list's word does not stand
    gone = [*second[:2], _PL_ALLREDUCE]
    assert _hang_rank(first + gone) is None
