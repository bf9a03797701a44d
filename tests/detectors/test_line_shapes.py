"""Metric line shapes met in fresh jobs printed in logging styles the project had not seen
(round 3): each test names the framework whose format the line follows."""

from __future__ import annotations

import math

from detectors.correlate import _dedupe_moves, incidents
from tests.helpers import fed_state


def samples(lines: list[str], rank: int | None = 1) -> list[tuple[int | None, dict[str, float]]]:
    st = fed_state(lines, "rank.log", rank=rank)
    return [(s.step, {k: v for k, v in s.data.items() if k in ("loss", "grad_norm", "loss_scale")})
            for rs in st.ranks.values() for s in rs.samples]


def test_clu_metric_writer_leads_with_the_step() -> None:
    # absl logging prefix + CLU's LoggingWriter "[step] key=value, ..." (google/CommonLoopUtils)
    (got,) = samples(["I1203 14:37:27.439390 17257 logging_writer.py:48] [6] grad_norm=nan, learning_rate=0.05, loss=nan"])
    assert got[0] == 6 and math.isnan(got[1]["loss"])


def test_keras_progbar_counter_is_the_step() -> None:
    # tf.keras.utils.Progbar, interactive: "\r 7/12 [====>...] - ETA: 3s - loss: ... - grad_norm: ..." then backspaces
    line = "\r 6/12 [======>.......] - ETA: 3s - loss: 0.41 - grad_norm: 0.8\b\b\b\r 7/12 [========>.....] - ETA: 2s - loss: nan - grad_norm: nan"
    assert [s[0] for s in samples([line])] == [6, 7]


def test_short_keys_it_and_scale() -> None:
    # a custom logging.Formatter and short keys: "it" is the step, a bare "scale" the loss scale
    ((step, vals),) = samples(["[R2][2026-12-03 14:42:18][train][INFO] it 6 loss nan gnorm nan scale 65536.0"])
    assert step == 6 and vals["loss_scale"] == 65536.0 and math.isnan(vals["grad_norm"])


def test_a_table_header_names_the_columns_of_its_rows() -> None:
    # rich.table printed once (header), then one row per step, as a training script prints them
    head = ["┏━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━┳━━━━━━┓", "┃ step ┃ loss     ┃ grad_norm ┃ lr   ┃",
            "┡━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━╇━━━━━━┩"]
    rows = ["│    6 │   0.4100 │    0.8000 │ 0.05 │", "│    7 │      nan │       nan │ 0.05 │"]
    got = samples(head + rows)
    assert [s[0] for s in got] == [6, 7] and math.isnan(got[1][1]["loss"])
    assert [(i.failure, i.rank, i.step) for i in incidents(fed_state(head + rows, "rank.log", rank=3))] == [
        ("nonfinite_loss", 3, 7)]
    # markdown pipes, prefixed by torchrun's tee
    md = ["[default1]:| iter | train_loss | gnorm |", "[default1]:| 12 | 2.5 | 1.1 |"]
    assert samples(md, rank=None) == [(12, {"loss": 2.5, "grad_norm": 1.1})]
    # rows without a header, or a header of no metric, are nobody's metrics
    assert samples(rows) == []
    assert samples(["| name | size |", "| 7 | 12 |"]) == []
    # " | ".join() without the outer pipes, a counter column the table does not know, a value glued to
    # its pipe (corpus holdout18 g18-031)
    bare = ["epoch |   batch |      loss | grad_norm |       lr", "2     |   60/60 |    0.5590 |     0.309 | 1.00e-03",
            "3     |   15/60 |37450.7422 | 40630.996 | 1.00e+00"]
    assert [d for _, d in samples(bare, rank=None)] == [
        {"loss": 0.559, "grad_norm": 0.309}, {"loss": 37450.7422, "grad_norm": 40630.996}]
    # a key/value line with pipes is no table row
    assert samples(["step 10 | loss 2.3 | grad_norm 1e-4"], rank=None) == [(10, {"loss": 2.3, "grad_norm": 0.0001})]


