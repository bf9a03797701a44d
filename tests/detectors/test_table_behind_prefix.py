"""A whitespace-aligned table printed by a process under a launcher that tags each of its lines:
torchrun's ``--tee 3`` prefix (``[default0]:``, log-formats.md §1), the excepthook's ``[rank0]:``
and ``mpirun --tag-output``'s ``[1,0]<stdout>:``. The table rules are searched in the raw line
(their rows are numbers only), so the launcher's own prefix is allowed before the header and the
rows; the rest is read as without it (skorch's and fastai's tables, a script's per-rank table with
a ``skipped`` flag, corpus holdout30 g30c-005)."""

from __future__ import annotations

from tests.helpers import engine_events, engine_verdict


def _samples(lines: list[str]) -> list[tuple[int | None, int | None, float]]:
    return [(ev.rank, ev.step, ev.data["loss"]) for ev in engine_events(lines) if ev.kind.value == "sample"]


def test_a_plain_table_behind_torchruns_prefix_is_read() -> None:
    lines = ["[default0]: step rank      loss      scale  skipped total_skip",
             "[default0]:    5    0    2.3069    65536.0       no          0",
             "[default1]:    5    1    2.3012    65536.0       no          0"]
    assert _samples(lines) == [(0, 5, 2.3069), (1, 5, 2.3012)]


def test_behind_mpiruns_tag_and_the_excepthooks_prefix_too() -> None:
    lines = ["[1,0]<stdout>:epoch     train_loss  valid_loss  error_rate  time",
             "[1,0]<stdout>:0         0.169862    0.021452    0.006089    00:14"]
    assert [loss for _, _, loss in _samples(lines)] == [0.169862]
    lines = ["[rank0]:  epoch    train_loss    valid_loss     dur", "[rank0]:      1        0.6931        0.6920  0.0312"]
    assert [loss for _, _, loss in _samples(lines)] == [0.6931]


def test_a_scale_bouncing_in_such_a_table_is_read_as_skips() -> None:
    rows = []
    scale, total = 524288.0, 0
    for step in range(5, 205, 5):
        skipped = step % 15 == 0 and step > 20
        total += skipped
        rows.append((step, 2 * scale if skipped else scale, "yes" if skipped else "no", total))
    lines = ["[default0]: step rank      loss      scale  skipped total_skip"]
    lines += [f"[default0]: {s:4d}    0    2.3069 {sc:10.1f}      {f:>3s}    {t:7d}" for s, sc, f, t in rows]
    assert any(i.failure == "fp16_overflow_skips" for i in engine_verdict(lines))
