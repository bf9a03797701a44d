"""Rows of a per-rank CSV log that several processes print to one stream, two of them glued into one
line where one row's newline was lost: ``0,47,0.28836,0.80459,0.02`` + ``1,47,0.13316,0.78386,0.02``
print ``0,47,0.28836,0.80459,0.021,47,0.13316,0.78386,0.02``. One cell too few for two rows: the
first row's last cell and the second's first fused. Split where the rows read before say (a last
cell with a fixed number of decimals, a whole first cell), so the second rank's row is not lost:
a spike on one rank followed by the others a step later still names that rank. Rows in the shape of
a DDP script's ``print(f"{rank},{step},{loss:.5f},{running:.5f},{lr:.2f}", flush=True)`` and of a
``csv.writer`` over ``step,rank,loss,grad_norm`` with ``%.4f`` values."""

from __future__ import annotations

from tests.helpers import engine_verdict, fed_state

_HEADER = "rank,step,loss,running_loss,lr"


def _healthy(steps: range) -> list[str]:
    out = []
    for step in steps:
        for rank in (0, 2, 1):
            v = 2.0 / (1 + step / 10) + 0.01 * rank
            out.append(f"{rank},{step},{v:.5f},{v * 1.3:.5f},0.02")
    return out


def _samples(lines: list[str]) -> dict[int | None, list[tuple[int | None, float]]]:
    st = fed_state(lines)
    return {k[1] if k else None: [(s.step, s.data["loss"]) for s in rs.samples] for k, rs in st.ranks.items()}


def test_two_glued_rows_are_both_read() -> None:
    got = _samples([_HEADER, *_healthy(range(1, 4)), "0,4,0.28836,0.80459,0.021,4,0.13316,0.78386,0.02"])
    assert got[0][-1] == (4, 0.28836)
    assert got[1][-1] == (4, 0.13316)


def test_the_rank_that_spiked_first_is_named_though_the_others_rows_are_glued() -> None:
    lines = [_HEADER, *_healthy(range(1, 46)),
             "0,46,0.28836,0.80459,0.021,46,0.13316,0.78386,0.02",
             "2,46,297110.12500,29711.77513,0.02",
             "2,47,275113.09375,54251.90699,0.02",
             "0,47,1767.25659,177.44979,0.02",
             "1,47,1158.84106,116.58958,0.02"]
    found = [i for i in engine_verdict(lines) if i.severity in ("warning", "critical")]
    assert found and found[0].failure == "loss_spike" and found[0].rank == 2


def test_another_writer_and_column_order() -> None:
    header = "step,rank,loss,grad_norm"
    rows = [f"{s},{r},{1.5 - s * 0.01:.4f},{0.8:.4f}" for s in range(1, 6) for r in (0, 1)]
    got = _samples([header, *rows, "6,0,1.4400,0.80006,1,1.4410,0.8000"])
    assert got[0][-1] == (6, 1.44)
    assert got[1][-1] == (6, 1.441)


def test_a_fusion_the_rows_before_cannot_split_is_left_unread() -> None:
    # the last column printed without fixed decimals ("nan", "%g", a count): where one row ends is unknown
    for last in ("nan", "2e-2", "7"):
        rows = [f"{r},{s},{1.0:.5f},{1.1:.5f},{last if s == 3 else '0.02'}" for s in (1, 2, 3) for r in (0, 1)]
        got = _samples([_HEADER, *rows, f"0,4,0.90000,1.00000,{last}1,4,0.91000,1.00000,0.02"])
        assert all(step != 4 for pts in got.values() for step, _ in pts), last
