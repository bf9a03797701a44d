"""Three ranks time out in a collective; the fourth's only report is a lost peer, printed after
their timeouts, and its last note before it went somewhere its peers' did not (``step 12:
refreshing shard cache (acquiring ...lock)`` while they print ``step 11 loss ...``): it was busy
elsewhere while they waited, and met closed sockets once they gave up and exited (correlate
``_woken_apart``). Its report is their exit, not a wait: it is the rank they waited for.

Formats: torchrun's ``--tee``-style ``[rankN]:`` excepthook tags on gloo's timeout and lost-peer
errors (torch 2.x, ``unbound_buffer.cc`` / ``pair.cc``), a script's own ``[rankN] step N loss X``
prints, the whole paste behind ``docker compose``'s ``service-1  | `` prefix."""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict, fed_whole_and_chunked

_TIMEOUT = ("RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] "
            "Timed out waiting 20000ms for recv operation to complete")
_LOST = ("RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed "
         "by peer [127.0.0.1]:12934. This is typically caused by a remote worker crashing.")


def _tb(r: int, error: str) -> list[str]:
    return [f"[rank{r}]: Traceback (most recent call last):",
            f'[rank{r}]:   File "/home/mluser/proj/train.py", line 20, in <module>',
            f"[rank{r}]:     opt.zero_grad(); loss.backward(); opt.step()",
            f"[rank{r}]: {error}"]


def _job(busy: int, note: str, lost_first: bool = False) -> list[str]:
    out = [f"[rank{r}] step {s} loss 0.{30 + s + r:02d}{r}" for s in (10, 11) for r in range(4)]
    out.append(f"[rank{busy}] {note}")
    peers = [r for r in range(4) if r != busy]
    tbs = [ln for r in peers for ln in _tb(r, _TIMEOUT)]
    lost = _tb(busy, _LOST)
    out += (lost + tbs) if lost_first else (tbs + lost)
    return [f"trainer-worker-1  | {ln}" for ln in out]


@pytest.mark.parametrize("busy", [1, 2])
def test_the_rank_woken_by_its_peers_exit_is_the_one_they_waited_for(busy: int) -> None:
    top = engine_verdict(_job(busy, "step 12: refreshing shard cache (acquiring /tmp/shard_cache.lock)"))[0]
    assert (top.failure, top.rank) == ("rank_hang", busy)


def test_a_last_note_like_its_peers_names_no_one() -> None:
    # its last note is a step line like theirs: it may have been waiting in the collective too,
    # its own timeout not yet fired when their exit closed its sockets
    lines = [ln for ln in _job(2, "step 11 loss 0.3052") if "refreshing" not in ln]
    top = engine_verdict(lines)[0]
    assert top.rank != 2


def test_a_lost_peer_before_the_timeouts_is_not_their_exit() -> None:
    top = engine_verdict(_job(2, "step 12: refreshing shard cache (acquiring /tmp/shard_cache.lock)", lost_first=True))[0]
    assert (top.failure, top.rank) != ("rank_hang", 2)


@pytest.mark.parametrize("size", [1, 5, 13])
def test_chunking_does_not_change_it(size: int) -> None:
    whole, live = fed_whole_and_chunked(_job(2, "step 12: refreshing shard cache (acquiring /tmp/shard_cache.lock)"), size)
    assert [(i.failure, i.rank) for i in whole.verdict()] == [(i.failure, i.rank) for i in live.verdict()]
