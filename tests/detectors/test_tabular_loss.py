"""The key/value table an RL logger prints at the end of each epoch: rllab's, rlkit's and garage's
``dump_tabular`` (tabulate's plain format: the key, a wide gap, the value; rllab puts its timestamp
before each row). Each row is a statistic of its own (two critics' losses, the policy's, Q
predictions, returns), so rows make no series of one loss: a row is read only when its value says
something alone, a loss past any objective a run trains (``ABSURD_LOSS``: a critic whose bootstrapped
values blew up). Tables built on rlkit's SAC keys; none from the corpus case that showed the gap."""

from __future__ import annotations

import pytest

from detectors.detect import ABSURD_LOSS
from detectors.parsers.metrics import TABULAR_ABSURD
from tests.helpers import engine_verdict, fed_state


def _table(epoch: int, qf: float, policy: float, q: float, prefix: str = "") -> list[str]:
    rows = [("Epoch", f"{epoch}"), ("replay_buffer/size", f"{1000 * (epoch + 1)}"), ("trainer/QF1 Loss", f"{qf:g}"),
            ("trainer/QF2 Loss", f"{qf * 0.99:g}"), ("trainer/Policy Loss", f"{policy:g}"),
            ("trainer/Q1 Predictions Mean", f"{q:g}"), ("trainer/Alpha Loss", "-0.412"),
            ("evaluation/Average Returns", f"{50.0 * epoch:g}")]
    return [prefix + "-" * 40 + "  " + "-" * 12] + [prefix + f"{k:<40}  {v:>12}" for k, v in rows]


_PREFIXES = ["", "2019-05-02 10:11:12.123456 PDT | "]  # rlkit's plain rows; rllab's timestamped ones


def test_the_threshold_is_the_spike_rules_own() -> None:
    assert TABULAR_ABSURD == ABSURD_LOSS


@pytest.mark.parametrize("prefix", _PREFIXES)
def test_healthy_tables_read_nothing_and_raise_nothing(prefix: str) -> None:
    lines = [ln for e in range(6) for ln in _table(e, 12.0 / (e + 1), -20.0 - 30 * e, 15.0 + 40 * e, prefix)]
    st = fed_state(lines)
    assert not [s for rs in st.ranks.values() for s in rs.samples if "loss" in s.data]
    assert not [i for i in engine_verdict(lines) if i.severity in ("warning", "critical")]


@pytest.mark.parametrize("prefix", _PREFIXES)
def test_a_critic_loss_past_any_objective_is_a_divergence(prefix: str) -> None:
    lines = [ln for e in range(3) for ln in _table(e, 12.0 / (e + 1), -20.0, 15.0, prefix)]
    lines += _table(3, 1.35779e19, -2.48799e10, 2.33888e10, prefix)
    found = [i for i in engine_verdict(lines) if i.severity in ("warning", "critical")]
    assert found and found[0].failure == "loss_spike"


def test_a_large_but_possible_loss_alone_is_not_read() -> None:
    # a critic loss of 3e6 (unnormalised rewards) is no divergence by itself, and one row is no series
    assert not [i for i in engine_verdict(_table(5, 3.1e6, -2.0e3, 1.8e3)) if i.severity in ("warning", "critical")]
