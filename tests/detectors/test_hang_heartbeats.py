"""A training loop's own watchdog prints, per rank, that it waits in a collective ("rank 2: waiting
in all_reduce for 10s"). Each such line says its speaker reached that sync point; the rank that
logged steps like the others and then never said so is the one they wait for, named once the wait
ended (here the launcher was stopped with SIGTERM from outside). Shapes from corpus holdout20
g20-035 (a CPU torchrun job, four ranks, rank 3 asleep in its loop)."""

from __future__ import annotations

from tests.helpers import engine_verdict

_STOP = ["W1206 09:28:32.009000 22726 torch/distributed/elastic/agent/server/api.py:753] Received 15 death signal, shutting down workers",
         "Traceback (most recent call last):",
         '  File "/work/genvenv/lib/python3.11/site-packages/torch/distributed/elastic/multiprocessing/api.py", line 86, in _terminate_process_handler',
         '    raise SignalException(f"Process {os.getpid()} got signal: {sigval}", sigval=sigval)',
         "torch.distributed.elastic.multiprocessing.api.SignalException: Process 22726 got signal: 15"]


def _job(waiting: tuple[int, ...]) -> list[str]:
    lines = [f"rank {r}: step {s} done, loss 1.{s:02d}" for s in (4, 8) for r in range(4)]
    for waited in (4, 7, 10):
        lines += [f"rank {r}: waiting in all_reduce for {waited}s (step 11, bucket 0/4)" for r in waiting]
    return lines


def test_the_rank_that_never_says_it_waits_is_named_once_the_job_is_stopped() -> None:
    top = engine_verdict(_job((2, 0, 1)) + _STOP)[0]
    assert (top.failure, top.rank) == ("rank_hang", 3)


def test_every_rank_waiting_names_no_one() -> None:
    assert all(i.rank is None for i in engine_verdict(_job((2, 0, 1, 3)) + _STOP))


def test_waits_that_have_not_ended_do_not_alert() -> None:
    assert not [i for i in engine_verdict(_job((2, 0, 1))) if i.severity in ("warning", "critical")]
