"""Panel and variable builders shared by the dashboards (grafana-foundation-sdk).

The SDK places panels left to right and wraps a line when it is full, so every line of
panels adds up to 24 columns.
"""

from __future__ import annotations

import json
from typing import Any

from grafana_foundation_sdk.builders import common as cb
from grafana_foundation_sdk.builders import dashboard as db
from grafana_foundation_sdk.builders import prometheus, stat, table, timeseries
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import common as cm
from grafana_foundation_sdk.models import dashboard as dm
from grafana_foundation_sdk.models import prometheus as pm

__all__ = ["DS", "board", "datasource_var", "incident_table", "query_var", "runbook_var", "stat_panel", "target",
           "timeseries_panel", "to_json"]

DS = dm.DataSourceRef(type_val="prometheus", uid="${datasource}")


def target(expr: str, legend: str = "", instant: bool = False, table_format: bool = False,
           ref: str = "A") -> prometheus.Dataquery:
    q = prometheus.Dataquery().expr(expr).ref_id(ref).legend_format(legend or "__auto").datasource(DS)
    q = q.instant() if instant else q.range()
    return q.format(pm.PromQueryFormat.TABLE) if table_format else q


def timeseries_panel(title: str, desc: str, targets: list[Any], w: int, h: int, unit: str = "short",
                     log: bool = False, no_value: str | None = None, stack: bool = False) -> timeseries.Panel:
    p = (timeseries.Panel().title(title).description(desc).datasource(DS).targets(targets).span(w).height(h).unit(unit)
         .draw_style(cm.GraphDrawStyle.LINE).line_width(1).fill_opacity(10 if stack else 0)
         .show_points(cm.VisibilityMode.NEVER).span_nulls(False)
         .legend(cb.VizLegendOptions().display_mode(cm.LegendDisplayMode.TABLE).placement(cm.LegendPlacement.RIGHT)
                 .calcs(["lastNotNull"]).show_legend(True))
         .tooltip(cb.VizTooltipOptions().mode(cm.TooltipDisplayMode.MULTI).sort(cm.SortOrder.DESCENDING)))
    if log:
        p = p.scale_distribution(cb.ScaleDistributionConfig().type(cm.ScaleDistribution.LOG).log(2))
    if stack:
        p = p.stacking(cb.StackingConfig().mode(cm.StackingMode.NORMAL).group("A"))
    return p.no_value(no_value) if no_value else p


def stat_panel(title: str, desc: str, expr: str, w: int, h: int, red_from: float | None = 1, unit: str = "short",
               no_value: str | None = None, link: tuple[str, str] | None = None) -> stat.Panel:
    steps = [dm.Threshold(color="green", value=None)]
    if red_from is not None:
        steps.append(dm.Threshold(color="red", value=red_from))
    p = (stat.Panel().title(title).description(desc).datasource(DS).with_target(target(expr, instant=True))
         .span(w).height(h).unit(unit)
         .thresholds(db.ThresholdsConfig().mode(dm.ThresholdsMode.ABSOLUTE).steps(steps))
         .reduce_options(cb.ReduceDataOptions().calcs(["lastNotNull"]).fields("").values(False))
         .color_mode(cm.BigValueColorMode.BACKGROUND).graph_mode(cm.BigValueGraphMode.NONE)
         .text_mode(cm.BigValueTextMode.VALUE).justify_mode(cm.BigValueJustifyMode.CENTER))
    if link:
        p = p.links([db.DashboardLink(link[0]).url(link[1]).target_blank(True)])
    return p.no_value(no_value) if no_value else p


def incident_table(title: str, expr: str, columns: list[str], w: int, h: int) -> table.Panel:
    order = {c: i for i, c in enumerate(columns)}
    hidden = {"Time": True, "Value": True, "__name__": True, "instance": True}
    severity_colors = dm.ValueMap(options={
        "critical": dm.ValueMappingResult(color="red", index=0),
        "warning": dm.ValueMappingResult(color="orange", index=1),
        "info": dm.ValueMappingResult(color="blue", index=2)})
    return (table.Panel().title(title).datasource(DS).span(w).height(h)
            .description("Incidents open now (rankwatch_incident_info == 1): the failure, the rank that started it "
                         "(empty when the logs cannot tell), hardware or software. Click a failure for its runbook.")
            .with_target(target(expr, instant=True, table_format=True))
            .with_transformation(dm.DataTransformerConfig(id_val="organize", options={
                "excludeByName": hidden, "indexByName": order, "renameByName": {"initiator_rank": "initiating rank"}}))
            .no_value("No open incidents").show_header(True)
            .sort_by([cb.TableSortByFieldState().display_name("severity").desc(False)])
            .override_by_name("failure", [dm.DynamicConfigValue(id_val="links", value=[
                {"title": "Runbook", "targetBlank": True, "url": "${runbook_url}/${__value.raw}.md"}])])
            .override_by_name("severity", [
                dm.DynamicConfigValue(id_val="custom.cellOptions", value={"type": "color-background"}),
                dm.DynamicConfigValue(id_val="mappings", value=[severity_colors])]))


def query_var(name: str, label: str, query: str, regex: str = "", multi: bool = False,
              include_all: bool = False) -> db.QueryVariable:
    v = (db.QueryVariable(name).label(label).query(query).datasource(DS).refresh(dm.VariableRefresh.ON_TIME_RANGE_CHANGED)
         .sort(dm.VariableSort.NUMERICAL_ASC if name == "rank" else dm.VariableSort.ALPHABETICAL_ASC)
         .multi(multi).include_all(include_all))
    if regex:
        v = v.regex(regex)
    return v.all_value(".*") if include_all else v


def datasource_var() -> db.DatasourceVariable:
    return db.DatasourceVariable("datasource").label("Prometheus").type("prometheus")


def runbook_var(url: str) -> db.ConstantVariable:
    return db.ConstantVariable("runbook_url").label("runbook base URL").value(url.rstrip("/"))


def board(uid: str, title: str, desc: str) -> db.Dashboard:
    return (db.Dashboard(title).uid(uid).description(desc).tags(["rankwatch"]).editable().refresh("30s")
            .timezone("browser").tooltip(dm.DashboardCursorSync.CROSSHAIR).time("now-3h", "now")
            .link(db.DashboardLink("rankwatch").type(dm.DashboardLinkType.DASHBOARDS).tags(["rankwatch"])
                  .as_dropdown(False).include_vars(False).keep_time(True)))


def to_json(b: db.Dashboard) -> dict[str, Any]:
    """The dashboard as Grafana JSON, panel ids numbered in order."""
    d: dict[str, Any] = json.loads(json.dumps(b.build(), cls=JSONEncoder))
    n = 0
    for p in d["panels"]:
        n += 1
        p["id"] = n
        for inner in p.get("panels", []):
            n += 1
            inner["id"] = n
    return d
