"""A rank's line that reports a non-finite value while the same line logs that rank's own loss
and own grad norm finite saw the all-reduced value: it names no rank's own NaN, and the rank whose
own (local) grad norm went non-finite is the initiator. Fixture: a CPU torchrun job of ours logging
JSON records with local and reduced grad norms (round 16's generated set, corpus g21-004)."""

from __future__ import annotations

from functools import partial

from tests.helpers import top_verdict

_RECORDS = ['{"ts": 1796586187.475, "rank": 1, "event": "train_step", "step": 27, "loss": 0.10525, "local_grad_norm": 1.2056, "grad_norm": 1.1681, "lr": 0.01}', '{"ts": 1796586187.487, "rank": 0, "event": "train_step", "step": 28, "loss": 0.08654, "local_grad_norm": 1.1207, "grad_norm": 1.045, "lr": 0.01}', '{"ts": 1796586187.489, "rank": 2, "event": "train_step", "step": 28, "loss": 0.10399, "local_grad_norm": 1.2714, "grad_norm": 1.045, "lr": 0.01}', '{"ts": 1796586187.49, "rank": 1, "event": "train_step", "step": 28, "loss": 0.09422, "local_grad_norm": 1.2677, "grad_norm": 1.045, "lr": 0.01}', '{"ts": 1796586187.495, "rank": 0, "event": "skip_step", "step": 29, "reason": "non-finite grad norm", "loss": 0.06854, "local_grad_norm": 0.9126883149147034, "grad_norm": Infinity}', '{"ts": 1796586187.497, "rank": 2, "event": "skip_step", "step": 29, "reason": "non-finite grad norm", "loss": 0.06568, "local_grad_norm": Infinity, "grad_norm": Infinity}', '{"ts": 1796586187.498, "rank": 1, "event": "skip_step", "step": 29, "reason": "non-finite grad norm", "loss": 0.06579, "local_grad_norm": 0.8450297117233276, "grad_norm": Infinity}', '{"ts": 1796586187.513, "rank": 0, "event": "skip_step", "step": 30, "reason": "non-finite grad norm", "loss": 0.06573, "local_grad_norm": 0.85160231590271, "grad_norm": Infinity}', '{"ts": 1796586187.515, "rank": 2, "event": "skip_step", "step": 30, "reason": "non-finite grad norm", "loss": 0.08984, "local_grad_norm": Infinity, "grad_norm": Infinity}', '{"ts": 1796586187.517, "rank": 1, "event": "skip_step", "step": 30, "reason": "non-finite grad norm", "loss": 0.10799, "local_grad_norm": 1.274103045463562, "grad_norm": Infinity}', '{"ts": 1796586187.526, "rank": 0, "event": "skip_step", "step": 31, "reason": "non-finite grad norm", "loss": 0.13081, "local_grad_norm": 1.444328784942627, "grad_norm": Infinity}', '{"ts": 1796586187.527, "rank": 2, "event": "skip_step", "step": 31, "reason": "non-finite grad norm", "loss": 0.06744, "local_grad_norm": Infinity, "grad_norm": Infinity}', '{"ts": 1796586187.529, "rank": 1, "event": "skip_step", "step": 31, "reason": "non-finite grad norm", "loss": 0.09043, "local_grad_norm": 1.0828043222427368, "grad_norm": Infinity}', '{"ts": 1796586187.538, "rank": 0, "event": "skip_step", "step": 32, "reason": "non-finite grad norm", "loss": 0.07206, "local_grad_norm": 0.9629969596862793, "grad_norm": Infinity}', '{"ts": 1796586187.539, "rank": 2, "event": "skip_step", "step": 32, "reason": "non-finite grad norm", "loss": 0.08807, "local_grad_norm": Infinity, "grad_norm": Infinity}', '{"ts": 1796586187.541, "rank": 1, "event": "skip_step", "step": 32, "reason": "non-finite grad norm", "loss": 0.08829, "local_grad_norm": 1.0657647848129272, "grad_norm": Infinity}']


_top = partial(top_verdict, path="console.log")


def test_the_rank_whose_own_grad_norm_went_inf_is_named_not_the_first_reporter() -> None:
    assert _top(_RECORDS) == ("nonfinite_loss", 2)


def test_a_report_on_a_line_whose_own_values_are_not_finite_still_names_its_rank() -> None:
    # rank 0's own local norm non-finite on its report line: its report is its own
    own = [line.replace('"local_grad_norm": 0.9126883149147034', '"local_grad_norm": Infinity') for line in _RECORDS]
    assert _top(own) == ("nonfinite_loss", 0)


# the report on a line of its own beside the rank's metric line of that step, with stdlib logging and
# a short "[rN]" rank tag (a CPU torchrun job of ours, round 17's generated set, corpus g22-018)
_SEPARATE = [
    "INFO:train:[r0] step 42 loss 0.5112 local_grad_norm 1.2041 grad_norm 1.1873",
    "INFO:train:[r1] step 42 loss 0.4397 local_grad_norm 1.1420 grad_norm 1.1873",
    "INFO:train:[r2] step 42 loss 0.6120 local_grad_norm 1.2158 grad_norm 1.1873",
    "WARNING:train:[r0] step 43: non-finite grad norm (inf), skipping update",
    "WARNING:train:[r1] step 43: non-finite grad norm (inf), skipping update",
    "INFO:train:[r1] step 43 loss 0.3969 local_grad_norm inf grad_norm inf",
    "WARNING:train:[r2] step 43: non-finite grad norm (inf), skipping update",
    "INFO:train:[r0] step 43 loss 0.4502 local_grad_norm 1.1907 grad_norm inf",
    "INFO:train:[r2] step 43 loss 0.5873 local_grad_norm 1.2230 grad_norm inf",
]


def test_a_report_on_its_own_line_is_read_with_the_ranks_metric_line_of_that_step() -> None:
    assert _top(_SEPARATE) == ("nonfinite_loss", 1)


def test_ranks_that_logged_no_metric_line_at_that_step_saw_the_reduced_norm() -> None:
    # as in g22-018: ranks 0 and 2 print their metric lines every few steps, rank 1 at each bad one
    assert _top(_SEPARATE[:7]) == ("nonfinite_loss", 1)
    # and every rank's report with no metric line at all names no rank
    reports = [line for line in _SEPARATE if "non-finite" in line]
    assert _top(reports) == ("nonfinite_loss", None)
