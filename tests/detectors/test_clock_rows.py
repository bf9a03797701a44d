"""A run's own comma-separated log rows led by their clock: ``LOGGER.info('epoch, %04d, %f, %f, %f, %f',
epoch + 1, running_loss, val_loss, running_info, val_info)`` (hmgoforth/PointNetLK's train_pointlk.py,
PointNetLK_Revisited and their forks), written behind the logger's own fields by the format
``'%(levelname)s:%(name)s, %(asctime)s, %(message)s'``, or printed bare. The columns are named nowhere:
the first number is the running loss, read as an unkeyed value (only a NaN or a 50x jump counts).
Lines built from those format strings; none from the corpus case that showed the gap."""

from __future__ import annotations

import pytest

from tests.helpers import engine_verdict, fed_state


def _rows(losses: list[float], prefix: str = "INFO:ptlk, 2021-05-02 10:{:02d}:13,402, ", first: int = 1) -> list[str]:
    return [prefix.format(i % 60) + f"epoch, {first + i:04d}, {v:f}, {v * 1.1:f}, {0.002:f}, {0.001:f}"
            for i, v in enumerate(losses)]


_HEALTHY = [0.412, 0.301, 0.254, 0.221, 0.198, 0.183, 0.176, 0.171, 0.166, 0.163, 0.160, 0.158]


def test_the_row_is_read_as_the_epoch_and_its_loss() -> None:
    st = fed_state(_rows(_HEALTHY[:3]))
    samples = [s for rs in st.ranks.values() for s in rs.samples]
    assert [s.data.get("epoch") for s in samples] == [1.0, 2.0, 3.0]
    assert [s.data["loss"] for s in samples] == [0.412, 0.301, 0.254]
    assert all(s.data.get("unkeyed") for s in samples)


@pytest.mark.parametrize("prefix", [
    "INFO:ptlk, 2021-05-02 10:{:02d}:13,402, ",  # the logger format of PointNetLK's scripts
    "INFO:PointNetLK-Revisited, 2022-03-10 18:{:02d}:12,212, ",  # PointNetLK_Revisited's logger name
    "",  # the same message printed without a logger
])
def test_a_loss_a_hundred_times_its_level_is_a_spike(prefix: str) -> None:
    lines = _rows([0.016, 0.046, 0.062, 0.046, 0.088, 0.052, 0.052, 0.042, 0.075, 0.076, 0.040, 0.131, 17.80],
                  prefix, first=40)
    found = [i for i in engine_verdict(lines) if i.severity in ("warning", "critical")]
    assert found and found[0].failure == "loss_spike"


@pytest.mark.parametrize("prefix", ["INFO:ptlk, 2021-05-02 10:{:02d}:13,402, ", ""])
def test_a_healthy_run_and_its_noise_raise_nothing(prefix: str) -> None:
    noisy = [0.016, 0.046, 0.062, 0.046, 0.088, 0.052, 0.052, 0.042, 0.253, 0.076, 0.040, 0.131, 0.09]
    for losses in (_HEALTHY, noisy):
        assert not [i for i in engine_verdict(_rows(losses, prefix)) if i.severity in ("warning", "critical")]


def test_a_nan_loss_in_the_row_is_a_nan_loss() -> None:
    lines = [*_rows(_HEALTHY[:6]), "INFO:ptlk, 2021-05-02 11:02:13,402, epoch, 0007, nan, nan, 0.002000, 0.001000"]
    found = engine_verdict(lines)
    assert found and found[0].failure == "nonfinite_loss"


def test_a_whole_number_first_is_no_loss() -> None:
    # "epoch, 3, 1200, 0.41": the cell after the counter is another counter (samples seen)
    st = fed_state(["epoch, 3, 1200, 0.41", "epoch, 4, 1600, 0.39"])
    assert not [s for rs in st.ranks.values() for s in rs.samples]
