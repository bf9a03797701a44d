"""A table's or a CSV log's own clock column is no reason to leave its rows unread: fastai's
progress table ends in a ``time`` column (``00:03``, ``01:12``), a script's CSV log may lead each
row with its wall clock (``time,step,rank,loss,...`` then ``19:45:02.565,125,1,...``). The clock
cell is a column the table does not name as a metric; the rest of the row is read as before.
Lines in the shapes of fastai's docs (docs.fast.ai callback.training, the fp16 example with too
high a learning rate, and the vision tutorial's plain table) and a torchrun ``--log-dir`` rank
file of CSV prints."""

from __future__ import annotations

from detectors.diagnosis import build_report
from tests.helpers import fed_state, top_verdict


def _losses(lines: list[str]) -> list[float]:
    st = fed_state(lines)
    return [s.data["loss"] for rs in st.ranks.values() for s in rs.samples if "loss" in s.data]


_FASTAI_MD = ["| epoch | train_loss | valid_loss | time |", "|---|---|---|---|",
              "| 0 | 38.214138 | 25.269005 | 00:00 |", "| 1 | 377.145508 | 890.010376 | 00:00 |",
              "| 2 | 839.392883 | 9965.747070 | 00:00 |"]


def test_a_markdown_table_with_a_time_column_is_read() -> None:
    assert _losses(_FASTAI_MD) == [38.214138, 377.145508, 839.392883]
    assert top_verdict(_FASTAI_MD)[0] == "loss_spike"


def test_a_plain_fastai_table_with_a_time_column_is_read() -> None:
    lines = ["epoch     train_loss  valid_loss  error_rate  time", "0         0.169862    0.021452    0.006089    00:14",
             "1         0.052463    0.013672    0.004060    00:13"]
    assert _losses(lines) == [0.169862, 0.052463]


def _csv(rows: list[tuple[int, str, str]]) -> list[str]:
    return ["time,step,rank,loss,grad_norm,lr,tokens_per_s"] + [
        f"19:45:{i // 10:02d}.{i % 10}01,{step},1,{loss},{gn},8.0000,15932" for i, (step, loss, gn) in enumerate(rows)]


def test_a_csv_row_led_by_its_clock_is_read_with_its_rank() -> None:
    rows = [(s, f"{5.30 + 0.01 * (s % 3):.4f}", "0.0700") for s in range(5, 125, 5)]
    lines = _csv([*rows, (125, "4830452.5000", "951506.2500"), (130, "nan", "nan"), (135, "nan", "nan")])
    st = fed_state(lines)
    ((key, rs),) = st.ranks.items()
    assert key == ("g", 1) and [s.step for s in rs.samples][:3] == [5, 10, 15]
    assert rs.samples[-3].data["loss"] == 4830452.5
    failure, rank = top_verdict(lines)
    assert failure in ("loss_spike", "grad_norm_explosion") and rank == 1


def test_words_under_the_time_column_are_still_another_texts_row() -> None:
    assert _losses(["| epoch | train_loss | time |", "|---|---|---|", "| 0 | 0.5 | soon |"]) == []


def test_a_second_fit_calls_table_starts_its_evaluations_over() -> None:
    # a fastai blog post comparing optimisers: two fit_one_cycle calls, each printing its table;
    # the second run's first valid_loss (2.99) is no jump over the first run's best (1.43)
    first = ["epoch train_loss valid_loss accuracy time", "0 2.597476 7.834398 0.205096 00:07",
             "1 2.075519 2.908207 0.393121 00:06", "2 1.739347 1.434073 0.544713 00:06"]
    second = ["epoch train_loss valid_loss accuracy time", "0 2.968830 2.996733 0.235159 00:06",
              "1 2.414340 1.804736 0.403057 00:06", "2 2.157545 1.676913 0.430318 00:06"]
    assert _losses([*first, "", *second]) == [2.597476, 2.075519, 1.739347, 2.96883, 2.41434, 2.157545]
    assert build_report(fed_state([*first, "", *second]))["incidents"] == []
    # within one run the same rise is still a divergence (the training loss did not fall either)
    assert top_verdict([*first, "3 2.968830 2.996733 0.235159 00:06"])[0] == "loss_spike"


def test_an_earlier_runs_low_training_loss_is_no_measure_for_the_next_run() -> None:
    # an issue's two pasted runs of one script (the reporter's, then "after reproducing"): each
    # over-fits on its own (validation up, training down); the second run's training loss is above
    # the first run's last values, which says nothing about whether it still falls
    def run(rows: list[tuple[float, float]]) -> list[str]:
        return [f"Epoch={e},Loss:{t},Accuracy:0.9,Valid Loss:{v},Valid Accuracy:0.85" for e, (t, v) in enumerate(rows, 1)]
    first = run([(0.442, 0.3237), (0.2457, 0.3565), (0.1736, 0.3611), (0.1135, 0.4837), (0.0698, 0.6079), (0.0367, 0.7459)])
    second = run([(0.6791, 0.5722), (0.4672, 0.4915), (0.3497, 0.5143), (0.2786, 0.5644), (0.2197, 0.6439), (0.1640, 0.7707)])
    assert build_report(fed_state([*first, "", *second]))["incidents"] == []
