"""Python-logging headers that carry the process (``%(hostname)s pid=%(process)d``) and a rank
tag written as ``rank1:`` after the logger name. The shapes are from a CPU torchrun pipeline job
(corpus holdout19 g19-001: ``2026-12-06 05:13:57,257 vm pid=18710 [INFO] pipe.stage1 rank1:
step=41 loss=nan``) and the format strings people write for multi-process jobs
(``%(asctime)s %(hostname)s pid=%(process)d [%(levelname)s] %(name)s rank%(rank)d: %(message)s``).
"""

from __future__ import annotations

import pytest

from detectors.prefixes import split_prefixes
from tests.helpers import engine_verdict


@pytest.mark.parametrize(("line", "rank", "pid", "body"), [
    ("2026-12-06 05:13:57,257 vm pid=18710 [INFO] pipe.stage1 rank1: step=41 loss=nan", 1, 18710, "step=41 loss=nan"),
    ("2026-12-06 05:13:57,257 [INFO] pipe.stage1 rank1: step=41 loss=nan", 1, None, "step=41 loss=nan"),
    ("2026-12-06 05:13:57,257 INFO train rank 3: step=41 loss=nan", 3, None, "step=41 loss=nan"),
    ("2026-12-06 05:13:57,257 node-7.cluster [pid 4242] INFO step=41 loss=nan", None, 4242, "step=41 loss=nan"),
    # a level word is no host name, and "pid 1:" with a space is no pid field
    ("2026-12-06 05:13:57,257 INFO pid 1: step=41", None, None, "pid 1: step=41"),
])
def test_the_header_names_the_process_and_the_rank(line: str, rank: int | None, pid: int | None, body: str) -> None:
    p = split_prefixes(line, 2026)
    assert (p.rank, p.pid, p.body) == (rank, pid, body)


def test_the_nan_is_the_rank_that_logged_it_first() -> None:
    lines = [f"2026-12-06 05:13:57,{i:03d} vm pid={18709 + r} [INFO] pipe.stage{r} rank{r}: step={s} loss={v}"
             for i, (r, s, v) in enumerate([(0, 40, "1.42"), (1, 40, "1.42"), (1, 41, "nan"), (0, 45, "nan"), (1, 45, "nan")])]
    top = engine_verdict(lines)[0]
    assert (top.failure, top.rank) == ("nonfinite_loss", 1)
