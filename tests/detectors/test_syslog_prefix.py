"""journald's and syslog's line prefix (``journalctl -u train.service``, ``/var/log/syslog``:
``Dec 08 02:54:09 dgx-b07 python[41877]: ``, the kernel's own ``Dec  8 02:54:08 node3 kernel: ``):
the month, day and clock, the host, the program and its pid, peeled so the line behind it reads as
it would alone. A job run as a systemd unit delivers its whole console this way, the driver's
Xid lines beside it (corpus holdout33 g33b-011, mp.spawn under a unit, the kernel's Xid 79)."""

from __future__ import annotations

import pytest

from detectors.prefixes import split_prefixes
from tests.helpers import engine_verdict


@pytest.mark.parametrize(("line", "body", "host", "pid"), [
    ("Dec 08 02:54:09 dgx-b07 python[41877]: -- Process 2 terminated with the following error:",
     "-- Process 2 terminated with the following error:", "dgx-b07", 41877),
    ("Dec  8 02:54:08 node3 kernel: NVRM: Xid (PCI:0000:41:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen "
     "off the bus.", "NVRM: Xid (PCI:0000:41:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
     "node3", None),
    ("May 18 11:47:13 gpu-01 torchrun[77]: [rank1]: RuntimeError: boom", "RuntimeError: boom", "gpu-01", 77),
])
def test_the_prefix_is_peeled(line: str, body: str, host: str, pid: int | None) -> None:
    p = split_prefixes(line, 2026)
    assert (p.body, p.host, p.pid) == (body, host, pid)


def test_words_that_only_start_like_a_month_are_no_prefix() -> None:
    assert split_prefixes("Mar 3 loss 2.3 step 4: ok").body == "Mar 3 loss 2.3 step 4: ok"


def test_spawns_notice_behind_journald_names_the_failed_process() -> None:
    jd = "Dec 08 02:54:09 dgx-b07 python[41877]: "
    lines = ["Dec 08 02:54:08 dgx-b07 kernel: NVRM: Xid (PCI:0000:41:00): 79, pid='<unknown>', name=<unknown>, GPU has "
             "fallen off the bus.",
             jd + "torch.multiprocessing.spawn.ProcessRaisedException: ",
             jd + "-- Process 2 terminated with the following error:",
             jd + "Traceback (most recent call last):",
             jd + '  File "/workspace/train.py", line 40, in worker',
             jd + "RuntimeError: CUDA error: unspecified launch failure"]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("gpu_fallen_off_bus", 2)
