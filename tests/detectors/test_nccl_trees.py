"""NCCL's tree topology line, printed by every rank at init, names the process's own rank
between its children and its parent (``Trees [0] 2/-1/-1->1->0``): an NCCL process that logs
nothing else about its rank is that rank, marked inferred (a sub-group's communicator rank is
not the global rank). Real lines from wenet-e2e/wenet#1891 (4 ranks over two hosts, socket
transport), with the init line of a run that logs NCCL_DEBUG=INFO in full."""

from __future__ import annotations

from detectors.diagnosis import build_report
from tests.helpers import fed_state

_WENET = [
    "voicec105:90735:91654 [0] NCCL INFO Trees [0] 1/-1/-1->0->-1|-1->0->1/-1/-1 [1] 1/-1/-1->0->3|3->0->1/-1/-1",
    "voicec105:90736:91655 [0] NCCL INFO threadThresholds 8/8/64 | 32/8/64 | 8/8/64",
    "voicec105:90736:91655 [0] NCCL INFO Trees [0] 2/-1/-1->1->0|0->1->2/-1/-1 [1] -1/-1/-1->1->0|0->1->-1/-1/-1",
    "voicec105:90736:91655 [0] NCCL INFO Channel 00 : 1[89000] -> 2[b1000] [send] via NET/Socket/0",
    "",
    "voicec105:90736:91655 [0] include/socket.h:403 NCCL WARN Connect to fe80::c4eb:49ff:fe04:e32d%6<57335> failed : "
    "Network is unreachable",
]


def _initiator(lines: list[str]) -> dict[str, object]:
    inc = build_report(fed_state(lines, "train.log"))["incidents"][0]
    assert inc["failure"] == "nccl_error"
    return dict(inc["initiator"])


def test_the_tree_line_names_the_warning_process_s_rank_as_inferred() -> None:
    ini = _initiator(_WENET)
    assert (ini["rank"], ini["rank_from"], ini["inferred"]) == (1, "nccl_tree", True)


def test_the_init_line_names_it_outright() -> None:
    # the same process's "comm ... rank R nranks N" line (NCCL_DEBUG=INFO's init summary; line added)
    lines = [*_WENET[:3], "voicec105:90736:91655 [0] NCCL INFO comm 0x7fa94834c010 rank 1 nranks 4 cudaDev 0 busId 89000 - Init COMPLETE",
             *_WENET[3:]]
    ini = _initiator(lines)
    assert (ini["rank"], ini["rank_from"], ini["inferred"]) == (1, "prefix", False)


def test_without_the_tree_line_no_rank_is_named() -> None:
    assert _initiator([_WENET[0], *_WENET[3:]])["rank"] is None
