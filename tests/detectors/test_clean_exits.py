"""A job whose launcher saw every worker return 0: the lost peers at its end were its own shutdown.

DeepSpeed's launcher (``deepspeed/launcher/launch.py``, ``main``) prints ``Process <pid> exits
successfully.`` for each worker that returned 0. PyTorch's ProcessGroupNCCL heartbeat monitor,
still polling the TCPStore while the store's host (rank 0's process) leaves first, then prints
``recvValue failed ... Connection reset by peer`` with its C++ frames and ``Failed to check the
"should dump" flag on TCPStore, (maybe TCPStore server has shut down too early)``: noise of a
clean shutdown, not a rank that died. The lines are a Megatron-DeepSpeed smoke run's tail under
pdsh (torch 2.9, two nodes), the shape of the real log in corpus h27a-015. A worker that exited
with a non-zero code keeps the peers' reports meaningful.
"""

from __future__ import annotations

from tests.helpers import engine_verdict

_TAIL = [
    "localhost: [rank1]:[W331 16:39:45.841627790 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=102, "
    "addr=[::]:19725, remote=[fdff:ffff::]:26485): Connection reset by peer",
    "localhost: Exception raised from recvBytes at /pytorch/torch/csrc/distributed/c10d/Utils.hpp:679 (most recent call first):",
    "localhost: frame #5: c10d::ProcessGroupNCCL::HeartbeatMonitor::runLoop() + 0x3c8 (0x7fe27d618868 in "
    "/usr/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so)",
    "localhost: ",
    'localhost: [rank1]:[W331 16:39:45.845165848 ProcessGroupNCCL.cpp:1771] [PG ID 0 PG GUID 0(default_pg) Rank 1] '
    'Failed to check the "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: '
    "Connection reset by peer",
    "localhost: [rank3]:[W331 16:39:45.841648714 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=102, "
    "addr=[::]:42687, remote=[fdff:ffff::]:38153): Connection reset by peer",
]
_TRAINED = [
    "localhost:  iteration        2/       2 | consumed samples:           16 | elapsed time per iteration (ms): 4890.1 | "
    "learning rate: 3.000E-04 | global batch size:     8 | lm loss: 1.262998E+01 | grad norm: 28.443 |",
]


def _clean(pids: list[int], node: str = "localhost") -> list[str]:
    return [f"{node}: [2026-03-31 16:39:46,668] [INFO] [launch.py:367:main] Process {pid} exits successfully." for pid in pids]


def test_heartbeat_noise_after_every_worker_exited_cleanly_is_no_incident() -> None:
    got = engine_verdict([*_TRAINED, *_TAIL, *_clean([2486035, 2486036, 2486037, 2486038])])
    assert not [i for i in got if i.severity in ("warning", "critical")]


def test_without_the_launchers_word_the_lost_peers_still_say_something_ended() -> None:
    got = engine_verdict([*_TRAINED, *_TAIL])
    assert [i for i in got if i.severity in ("warning", "critical")]


def test_a_worker_that_failed_keeps_the_reports() -> None:
    failed = ["localhost: [2026-03-31 16:39:46,670] [ERROR] [launch.py:341:sigkill_handler] ['/usr/bin/python3', '-u', "
              "'pretrain_gpt.py', '--local_rank=3'] exits with return code = -9"]
    got = engine_verdict([*_TRAINED, *_TAIL, *_clean([2486035, 2486036, 2486037]), *failed])
    assert [i for i in got if i.severity == "critical"]
