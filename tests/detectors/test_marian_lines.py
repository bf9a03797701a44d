"""Marian NMT's training line (src/training/scheduler.h): "Ep. E : Up. U : Sen. S : Cost C : Time T :
W words/s", later with ": gNorm G : L.r. R". "Up." is the update counter (the step), "Cost" the loss;
the "[valid]" lines of the same log are held-out metrics, read as such."""

from __future__ import annotations

from detectors.model import EventKind


def _samples(lines: list[str]) -> list[tuple[int | None, dict]]:
    from detectors.parse import default_parser
    from detectors.parsers.base import FileState, JobParseState

    fs = FileState("train.log", year=2026, job=JobParseState())
    parser = default_parser()
    out = []
    for i, line in enumerate(lines, 1):
        for ev in parser.parse_line(line, i, fs):
            if ev.kind is EventKind.SAMPLE:
                out.append((ev.step, {k: v for k, v in ev.data.items() if k != "scope"}))
    return out


def test_a_finite_cost_without_a_norm_is_a_loss_at_its_update() -> None:
    # corpus holdout9 h9a-024 (marian-nmt, streamed data): no gNorm column, so "Cost 5.20" stood alone
    lines = ["[2021-07-17 12:54:33] Ep. 1 : Up. 14000 : Sen. 965,843 : Cost 5.20174599 : Time 359.59s : 3007.81 words/s"]
    assert _samples(lines) == [(14000, {"loss": 5.20174599, "epoch": 1.0})]
    # its "[valid]" line (no "Sen.") stays a held-out metric
    valid = "[2021-07-17 13:50:36] [valid] Ep. 1 : Up. 20000 : cross-entropy : 130.97 : new best"
    assert [d for _, d in _samples([*lines, valid])][1:] == [{"eval_loss": 130.97}]


def test_every_version_of_the_line_gives_its_update_as_the_step() -> None:
    lines = [
        # https://github.com/marian-nmt/marian-dev/pull/212 (2018: the cost per word "* labels after total")
        "[2018-03-19 20:09:23] Ep. 38 : Up. 193500 : Sen. 3129009 : Cost 2.97881484 * 13341033 after 5203488403 : "
        "Time 635.12s : 21004.10 words/s",
        # corpus dev d4-026 (gNorm and L.r. columns)
        "  [2022-05-09 06:50:57] Ep. 8 : Up. 537000 : Sen. 98,569,133 : Cost 2.46588373 : Time 111.03s : "
        "191311.12 words/s : gNorm 4.6161 : L.r. 5.1784e-05",
        # corpus holdout6 h6a-012 (2017)
        "[2017-10-14 02:03:33] Ep. 2 : Up. 116800 : Sen. 6972416 : Cost nan : Time 2.74s : 19413.05 words/s",
    ]
    got = _samples(lines)
    assert [step for step, _ in got] == [193500, 537000, 116800]
    assert got[0][1]["loss"] == 2.97881484 and got[1][1]["grad_norm"] == 4.6161
    assert got[2][1]["loss"] != got[2][1]["loss"]  # nan

