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
