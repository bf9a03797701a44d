"""A traceback a log message printed is an exception the program caught: its header comes after
the message on the same line (NeMo's ``safe_import_from``: ``Import of quick_gelu from
megatron.core.fusions.fused_bias_geglu failed with: Traceback (most recent call last):``, printed by
every rank of MLPerf's NeMo-based Llama 3.1 submissions, corpus holdout30 h30c-016), where
Python's own report of an uncaught exception starts its line with it. When the job kept logging
metric lines after it (any process's: often only rank 0 logs them), it went on: a note, not the
job's failure. A logged traceback with nothing after it, or one the launcher's exit follows, is
judged as before."""

from __future__ import annotations

from tests.helpers import engine_verdict


def _logged(rank: int) -> list[str]:
    return [f"{rank:2d}: Import of quick_gelu from megatron.core.fusions.fused_bias_geglu failed with: Traceback (most recent call last):",
            f'{rank:2d}:   File "/workspace/NeMo/nemo/utils/import_utils.py", line 319, in safe_import_from',
            f"{rank:2d}:     return getattr(imported_module, symbol), True",
            f"{rank:2d}: AttributeError: module 'megatron.core.fusions.fused_bias_geglu' has no attribute 'quick_gelu'",
            f"{rank:2d}: "]


_STATS = [f' 0: :::MLLOG {{"namespace": "", "time_ms": {1760102770783 + 11000 * i}, "event_type": "POINT_IN_TIME", '
          f'"key": "tracked_stats", "value": {{"train_step_time": 0.34, "reduced_train_loss": {8.04 - 0.2 * i:.4f}}}, '
          f'"metadata": {{"step": {16 * (i + 1)}}}}}' for i in range(8)]


def test_a_logged_traceback_the_job_went_on_from_is_a_note() -> None:
    incs = engine_verdict([*_logged(40), *_logged(46), *_logged(1), *_STATS])
    assert all(i.severity == "info" for i in incs)


def test_a_logged_traceback_with_nothing_after_it_is_still_the_failure() -> None:
    incs = engine_verdict([*_STATS, *_logged(40), *_logged(46)])
    assert incs and incs[0].failure == "rank_exception" and incs[0].severity == "critical"


def test_a_header_at_the_start_of_its_line_is_an_uncaught_exception() -> None:
    lines = [line.replace("Import of quick_gelu from megatron.core.fusions.fused_bias_geglu failed with: ", "")
             for r in (40, 46) for line in _logged(r)]
    incs = engine_verdict([*lines, *_STATS])
    assert incs and incs[0].failure == "rank_exception" and incs[0].severity == "critical"
