"""A job stopped from outside whose workers' stack dumps name no rank.

A Slurm time limit (``CANCELLED AT ... DUE TO TIME LIMIT``) sends torchrun SIGTERM; torchrun
passes it to each worker, and a worker with ``faulthandler.register(signal.SIGTERM)`` prints the
``Current thread`` block of where it was, with no rank prefix (the job's own logger puts the rank
in its records, faulthandler does not). When every process but one waits in the same collective
(DDP's backward all-reduce) and that one is elsewhere, the job had hung (corpus holdout31
g31e-006, a CPU ``torchrun`` 2.13 job of four workers). Which rank that was, the dumps cannot say:
the one rank whose last own note stands apart from its peers' can.
"""

from __future__ import annotations

from tests.helpers import engine_verdict

_SITE = "/opt/venv/lib/python3.11/site-packages"
_BACKWARD = [f"{_SITE}/torch/autograd/graph.py\t979\t_engine_run_backward", f"{_SITE}/torch/_tensor.py\t623\tbackward",
             "/home/user/job/train.py\t77\t<module>"]
_OWN_SLEEP = ["/home/user/job/train.py\t62\t<module>"]


def _dump(frames: list[str], n: int) -> list[str]:
    return [f"Current thread 0x00007f924520{n}b80 (most recent call first):",
            *(f'  File "{path}", line {line} in {fn}' for path, line, fn in (f.split("\t") for f in frames))]


def _job(last_of_rank3: str) -> list[str]:
    lines = ["[2026-12-07 23:23:30][rank0] world_size=4 model=tf steps=200"]
    for step in (0, 5, 10, 15, 20, 25, 30):
        lines += [f"[2026-12-07 23:23:3{step // 10}][rank{r}] step {step:4d}/200 | loss 0.{9000 - step * 7} | lr 0.01"
                  for r in (0, 2, 3, 1)]
    lines.append(last_of_rank3)
    lines.append("W1207 23:23:52.864000 32318 torch/distributed/elastic/agent/server/api.py:753] Received 15 death signal, "
                 "shutting down workers")
    for n in range(4):
        lines.append(f"W1207 23:23:52.865000 32318 torch/distributed/elastic/multiprocessing/api.py:1028] Sending process "
                     f"3232{4 + n} closing signal SIGTERM")
        lines += _dump(_OWN_SLEEP if n == 3 else _BACKWARD, n)
    lines.append("slurmstepd: error: *** JOB 881234 ON gpu-node17 CANCELLED AT 2026-12-07T23:24:00 DUE TO TIME LIMIT ***")
    return lines


def test_one_unnamed_process_elsewhere_is_the_rank_whose_last_note_went_elsewhere() -> None:
    top = engine_verdict(_job("[2026-12-07 23:23:33][rank3] loading next shard from /data/shards/part-00031.arrow"))[0]
    assert (top.failure, top.rank, top.data.get("rank_from")) == ("rank_hang", 3, "progress")


def test_without_a_note_apart_the_hang_names_no_rank() -> None:
    top = engine_verdict(_job("[2026-12-07 23:23:33][rank3] step   30/200 | loss 0.8790 | lr 0.01"))[0]
    assert (top.failure, top.rank) == ("rank_hang", None)
