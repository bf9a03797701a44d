"""Every metric the sidecar exports: name, type, labels and help, in one table.

The exporter (:mod:`monitor.metrics`) builds its families from this table and the
monitoring kit (:mod:`monitor.kit`) documents and checks against it, so a metric cannot
exist in one and not the other. Adding a metric is one line here plus the code that fills
it in ``RankwatchCollector.collect``. Names follow the Prometheus naming guide; a counter's
name is given without ``_total`` (the exposition adds it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["METRICS", "MetricDef", "metric"]


@dataclass(frozen=True)
class MetricDef:
    name: str
    type: Literal["counter", "gauge"]
    labels: tuple[str, ...]
    help: str

    @property
    def sample_name(self) -> str:
        """The name of its samples as scraped (``_total`` for counters)."""
        return self.name + "_total" if self.type == "counter" else self.name


_J, _JR = ("job",), ("job", "rank")

METRICS: tuple[MetricDef, ...] = (
    # what the training job does (one series per job and rank; labels never come from log text)
    MetricDef("rankwatch_findings", "counter", (*_JR, "failure"), "Lines that matched a failure fingerprint (occurrences, not incidents)."),
    MetricDef("rankwatch_incidents", "counter", (*_J, "failure"), "Incidents opened."),
    MetricDef("rankwatch_incident_info", "gauge", (*_J, "incident", "failure", "initiator_rank", "hardware", "severity"), "Open incidents (value 1) with their initiating rank."),
    MetricDef("rankwatch_loss", "gauge", _JR, "Latest training loss per rank."),
    MetricDef("rankwatch_grad_norm", "gauge", _JR, "Latest gradient norm per rank."),
    MetricDef("rankwatch_loss_scale", "gauge", _JR, "Latest fp16 loss scale per rank."),
    MetricDef("rankwatch_step", "gauge", _JR, "Latest training step per rank."),
    MetricDef("rankwatch_skipped_steps", "counter", _JR, "Optimizer steps skipped (fp16 overflow) per rank."),
    MetricDef("rankwatch_nonfinite", "counter", (*_JR, "metric"), "Non-finite values logged, per rank and metric."),
    MetricDef("rankwatch_last_progress_timestamp_seconds", "gauge", _JR, "Wall time the rank's step last advanced."),
    MetricDef("rankwatch_job_finished", "gauge", _J, "1 once a launcher reported the end of the job (exit or teardown)."),
    MetricDef("rankwatch_build_info", "gauge", (*_J, "version"), "The rankwatch version and the job it watches (value 1)."),
    # the sidecar itself
    MetricDef("rankwatch_lines", "counter", (), "Lines read."),
    MetricDef("rankwatch_bytes_read", "counter", (), "Bytes read."),
    MetricDef("rankwatch_files_tailed", "gauge", (), "Files being followed."),
    MetricDef("rankwatch_tail_lag_bytes", "gauge", (), "Bytes written but not read yet."),
    MetricDef("rankwatch_rotations", "counter", (), "File rotations seen (rename+create, recreate)."),
    MetricDef("rankwatch_truncations", "counter", (), "Truncations seen (copytruncate, relaunch)."),
    MetricDef("rankwatch_rank_restarts", "counter", _JR, "A rank's log was truncated in place (relaunch)."),
    MetricDef("rankwatch_stack_samples", "counter", ("result",), "Stack samples of rank processes (py-spy), by result."),
    MetricDef("rankwatch_dropped", "counter", ("reason",), "Data dropped, by reason (never silently)."),
)

_BY_NAME = {m.name: m for m in METRICS}


def metric(name: str) -> MetricDef:
    """The table's row for a family name (without ``_total``); KeyError when not exported."""
    return _BY_NAME[name]
