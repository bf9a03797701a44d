"""``rankwatch / fleet``: every job rankwatch watches, open incidents, progress."""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard as db

from monitor.kit.dashboards.panels import (
    board,
    datasource_var,
    incident_table,
    runbook_var,
    stat_panel,
    target,
)
from monitor.kit.dashboards.panels import timeseries_panel as ts
from monitor.kit.options import Options, duration

__all__ = ["fleet_dashboard"]


def fleet_dashboard(opts: Options) -> db.Dashboard:
    up = f'up{{job="{opts.scrape_job}"}}'
    b = (board("rankwatch-fleet", "rankwatch / fleet",
               "Every training job rankwatch watches: open incidents, hardware vs software, progress.")
         .with_variable(datasource_var()).with_variable(runbook_var(opts.runbook_url)))
    b = (b.with_row(db.Row("Fleet"))
         .with_panel(stat_panel("Jobs watched", "Training jobs with per-rank series.",
                                "count(count by (job) (rankwatch_skipped_steps_total)) or vector(0)", 4, 5, red_from=None))
         .with_panel(stat_panel("Critical incidents open", "Across all jobs.",
                                'count(rankwatch_incident_info{severity="critical"} == 1) or vector(0)', 5, 5))
         .with_panel(stat_panel("Warnings open", "Across all jobs.",
                                'count(rankwatch_incident_info{severity="warning"} == 1) or vector(0)', 5, 5))
         .with_panel(stat_panel("Hardware incidents open", "Incidents the infrastructure team owns (drain the node).",
                                'count(rankwatch_incident_info{hardware="true", severity!="info"} == 1) or vector(0)', 5, 5))
         .with_panel(stat_panel("Sidecars up", "rankwatch sidecars Prometheus scrapes successfully / all.",
                                f"sum({up}) / count({up})", 5, 5, red_from=None, unit="percentunit", no_value="No sidecars"))
         .with_panel(incident_table("Open incidents, all jobs",
                                    "max by (job, incident, failure, initiator_rank, hardware, severity) "
                                    '(rankwatch_incident_info{severity!="info"} == 1)',
                                    ["severity", "job", "failure", "initiator_rank", "hardware", "incident"], 24, 8))
         .with_panel(ts("Open incidents by severity", "Open incidents over time (recording rule).",
                        [target("sum by (severity) (job:rankwatch_incidents_open:count)", "{{severity}}")], 12, 8, stack=True))
         .with_panel(ts("Incidents opened, by failure", "Incidents opened by each failure across the fleet.",
                        [target("sum by (failure) (rankwatch_incidents_total)", "{{failure}}")], 12, 8)))
    b = (b.with_row(db.Row("Progress"))
         .with_panel(ts("Steps per second, by job", "Fastest rank's step rate per job.",
                        [target("job:rankwatch_step:deriv5m", "{{job}}")], 12, 8))
         .with_panel(ts("Seconds since any rank advanced, by job",
                        f"RankwatchTrainingStalled fires above {duration(opts.stall_seconds)}.",
                        [target("job:rankwatch_seconds_since_progress", "{{job}}")], 12, 8, unit="s"))
         .with_panel(ts("Skipped steps per second, by job", "fp16 overflow skips.",
                        [target("job:rankwatch_skipped_steps:rate5m", "{{job}}")], 8, 8))
         .with_panel(ts("Non-finite values per second, by job", "NaN/Inf losses and gradient norms.",
                        [target("job:rankwatch_nonfinite:rate5m", "{{job}} {{metric}}")], 8, 8,
                        no_value="No non-finite values"))
         .with_panel(ts("Ranks per job", "Ranks with per-rank series.", [target("job:rankwatch_ranks:count", "{{job}}")], 8, 8)))
    return b
