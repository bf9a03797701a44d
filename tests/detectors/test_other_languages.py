"""Training scripts written in other languages than English print their metrics and their
scaler's back-offs in their own words: Chinese (``第 32/44 步 | 损失: nan | 学习率: 1.00e-03 |
梯度范数: nan``, ``迭代: 120/600 | 损失: 2.31``, ``验证损失: 1.25``, the full-width colon
``损失：0.52``), Japanese (``ステップ 120 | 損失：0.5231 | 学習率: 3e-4``) and Russian (``шаг 10/60 |
потери 40.7424``, ``переполнение градиентов fp16, шаг оптимизатора пропущен, масштаб 65536 ->
32768``). The frameworks' own lines and tracebacks stay English.

Sources: Chinese scripts' own prints found through the code search (``f"损失: {loss:.6f}"``,
``f"迭代: {iteration+1}/{total_iterations}"``, ``f"验证损失: ..."``), and generated CPU jobs in
those languages (corpus holdout31 g31d-002, g31d-009, g31d-020, g31d-023). The scan engines read
bytes, so the scan's own trigger spells these words as alternations, never as classes of
multi-byte letters (a class of them is a class of their bytes)."""

from __future__ import annotations

import math

import pytest

from detectors.scanner import available_engines
from tests.helpers import engine_events, engine_verdict


def _samples(lines: list[str]) -> list[dict[str, float]]:
    return [{k: v for k, v in ev.data.items() if k in ("step", "loss", "eval_loss", "lr", "grad_norm", "skipped")}
            | ({"step": float(ev.step)} if ev.step is not None else {})
            for ev in engine_events(lines) if ev.kind.value == "sample"]


@pytest.mark.parametrize(("line", "want"), [
    ("[default1]:2026-12-07 22:48:39,771 [rank1] INFO train: 第 32/44 步 | 损失: nan | 学习率: 1.00e-03 | 梯度范数: nan",
     {"step": 32.0, "loss": math.nan, "lr": 1e-3, "grad_norm": math.nan}),
    ("进度: 42.0% | 迭代: 120/600 | 损失: 2.310000 | 已用时: 35.2s", {"step": 120.0, "loss": 2.31}),
    ("ステップ 120 | 損失：0.5231 | 学習率: 3e-4", {"step": 120.0, "loss": 0.5231, "lr": 3e-4}),
    ("[rank0] шаг 10/60 | потери 40.7424 | масштаб 32768 | пропущено шагов: 4/10",
     {"step": 10.0, "loss": 40.7424, "skipped": 4.0}),
    ("Epoch 3 验证损失：1.25", {"eval_loss": 1.25}),
])
def test_metrics_in_other_languages(line: str, want: dict[str, float]) -> None:
    (got,) = _samples([line])
    assert got.keys() == want.keys()
    assert all(math.isnan(got[k]) if math.isnan(v) else got[k] == v for k, v in want.items())


def test_a_component_named_in_chinese_is_not_the_loss() -> None:
    # "负载均衡损失" (a load-balancing loss), "最佳验证损失" (the best held-out loss so far)
    assert _samples(["step 5 | 负载均衡损失: 0.0123 | 最佳验证损失: 1.02"]) == []


def _ru_overflow(step: int, rank: int, a: int, b: int, loss: str) -> str:
    return (f"[rank{rank}] шаг {step}: переполнение градиентов fp16, шаг оптимизатора пропущен, масштаб {a} -> {b} "
            f"(потери {loss})")


def test_a_russian_scalers_back_offs_are_scale_moves() -> None:
    lines = []
    for step in range(21, 61, 3):
        lines += [_ru_overflow(step, r, 32768, 16384, f"4{r}.88") for r in range(3)]
        if step % 10 == 0:
            lines.append(f"[rank0] шаг {step}/60 | потери 42.1498 | масштаб 32768 | пропущено шагов: {step // 3}/{step}")
    top = engine_verdict(lines)[0]
    assert top.failure == "fp16_overflow_skips"


@pytest.mark.parametrize("engine", available_engines())
def test_every_scan_engine_finds_them(engine: str) -> None:
    from detectors.parse import LogParser
    from detectors.parsers.base import FileState

    buf = "[rank0] шаг 10/60 | потери 40.7424 | масштаб 32768\n损失：0.52 | 迭代: 3/9\n".encode()
    got = [e.data.get("loss") for e in LogParser(engine=engine).parse_chunk(buf, 1, FileState("x")) if e.kind.value == "sample"]
    assert got == [40.7424, 0.52]


def test_a_world_size_said_in_chinese_makes_rank_zero_logging_name_no_rank() -> None:
    # accelerate's main process alone logs ("[RANK 0]"); its start-up line gives the world in
    # Chinese ("进程数 = 2"): the grad norm it logs is the all-reduced one, no rank's own
    lines = ["2026-12-07 22:55:25,759 - INFO - train - [RANK 0] ***** 开始训练 *****  进程数 = 2, 每个 epoch 步数 = 16"]
    for i, (loss, gn) in enumerate([(3.23, 3.2), (3.01, 3.7), (2.24, 3.7), (0.84, 2.6), (0.48, 2.3), (146.3, 53.9),
                                    (79.5, 32.9), (23.7, 13.6)]):
        lines.append(f"2026-12-07 22:55:26,{i:03d} - INFO - train - [RANK 0] 第 {8 * (i + 1)} 步 | 损失: {loss} | "
                     f"梯度范数: {gn} | 学习率: 1.2e+00")
    found = [i for i in engine_verdict(lines) if i.severity in ("warning", "critical")]
    assert found
    assert all(i.rank is None for i in found)


def test_the_loss_scales_own_name_is_no_part_of_the_loss() -> None:
    from detectors.parsers import fields

    line = "rank 3: fp16 forward output contains inf/nan at global_step 92 (loss_scaling=32768.0), found_inf set"
    assert fields._records(line, fields._FIELD) == fields.extract_records(line) == [{"step": 92.0}]
