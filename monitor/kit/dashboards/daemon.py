"""``rankwatch / sidecars``: the daemons themselves: scrape health, read rate, lag, drops."""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard as db

from monitor.kit.dashboards.panels import board, datasource_var, query_var, stat_panel, target
from monitor.kit.dashboards.panels import timeseries_panel as ts
from monitor.kit.options import Options

__all__ = ["daemon_dashboard"]

ISEL = 'job=~"$scrape_job", instance=~"$instance"'
INST = "{{instance}}"


def daemon_dashboard(opts: Options) -> db.Dashboard:
    b = (board("rankwatch-daemon", "rankwatch / sidecars",
               "The rankwatch daemons themselves: scrape health, read rate, lag, drops, files, rotations.")
         .with_variable(datasource_var())
         .with_variable(query_var("scrape_job", "scrape job", "label_values(rankwatch_lines_total, job)"))
         .with_variable(query_var("instance", "sidecar", 'label_values(rankwatch_lines_total{job=~"$scrape_job"}, instance)',
                                  multi=True, include_all=True)))
    return (b.with_row(db.Row("Sidecar health"))
            .with_panel(stat_panel("Up", "Prometheus scrapes the sidecar (1) or not (0).", f"min(up{{{ISEL}}})", 4, 5,
                                   red_from=None, no_value="No sidecars"))
            .with_panel(stat_panel("Files tailed", "Files being followed now.", f"sum(rankwatch_files_tailed{{{ISEL}}})", 5, 5,
                                   red_from=None))
            .with_panel(stat_panel("Tail lag", "Bytes written to the logs but not read yet.",
                                   f"max(rankwatch_tail_lag_bytes{{{ISEL}}})", 5, 5, red_from=opts.lag_bytes, unit="bytes"))
            .with_panel(stat_panel("Drops (last hour)", "Data dropped by any reason in the last hour.",
                                   f"sum(increase(rankwatch_dropped_total{{{ISEL}}}[1h]))", 5, 5))
            .with_panel(stat_panel("Rotations + truncations", "Log rotations and truncations seen since start.",
                                   f"sum(rankwatch_rotations_total{{{ISEL}}}) + sum(rankwatch_truncations_total{{{ISEL}}})",
                                   5, 5, red_from=None))
            .with_panel(ts("Lines read per second", "Lines read from the logs.",
                           [target(f"rate(rankwatch_lines_total{{{ISEL}}}[$__rate_interval])", INST)], 12, 8))
            .with_panel(ts("Bytes read per second", "Bytes read from the logs.",
                           [target(f"rate(rankwatch_bytes_read_total{{{ISEL}}}[$__rate_interval])", INST)], 12, 8, unit="Bps"))
            .with_panel(ts("Tail lag", "Bytes written but not read yet, per sidecar.",
                           [target(f"rankwatch_tail_lag_bytes{{{ISEL}}}", INST)], 12, 8, unit="bytes"))
            .with_panel(ts("Files tailed", "Files followed, per sidecar.", [target(f"rankwatch_files_tailed{{{ISEL}}}", INST)],
                           12, 8))
            .with_panel(ts("Drops per second, by reason", "Never silent: every drop is counted with its reason.",
                           [target(f"sum by (instance, reason) (rate(rankwatch_dropped_total{{{ISEL}}}[$__rate_interval]))",
                                   "{{instance}} {{reason}}")], 12, 8))
            .with_panel(ts("Rotations and truncations", "Rename+create rotations and in-place truncations seen.",
                           [target(f"rankwatch_rotations_total{{{ISEL}}}", "{{instance}} rotations"),
                            target(f"rankwatch_truncations_total{{{ISEL}}}", "{{instance}} truncations", ref="B")], 12, 8))
            .with_panel(ts("Rank restarts", "Relaunches seen, per job and rank.",
                           [target('rankwatch_rank_restarts_total{instance=~"$instance"}', "{{job}} rank {{rank}}")], 24, 6,
                           no_value="No rank restarts")))
