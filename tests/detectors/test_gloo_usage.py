"""A collective called wrongly on one rank under gloo, and what torchrun says about it.

Lines from CPU torchrun jobs (torch 2.13, gloo; corpus holdout18 g18-025, g18-038, g18-053,
g18b-029): c10d's argument checks (``ProcessGroupGloo::allgather: invalid tensor size``,
``Cannot use ReduceOp.BAND with non-integral dtype``), gloo's own enforce failures, and the
agent's two reports of one failed worker (its ``failed (exitcode: 1) local_rank: N`` line and the
summary's root cause).
"""

from __future__ import annotations

from tests.helpers import engine_verdict, torchrun_summary


def _summary(failed: int, world: int, pid0: int = 24173) -> list[str]:
    # the failed worker exited 1; torchrun then stopped the others with SIGTERM
    return torchrun_summary(failed, {r: 1 if r == failed else -15 for r in range(world)},
                            {r: pid0 + r for r in range(world)})


_PEER = ("[rank{r}]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection "
         "closed by peer [127.0.0.1]:26020. This is typically caused by a remote worker crashing.")


def test_a_rank_that_called_a_collective_wrongly_is_the_initiator() -> None:
    for err in ("[rank2]: RuntimeError: Cannot use ReduceOp.BAND with non-integral dtype",
                "[rank2]: RuntimeError: ProcessGroupGloo::allgather: invalid tensor size at index 0 (expected (1920), got (2048))"):
        lines = ["[rank2]: Traceback (most recent call last):", '[rank2]:   File "/home/user/job/train.py", line 41, in <module>',
                 "[rank2]:     dist.all_reduce(flag, op=dist.ReduceOp.BAND)", err,
                 "[rank1]: Traceback (most recent call last):", _PEER.format(r=1), *_summary(2, 3)]
        top = engine_verdict(lines)[0]
        # (rank 0, silent, is not a dead rank its peers lost: rank 2 raised, its peers lost it)
        assert (top.failure, top.rank) == ("nccl_error", 2), err


def test_an_untagged_init_error_is_the_one_failed_workers() -> None:
    """gloo fails in init_process_group (before any rank tag): the agent's line and its summary
    both name local rank 2, one worker (one pid)."""
    lines = ["Traceback (most recent call last):", '  File "/home/user/job/train.py", line 12, in <module>',
             "    dist.init_process_group(backend='gloo')",
             "RuntimeError: [enforce fail at /__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/device.cc:84] "
             "ifa != nullptr. Unable to find address for: ib0", *_summary(2, 3)]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("nccl_error", 2)


def test_every_process_failing_the_same_check_names_no_rank() -> None:
    """Fabric's strategy conflict, printed by all three processes (only object addresses differ):
    the launcher's root cause is just the first exit it saw."""
    lines = []
    for addr in ("0x7f4532ebd510", "0x7f9d0a88ef90", "0x7f0663c9ec50"):
        lines += ["Traceback (most recent call last):", '  File "/home/user/job/train.py", line 8, in <module>',
                  f"ValueError: Your code has `Fabric(strategy=<lightning.fabric.strategies.ddp.DDPStrategy object at "
                  f"{addr}>, ...)` but it conflicts with the value `--strategy=ddp` set through the CLI."]
    top = engine_verdict(lines + _summary(1, 3))[0]
    assert (top.failure, top.rank) == ("rank_exception", None)


def test_gloos_own_failed_invariant_in_set_up_is_the_failed_workers_nccl_error() -> None:
    """gloo's GLOO_ENFORCE in its context (one process given another world size than its peers:
    ``rank < size. 3 vs 3``; corpus holdout24 g24-020) is a communication set-up failure, not a
    plain exception: the worker the agent saw fail is named."""
    lines = ["Traceback (most recent call last):", '  File "/home/user/job/train.py", line 9, in <module>',
             "    dist.init_process_group('gloo', rank=rank, world_size=world)",
             '  File "/opt/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 2169, '
             "in _new_process_group_helper", "    backend_class = ProcessGroupGloo(",
             "RuntimeError: [enforce fail at /__w/pytorch/pytorch/third_party/gloo/gloo/context.cc:23] rank < size. 3 vs 3",
             *_summary(2, 3)]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("nccl_error", 2)
