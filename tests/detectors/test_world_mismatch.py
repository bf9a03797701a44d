"""One process started with another world size than its peers (a stale WORLD_SIZE in one
environment, a hand-built launch): the group cannot form, that process's set-up times out in the
store waiting for a member that does not exist (``keys: /default_pg/0//cpu//0/3`` in a world of
3), and its peers lose it. When every rank stated the size it was given and exactly one differs
from all the others, the failure is that rank's communication set-up.

Sources of the shapes: CPU torchrun jobs of the round-18 gatherers, a JSON logger's
``{"msg": "init", "rank": 2, "world_size": 4}`` (corpus holdout23 g23d-017) and a plain print of
``init_process_group(backend=gloo, rank=2, world_size=4)`` (g23c-033)."""

from __future__ import annotations

from tests.helpers import engine_verdict

_STORE_TIMEOUT = ["Traceback (most recent call last):", '  File "/home/user/job/train.py", line 10, in <module>',
                  '    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=20))',
                  "torch.distributed.DistStoreError: wait timeout after 20000ms, keys: /default_pg/0//cpu//0/3"]
_LAUNCHER = ["E1207 00:57:13.952000 11170 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: 1) "
             "local_rank: 2 (pid: 11177) of binary: /usr/bin/python3.11"]


def _init(worlds: dict[int, int]) -> list[str]:
    return [f'{{"msg": "init", "rank": {r}, "world_size": {w}, "backend": "gloo"}}' for r, w in worlds.items()]


def test_the_one_rank_given_another_world_size_is_named() -> None:
    top = engine_verdict([*_init({2: 4, 1: 3, 0: 3}), *_STORE_TIMEOUT, *_LAUNCHER])[0]
    assert (top.failure, top.rank) == ("nccl_error", 2)
    assert top.data["world_size_claimed"] == 4 and top.data["world_size_others"] == 3
    plain = [f"[worker {r}] init_process_group(backend=gloo, rank={r}, world_size={w}) master=127.0.0.1:25645"
             for r, w in ((2, 4), (1, 3), (0, 3))]
    assert engine_verdict([*plain, *_STORE_TIMEOUT, *_LAUNCHER])[0].rank == 2


def test_agreeing_or_evenly_split_sizes_name_no_misconfigured_rank() -> None:
    for worlds in ({0: 3, 1: 3, 2: 3}, {0: 4, 1: 4, 2: 3, 3: 3}):
        assert all(not i.data.get("world_mismatch") for i in engine_verdict([*_init(worlds), *_STORE_TIMEOUT, *_LAUNCHER]))
