"""torch.multiprocessing.spawn jobs whose gloo all_reduce timed out because one process hung
(it sleeps forever before a collective; real CPU runs with torch 2.13, captured verbatim). spawn
prints the first failed process's traceback below "-- Process N terminated with the following
error:" (that process's block) and, since torch 2.2, "Terminating process PID via signal SIGTERM"
for each process still running: failed + terminated is every process there was. With two
processes, the one that did not time out is the hung one; with four, one report cannot say which
of the other three held it up."""

from __future__ import annotations

from tests.helpers import engine_verdict

_STEPS = ['step 1 loss 8.6002', 'step 2 loss 5.5574', 'step 3 loss 4.6327']
# the parent's traceback and the failed process's block below it, as spawn prints them
_RAISED = [
    'Traceback (most recent call last):',
    '  File "/home/user/job/spawn_hang.py", line 22, in <module>',
    '    mp.spawn(worker, args=(world,), nprocs=world)',
    '  File "/opt/venv/lib/python3.11/site-packages/torch/multiprocessing/spawn.py", line 340, in spawn',
    '    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")',
    '           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^',
    '  File "/opt/venv/lib/python3.11/site-packages/torch/multiprocessing/spawn.py", line 296, in start_processes',
    '    while not context.join():',
    '              ^^^^^^^^^^^^^^',
    '  File "/opt/venv/lib/python3.11/site-packages/torch/multiprocessing/spawn.py", line 211, in join',
    '    raise ProcessRaisedException(msg, error_index, failed_process.pid)',
    'torch.multiprocessing.spawn.ProcessRaisedException: ',
    '',
    '-- Process 0 terminated with the following error:',
    'Traceback (most recent call last):',
    '  File "/opt/venv/lib/python3.11/site-packages/torch/multiprocessing/spawn.py", line 87, in _wrap',
    '    fn(i, *args)',
    '  File "/home/user/job/spawn_hang.py", line 14, in worker',
    '    dist.all_reduce(w.grad)',
    '  File "/opt/venv/lib/python3.11/site-packages/torch/distributed/c10d_logger.py", line 83, in wrapper',
    '    return func(*args, **kwargs)',
    '           ^^^^^^^^^^^^^^^^^^^^^',
    '  File "/opt/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 3252, in all_reduce',
    '    work.wait()',
    'RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 10000ms for recv operation to complete',
    '',
]


def _terminating(stamp: str, parent: int, pids: list[int]) -> list[str]:
    return [f"W1206 {stamp} {parent} torch/multiprocessing/spawn.py:165] Terminating process {pid} via signal SIGTERM"
            for pid in pids]


# world 2, process 1 sleeps at step 4: process 0's recv times out
_WORLD2 = [*_STEPS, *_terminating("01:28:52.394000", 1785, [1839]), *_RAISED]
# world 4, process 2 sleeps at step 4: spawn reports process 0's timeout only
_WORLD4 = [*_STEPS, *_terminating("01:29:13.814000", 1900, [1903, 1904, 1905]), *_RAISED]


def test_two_processes_the_silent_one_hung() -> None:
    top = engine_verdict(_WORLD2)[0]
    assert (top.failure, top.rank) == ("rank_hang", 1)
    assert any(c["failure"] == "collective_timeout" and c["rank"] == 0 for c in top.collateral)


def test_four_processes_one_report_names_no_culprit() -> None:
    top = engine_verdict(_WORLD4)[0]
    assert (top.failure, top.rank) == ("collective_timeout", None)


def test_without_spawn_terminating_lines_no_world_is_known() -> None:
    lines = [ln for ln in _WORLD2 if "Terminating process" not in ln]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("collective_timeout", None)
