"""A loss scaler's back-off printed between a tqdm bar's refreshes: the bar says where the loop was.

Only a bar's edges (0 %, 100 %, its first steps) reach the parse, so an apex / DeepSpeed back-off
printed deep into a run looked like the start-up search when no metric line gave a step. The
back-off now looks back (within the parse's kept tail, so live chunks and a whole file agree) for
the last bar still running: "11%|#1 | 34081/300000 [...]" puts it at step 34081, past the start-up
search, so repeated back-offs there are overflows mid-run. A bar at its end (a tokenizer's map,
a finished epoch) says nothing about the loop; an early position stays the search.

Lines: apex's "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 4096.0"
under Horovod's mpirun prefixes (``[1,0]<stdout>:``), tqdm's ascii bar, from a MeMo-BERT-style
horovod + apex run (corpus h21a-021's shape); HF datasets' "Map: 100%|...| 50000/50000 [...]".
"""

from __future__ import annotations

import pytest

from detectors.engine import Engine
from detectors.model import Incident
from tests.helpers import engine_verdict


def _job(bar: str) -> list[str]:
    return [
        bar,
        "[1,0]<stdout>:Warning: NaN or Inf found in input tensor.",
        "[1,0]<stdout>:Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 4096.0",
        "[1,1]<stdout>:Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 4096.0",
        "[1,0]<stdout>:Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 4096.0",
        "[1,1]<stdout>:Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 4096.0",
    ]


_DEEP = " 11%|#1        | 34081/300000 [9:57:53<76:49:37,  1.04s/it]"


def test_back_offs_printed_deep_into_a_bar_are_overflows_mid_run() -> None:
    top = engine_verdict(_job(_DEEP))[0]
    assert (top.failure, top.severity) == ("fp16_overflow_skips", "warning")


@pytest.mark.parametrize("bar", [
    "Map: 100%|##########| 50000/50000 [00:12<00:00, 4012.55 examples/s]",  # a finished pass: no loop position
    "  0%|          | 12/300000 [00:10<70:12:01,  1.19it/s]",  # the first steps: the search
])
def test_a_finished_or_early_bar_leaves_the_start_up_search(bar: str) -> None:
    assert engine_verdict(_job(bar))[0].failure == "loss_scale_warmup"


def test_fed_line_by_line_as_the_daemon_does_it_reads_the_same() -> None:
    engine = Engine("t")
    fs = engine.open_file("train.log")
    lineno = 1
    for line in _job(_DEEP):
        engine.feed(f"{line}\n".encode(), lineno, fs)
        lineno += 1
    got: list[Incident] = engine.verdict()
    assert got[0].failure == "fp16_overflow_skips"
