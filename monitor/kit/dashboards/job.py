"""``rankwatch / job``: one training job, its open incidents, per-rank training series, and
a row per catalog category with one panel per failure (linked to its runbook)."""

from __future__ import annotations

from itertools import groupby

from grafana_foundation_sdk.builders import dashboard as db

from detectors.catalog import Catalog
from monitor.kit.dashboards.panels import (
    board,
    datasource_var,
    incident_table,
    query_var,
    runbook_var,
    stat_panel,
    target,
    timeseries_panel,
)
from monitor.kit.options import Options

__all__ = ["JOB_VAR_QUERY", "job_dashboard"]

JOB_VAR_QUERY = "query_result(count by (job) (rankwatch_skipped_steps_total or rankwatch_findings_total or rankwatch_incident_info))"
SEL = 'job=~"$job"'
RSEL = 'job=~"$job", rank=~"$rank"'
RANK = "rank {{rank}}"


def _failure_rows(cat: Catalog) -> list[db.Row]:
    """A collapsed row per category; a panel per failure: its incidents open in this job."""
    rows = []
    entries = sorted(cat, key=lambda e: (e.category, e.id))
    for category, group in groupby(entries, key=lambda e: e.category):
        row = db.Row(f"Failures: {category}").collapsed(True)
        for e in group:
            row = row.with_panel(stat_panel(
                e.id, f"{e.title}. Incidents of this failure open now in the job (severity {e.severity}).",
                f'count(rankwatch_incident_info{{{SEL}, failure="{e.id}"}} == 1) or vector(0)', 6, 4,
                red_from=None if e.severity == "info" else 1, link=("Runbook", f"${{runbook_url}}/{e.id}.md")))
        rows.append(row)
    return rows


