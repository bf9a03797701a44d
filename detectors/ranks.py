"""The rank-resolution chain: which global rank a line speaks for, and how we know.

Most specific first, each answer carrying its provenance (``rank_from``) into the
evidence:

1. ``prefix`` — the line's own prefix (``[rank3]:``, ``[default2]:`` mapped to a global
   rank, a Slurm label, NCCL ``host:pid`` tied to a rank by a ``comm ... rank N`` line, Ray's
   ``(RayTrainWorker pid=N)`` tied to one by the job's worker table, parsers/workermap.py);
2. ``path`` — the file the line is in (``rank_11.log``, torchrun ``attempt_0/3/``);
3. ``message`` — the message names its own rank (``[Rank 1] ...``, ``... on rank 2``,
   ``rank=3``, ``local_rank: 5``), never a peer's (``from rank 3``, ``peer rank 3``);
4. ``launcher`` — inside torchrun's failure summary block for that rank, or an orchestrator's
   failure section for it (Ray's ``[Rank 1 Error Snippet]:``).

A line folded from several sources (``folded``) names no rank at all.

The weaker links (``block``: an untagged line pasted right above a rank-tagged
traceback; ``launcher`` exits for silent deaths; ``gpu_index``: a single-node job's
``GPU 1`` in an OOM message, marked inferred) need the whole job and are applied by the
detect and correlate stages.
"""

from __future__ import annotations

import re

from detectors.parsers.base import FileState, plausible
from detectors.parsers.workermap import SNIPPET_LINES
from detectors.prefixes import Prefixed

__all__ = ["GLUED_RANK", "folded", "message_rank", "plausible", "resolve_rank"]

# a log aggregator's mark on a line that stands for several sources' alike lines (Ray's driver
# dedup, on by default: "... [repeated 12x across cluster]"); the prefix and numbers kept are one
# source's, so the line is evidence about no single rank
_FOLDED = re.compile(r"\[repeated \d+x across cluster\]")

# a line of one process glued to the end of another's (no newline between two processes' writes
# to one pipe): a rank tag right after a value's last character starts the second line, or a
# logger's bracketed time stamp with the rank tag after it ("... lr 0.01[2026-12-07 23:23:33][rank3] step 30")
GLUED_RANK = re.compile(r"(?:(?<=\d)|(?<=nan)|(?<=inf))(?=(?:rank|Rank|RANK)[=: ]?\d{1,6}\s|\[(?:rank|default)\d{1,6}\]:"
                         r"|\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d{1,6})?\]\s?\[?(?:rank|Rank|RANK)[=: ]?\d{1,6}\b)")


def folded(body: str) -> bool:
    """The line stands for many sources' lines (see ``_FOLDED``)."""
    return "across cluster" in body and _FOLDED.search(body) is not None


# "rank 3", "Rank: 3", "rank=3", "global rank 3", "local_rank: 5", "[Rank 1]", "RANK=2", and a tag
# glued to its number ("INFO rank2 step21: ...", "rank1:") when nothing but a separator follows
_MSG_RANK = re.compile(
    r"(?<![\w-])(?P<kind>(?:global[ _])?rank|local[ _-]?rank)['\"]?"
    r"(?:(?:\s{0,2}[:=#]\s{0,2}|\s)(?P<n>\d{1,6})(?![\d.])|(?P<g>\d{1,6})(?![\w.]))",
    re.IGNORECASE,
)
# a launch command with its environment in front ("MASTER_ADDR=x WORLD_SIZE=2 RANK=0 python
# train.py"): its RANK=N is what the launcher was given (a node's rank under a multi-node
# launcher), not a rank speaking
_LAUNCH_ENV = re.compile(r"\b(?:[A-Z][A-Z0-9_]*=\S*\s+)+(?:\S*/)?(?:python[\d.]*|torchrun|deepspeed|accelerate|srun|mpirun|"
                         r"horovodrun|bash|sh|nohup|exec|env)\b")
# words that make the rank after them somebody else's
_PEER_WORDS = ("from", "to", "peer", "src", "dst", "remote", "for", "with", "and", "of", "by", "than", "next", "prev")


def message_rank(body: str) -> tuple[int | None, int | None]:
    """(global rank, local rank) the message names as its own, if any."""
    if "ank" not in body and "ANK" not in body:
        return None, None
    launch = "=" in body and _LAUNCH_ENV.search(body) is not None
    for m in _MSG_RANK.finditer(body):
        if launch and m.group("kind").isupper() and body[m.end("kind"):m.end("kind") + 1] == "=":
            continue  # an environment assignment on a launch command
        before = body[max(0, m.start() - 12) : m.start()].rstrip(" [(").lower()
        if before.endswith(_PEER_WORDS):
            continue
        n = int(m.group("n") or m.group("g"))
        if m.group("kind").lower().startswith("local"):
            return None, n
        return n, None
    return None, None


CAPTION_LINES = 200  # lines below a reporter's caption that its rank holds for (parsers/captions.py)
CPP_CONT_LINES = 6  # untagged lines right below such a line that continue its message (CANN dumps ~5)