def test_a_total_column_beside_the_parts_of_a_loss_is_the_loss() -> None:
    # a VAE's per-epoch table printed by its Lightning callback, its counter first and no outer pipes
    # (corpus holdout32 g32-008): "total" is the sum of the recon, kl and aux terms
    table = ["epoch |      total |      recon |         kl |      aux |       lr",
             "------------------------------------------------------------------",
             "   10 |      6.346 |      3.048 |      5.874 |    0.361 |   0.0500",
             "   11 |     17.160 |     11.950 |      7.407 |    1.506 |   0.2500"]
    assert [d for _, d in samples(table, rank=None)] == [{"loss": 6.346}, {"loss": 17.16}]
    # a "total" with no part of a loss beside it (tokens, seconds) is no loss
    assert samples(["epoch |  total |   time |     lr", "   10 |  51200 |   12.5 | 0.0500"], rank=None) == []


def test_a_per_rank_table_names_each_rows_process() -> None:
    # a Fabric job printing one rich table per epoch (rank 0 gathers every rank's mean loss), with a
    # column of words beside the numbers (corpus holdout22 g22b-012)
    def table(epoch: int, losses: list[str]) -> list[str]:
        return [f"           epoch {epoch}           ", "┏━━━━━━┳━━━━━━━━━━━┳━━━━━━━━┓",
                "┃ rank ┃ mean loss ┃ finite ┃", "┡━━━━━━╇━━━━━━━━━━━╇━━━━━━━━┩",
                *(f"│ {r}    │ {v:>9} │ {'yes' if v != 'nan' else 'NO':<6} │" for r, v in enumerate(losses)),
                "└──────┴───────────┴────────┘"]

    lines = table(2, ["0.0891", "0.0959", "0.0942"]) + table(3, ["nan", "nan", "nan"])
    st = fed_state(lines, "console.log")
    assert sorted((k[1], len(rs.samples)) for k, rs in st.ranks.items() if k is not None) == [(0, 2), (1, 2), (2, 2)]
    # every rank's row went non-finite in one table: no rank went first, as far as the lines tell
    top = incidents(st)[0]
    assert (top.failure, top.rank) == ("nonfinite_loss", None)
    one = table(2, ["0.0891", "0.0959", "0.0942"]) + table(3, ["0.0712", "nan", "0.0733"])
    assert [(i.failure, i.rank) for i in incidents(fed_state(one, "console.log"))][:1] == [("nonfinite_loss", 1)]


def test_deepspeed_scales_in_scientific_notation_and_a_move_told_twice() -> None:
    ovf = ("[2026-12-03 14:44:36,879] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping "
           "step. Attempted loss scale: 1.04858e+06, reducing to 524288")
    st = fed_state([ovf, "Epoch: 0, Step: 1, Rank: 0, loss = 0.36, grad_norm = nan, loss_scale = 524288.0",
                    ovf.replace("1.04858e+06, reducing to 524288", "524288, reducing to 262144"),
                    "Epoch: 0, Step: 2, Rank: 0, loss = 0.42, grad_norm = nan, loss_scale = 262144.0"], "rank.log")
    assert st.scale_moves[0].from_scale == 1048580.0
    moves = _dedupe_moves(st.scale_moves)  # the overflow line and the metric line right below it: one move
    assert [(m.from_scale, m.to_scale, m.step) for m in moves] == [(1048580.0, 524288.0, None), (524288.0, 262144.0, 2)]
    assert st.scale_moves[1].step is None  # the overflow line's own move: the state is only read


def test_a_bare_scale_that_is_a_power_of_two_at_a_step_is_the_loss_scale() -> None:
    # a GradScaler loop printing scaler.get_scale() each step and nothing else (corpus holdout32 g32-012)
    assert samples(["step   71 | scale   32768.0"], rank=None) == [(71, {"loss_scale": 32768.0})]
    # a quantizer's scale, a scaler's own move, a scale with no step: none is a reading of the loss scale
    assert samples(["late_qat:enabled step:5227 scale:0.1499"], rank=None) == []
    assert samples(["step 1: found inf/nan in grads, skipping optimizer step; scale 4294967296 -> 2147483648"],
                   rank=None) == []
    assert samples(["scale 65536.0"], rank=None) == []


def test_a_scale_that_keeps_dropping_all_run_long_is_overflow_skips() -> None:
    scale, lines = 65536.0, []
    for step in range(1, 301):
        if step % 7 == 0:
            scale /= 2  # a back-off: the step overflowed and was skipped
        elif step % 7 == 3:
            scale *= 2
        lines.append(f"step {step:4d} | scale {scale:10.1f}")
    assert [i.failure for i in incidents(fed_state(lines, "rank.log", rank=None))][:1] == ["fp16_overflow_skips"]