def job_dashboard(cat: Catalog, opts: Options) -> db.Dashboard:
    b = board("rankwatch-job", "rankwatch / job",
              "One training job: open incidents with their initiating rank, per-rank loss, gradient norm, "
              "loss scale and step progress, overflow and skip rates, non-finite counts, a panel per failure.")
    b = (b.with_variable(datasource_var())
         .with_variable(query_var("job", "job", JOB_VAR_QUERY, regex='/job="([^"]+)"/'))
         .with_variable(query_var("rank", "rank", 'label_values(rankwatch_step{job=~"$job"}, rank)', multi=True,
                                  include_all=True))
         .with_variable(runbook_var(opts.runbook_url)))
    b = (b.with_row(db.Row("Incidents"))
         .with_panel(stat_panel("Critical incidents open", "Open incidents of severity critical (these page).",
                                f'count(rankwatch_incident_info{{{SEL}, severity="critical"}} == 1) or vector(0)', 4, 5))
         .with_panel(stat_panel("Warnings open", "Open incidents of severity warning (these open tickets).",
                                f'count(rankwatch_incident_info{{{SEL}, severity="warning"}} == 1) or vector(0)', 4, 5))
         .with_panel(stat_panel("Ranks", "Ranks rankwatch has seen training steps from.",
                                f"count(rankwatch_step{{{SEL}}}) or vector(0)", 4, 5, red_from=None))
         .with_panel(stat_panel("Slowest rank: seconds since its last step",
                                "Wall time since the rank that advanced least recently made a step (a hang shows here first).",
                                f"max(time() - rankwatch_last_progress_timestamp_seconds{{{SEL}}})", 6, 5, red_from=300,
                                unit="s", no_value="No steps logged"))
         .with_panel(stat_panel("Latest step", "Highest training step logged by any rank.", f"max(rankwatch_step{{{SEL}}})",
                                6, 5, red_from=None, no_value="No steps logged"))
         .with_panel(incident_table("Open incidents and their initiating rank",
                                    "max by (job, incident, failure, initiator_rank, hardware, severity) "
                                    f"(rankwatch_incident_info{{{SEL}}} == 1)",
                                    ["severity", "failure", "initiator_rank", "hardware", "job", "incident"], 24, 7))
         .with_panel(timeseries_panel("Findings by failure (matching lines/s)",
                                      "Log lines that matched a failure fingerprint, per second: occurrences (collateral "
                                      "included), not incidents.",
                                      [target(f"sum by (failure) (job:rankwatch_findings:rate5m{{{SEL}}})", "{{failure}}")],
                                      12, 8, stack=True))
         .with_panel(timeseries_panel("Incidents opened by failure",
                                      "Incidents opened so far in this job (rankwatch_incidents_total), by failure.",
                                      [target(f"sum by (failure) (rankwatch_incidents_total{{{SEL}}})", "{{failure}}")], 12, 8)))
    b = (b.with_row(db.Row("Training, per rank"))
         .with_panel(timeseries_panel("Loss", "Latest training loss per rank (NaN is drawn as a gap).",
                                      [target(f"rankwatch_loss{{{RSEL}}}", RANK)], 12, 8))
         .with_panel(timeseries_panel("Gradient norm", "Latest global gradient norm per rank (log scale).",
                                      [target(f"rankwatch_grad_norm{{{RSEL}}}", RANK)], 12, 8, log=True))
         .with_panel(timeseries_panel("Loss scale", "fp16 dynamic loss scale per rank (log2). Warm-up backoff from a high "
                                      "initial scale is normal; a scale driven to its floor is a loss_scale_collapse.",
                                      [target(f"rankwatch_loss_scale{{{RSEL}}}", RANK)], 12, 8, log=True,
                                      no_value="No loss scale logged (bf16/fp32 job, or the scaler is not logged)"))
         .with_panel(timeseries_panel("Step", "Latest training step per rank. Ranks move in lock step; one falling behind "
                                      "is a straggler or a hang.", [target(f"rankwatch_step{{{RSEL}}}", RANK)], 12, 8))
         .with_panel(timeseries_panel("Steps per second", "Step progress per rank (deriv over 5m).",
                                      [target(f"job_rank:rankwatch_step:deriv5m{{{RSEL}}}", RANK)], 12, 8))
         .with_panel(timeseries_panel("Seconds since last step", "Wall time since each rank's step last advanced.",
                                      [target(f"time() - rankwatch_last_progress_timestamp_seconds{{{RSEL}}}", RANK)],
                                      12, 8, unit="s")))
    b = (b.with_row(db.Row("Overflow, skipped steps and non-finite values"))
         .with_panel(timeseries_panel("Skipped steps per second", "Optimizer steps skipped because fp16 gradients overflowed.",
                                      [target(f"job_rank:rankwatch_skipped_steps:rate5m{{{RSEL}}}", RANK)], 8, 8))
         .with_panel(timeseries_panel("Fraction of steps skipped", "Skipped steps / steps over 5m (the alert fires above "
                                      f"{opts.skip_ratio:.0%} for 10m when the scale is below {opts.warmup_scale}).",
                                      [target(f"job:rankwatch_skipped_steps:ratio_increase5m{{{SEL}}}", "{{job}}")], 8, 8,
                                      unit="percentunit", no_value="No steps advancing"))
         .with_panel(timeseries_panel("Overflow rate (non-finite values per second)",
                                      "Non-finite (NaN/Inf) values logged per second, per rank and metric: inf grad norms "
                                      "are fp16 overflows, NaN losses are divergence.",
                                      [target(f"sum by (rank, metric) (job_rank:rankwatch_nonfinite:rate5m{{{RSEL}}})",
                                              "rank {{rank}} {{metric}}")], 8, 8, no_value="No non-finite values"))
         .with_panel(timeseries_panel("Non-finite values (total)", "Non-finite values logged so far, per rank and metric.",
                                      [target(f"sum by (rank, metric) (rankwatch_nonfinite_total{{{RSEL}}})",
                                              "rank {{rank}} {{metric}}")], 12, 8, no_value="No non-finite values"))
         .with_panel(timeseries_panel("Skipped steps (total)", "Optimizer steps skipped so far, per rank.",
                                      [target(f"rankwatch_skipped_steps_total{{{RSEL}}}", RANK)], 12, 8))
         .with_panel(timeseries_panel("Rank restarts", "A rank's log was truncated in place (a relaunch), per rank.",
                                      [target(f"rankwatch_rank_restarts_total{{{RSEL}}}", RANK)], 24, 6,
                                      no_value="No rank restarts")))
    for row in _failure_rows(cat):
        b = b.with_row(row)
    return b
