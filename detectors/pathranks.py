"""What a log file's path says about ranks.

Layouts (log-formats.md §1.6): torchrun ``--log-dir`` keeps
``<run_id>_<rand>/attempt_<n>/<local_rank>/{stdout,stderr}.log`` and ``error.json`` (the
directory number is the LOCAL rank); per-rank files name the GLOBAL rank (``rank3.log``,
``rank_11.log``, ``train-rank-3.out``, ``node1/rank_11.log``) or the local one
(``local_rank_3.log``); PaddlePaddle's launcher keeps ``log/workerlog.N``, N the local rank. Used for the files a diagnosis reads (``monitor.inputs``) and for the
files a paste names in its ``==> path <==`` section headers (``parsers/sections.py``).
"""

from __future__ import annotations

import os
import re

__all__ = ["path_ranks"]

_ATTEMPT = re.compile(r"(?:^|/)attempt_(?P<attempt>\d+)/(?P<lr>\d+)/(?:stdout\.log|stderr\.log|error\.json)$")
_LOCAL = re.compile(r"(?:^|[^a-z0-9])local[_-]?rank[_-]?(?P<n>\d+)(?:\D|$)", re.IGNORECASE)
# PaddlePaddle's launcher (paddle.distributed.launch / fleet launch_utils): one ``workerlog.N`` per
# trainer of the node under --log_dir (default ``log/``), N its index on that node: a local rank
_PADDLE = re.compile(r"^workerlog\.(?P<n>\d+)$")
_GLOBAL = re.compile(r"(?:^|[^a-z0-9])rank[_-]?(?P<n>\d+)(?:\D|$)", re.IGNORECASE)


def path_ranks(rel: str) -> tuple[int | None, int | None, int | None]:
    """(global rank, local rank, attempt) as far as the relative path tells."""
    rel = rel.replace(os.sep, "/")
    m = _ATTEMPT.search(rel)
    if m:
        return None, int(m.group("lr")), int(m.group("attempt"))
    name = rel.rsplit("/", 1)[-1]
    pm = _PADDLE.match(name)
    if pm:
        return None, int(pm.group("n")), None
    for part in (name, *reversed(rel.split("/")[:-1])):
        lm = _LOCAL.search(part)
        if lm:
            return None, int(lm.group("n")), None
        gm = _GLOBAL.search(part)
        if gm:
            return int(gm.group("n")), None, None
    return None, None, None