# an NCCL debug line whose host:pid:tid was cut ("[1] enqueue.cc:1500 NCCL WARN ..."): its [N] is the CUDA device
_NCCL_DEV = re.compile(r"(?:\S+\.(?:cc|cu|h):\d+ )?NCCL (?:INFO|WARN)\b")
BRACKETS_KEPT = 4096  # leading "[N] " numbers remembered per file (a viewer's line numbers never repeat)


def _bracket_rank(n: int, state: FileState, line: int) -> bool:
    """Whether a leading ``[N] `` is a rank: once any such number came back on a second line
    (line numbers never do), the file's brackets are ``mpirun -prepend-rank`` tags. (The same
    line read twice, as the shape cache verifies it, is no second line.)"""
    if getattr(state, "bracket_ranks", False):
        return True
    seen = getattr(state, "bracket_seen", None)
    if not isinstance(seen, dict):
        return False  # a FileState pickled by an older version
    first = seen.get(n)
    if first is not None and first != line:
        state.bracket_ranks = True
        return True
    if first is None and len(seen) < BRACKETS_KEPT:
        seen[n] = line
    return False


def resolve_rank(pre: Prefixed, state: FileState, line: int = 0) -> tuple[int | None, int | None, str | None]:
    """(global rank, local rank, provenance) for one prefix-stripped segment (``line``: its line
    number, for the sections a header opens)."""
    job = state.job
    if state.rank is not None and state.rank >= job.trusted_ws:
        job.trusted_ws = state.rank + 1
    if folded(pre.body):
        return None, None, None
    rank = pre.rank
    local = pre.local_rank
    if rank is not None and rank == pre.task and not pre.tagged and getattr(job, "srun_node_tasks", False):
        rank = None  # an srun label of a node's task (torchrun's ranks under it), not a rank
    if rank is None and pre.bracket is not None and not (pre.host is None and _NCCL_DEV.match(pre.body)) and _bracket_rank(pre.bracket, state, line):
        rank = pre.bracket
    if rank is not None and not plausible(rank, job.trusted_ws):
        job.implausible += 1
        rank = None
    how: str | None = "prefix" if rank is not None else None
    if rank is not None and local is not None:
        state.local_to_global[local] = rank
    if rank is None and local is not None and local in state.local_to_global:
        rank, how = state.local_to_global[local], "prefix"
    if rank is None and pre.host is not None and pre.pid is not None:
        r = state.job.pid_rank.get((pre.host, pre.pid))
        if r is not None:
            rank, how = r, ("nccl_tree" if (pre.host, pre.pid) in job.tree_procs else "prefix")
    if rank is None and pre.host is None and pre.pid is not None and job.pid_rank:
        # an orchestrator's worker (Ray's "(RayTrainWorker pid=N)"), through the worker table
        # the job printed (parsers/workermap.py); keyed by the worker's node when the line names it
        r = job.pid_rank.get((pre.node or "", pre.pid))
        if r is not None and r >= 0:
            rank, how = r, "prefix"
    snip = getattr(state, "snippet", None)  # (a FileState pickled by an older version lacks it)
    if snip is not None and (snip[0] != pre.pid or not 0 < line - snip[2] <= SNIPPET_LINES):
        state.snippet = snip = None  # another speaker, or too far below the section's header
    if rank is None and snip is not None and len(snip[1]) == 1:
        rank, how = snip[1][0], "launcher"  # inside the orchestrator's failure section for that rank
    if rank is None and state.summary_ctx_rank is not None:
        rank, how = state.summary_ctx_rank, "launcher"  # inside the launcher's summary block for that rank
    if rank is None and state.rank is not None:
        rank, how = state.rank, "path"
    if rank is None and local is None:
        g = pre.logging_rank
        lr: int | None = None
        if g is None:
            g, lr = message_rank(pre.body)
        if g is not None and not plausible(g, job.trusted_ws):
            job.implausible += 1
        elif g is not None:
            rank, how = g, "message"
        elif lr is not None and state.local_rank is None:
            local = lr
            if lr in state.local_to_global:
                rank, how = state.local_to_global[lr], "message"
    cap = getattr(state, "caption", None)  # (a FileState pickled by an older version lacks it)
    if cap is not None and (pre.time is not None or not 0 < line - cap[1] <= CAPTION_LINES):
        state.caption = cap = None  # a timed record of the job's own log, or far below: the paste has ended
    if rank is None and local is None and cap is not None and pre.host is None and pre.pid is None:
        rank, how = cap[0], "block"  # a line of the dump a reporter's caption named (parsers/captions.py)
    if rank is None and local is None:
        local = state.local_rank
        how = "path" if local is not None else None
    cont = getattr(state, "cpp_cont", None)  # (a FileState pickled by an older version lacks it)
    if how == "prefix" and rank is not None and pre.level is not None and pre.body.endswith(":"):
        # a logger's record whose message ends in a colon goes on below: c10's C++ logger prints
        # the rank tag and its "[W file.cpp:N]" header once, then the message's own lines
        state.cpp_cont = (rank, line)
    elif (cont is not None and rank is None and local is None and pre.host is None and pre.pid is None
          and pre.time is None and 0 < line - cont[1] <= CPP_CONT_LINES):
        rank, how = cont[0], "block"
    elif cont is not None and (rank is not None or not 0 < line - cont[1] <= CPP_CONT_LINES):
        state.cpp_cont = None
    return rank, local, how
