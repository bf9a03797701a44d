"""Fixed-width metric tables whose column names hold a space and whose cells print lists.

DeepXDE prints ``Step      Train loss    Test loss     Test metric`` and then one row per display
step with one number per loss term in brackets (``0  [5.47e+03]  [6.44e+03]  [1.00e+00]``,
``[1.05e+00, 2.31e-01]`` for several terms, ``[]`` for no metric). A column is read as the sum of
its terms, NaN when any term is. Lines from lululxvi/deepxde issue threads (2021-2023: a PDE
loss that went NaN; a multi-term loss table).
"""

from __future__ import annotations

from detectors.model import EventKind
from tests.helpers import engine_events, engine_verdict

_ONE = ["Step      Train loss    Test loss     Test metric",
        "0         [5.47e+03]    [6.44e+03]    [1.00e+00]",
        "1000      [5.47e+03]    [6.44e+03]    [1.00e+00]",
        "2000      [nan]         [nan]         [nan]",
        "3000      [nan]         [nan]         [nan]"]


def test_a_nan_in_a_list_cell_is_a_nan_loss_at_that_step() -> None:
    top = engine_verdict(_ONE)[0]
    assert (top.failure, top.step) == ("nonfinite_loss", 2000)


def test_several_terms_sum_to_the_loss_and_an_empty_list_is_no_metric() -> None:
    lines = ["Step      Train loss                        Test loss                         Test metric",
             "0         [1.05e+00, 2.31e-01, 1.0e-02]    [1.10e+00, 2.40e-01, 1.0e-02]    []",
             "1000      [5.05e-01, 2.31e-01, 1.0e-02]    [6.10e-01, 2.40e-01, 1.0e-02]    []"]
    samples = [e for e in engine_events(lines) if e.kind is EventKind.SAMPLE]
    assert [(e.step, round(e.data["loss"], 3), round(e.data["eval_loss"], 3)) for e in samples] == [
        (0, 1.291, 1.35), (1000, 0.746, 0.86)]


def test_a_healthy_table_alerts_nothing() -> None:
    lines = [_ONE[0], *(f"{s}      [{3.0 / (1 + s / 1000):.2e}]    [{3.2 / (1 + s / 1000):.2e}]    [1.00e+00]"
                        for s in range(0, 10000, 1000))]
    assert not [i for i in engine_verdict(lines) if i.severity in ("critical", "warning")]
