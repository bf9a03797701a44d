"""The alerts model: Prometheus rule files rendered from templates, validated on the way out.

The catalog drives the incident group: every entry of severity ``critical`` or ``warning``
gets one alert on ``rankwatch_incident_info`` (one alert per open incident, never per
finding); ``info`` entries get none, and no alert matches an incident whose own severity is
``info``. ``RankwatchIncident`` catches failures the deployed rules do not know yet (a
sidecar with a newer catalog). Rate-based training warnings and the sidecar's own alerts
complete the file. Expressions and prose live in ``templates/alerts.yml.j2``; this module
only renders, validates (pydantic) and serialises.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from detectors.catalog import Catalog
from monitor.kit.options import DAEMON_PAGE, Options, alert_name, duration
from monitor.kit.render import yaml_template

__all__ = [
    "INCIDENT_KEYS",
    "AlertRule",
    "RecordingRule",
    "RuleFile",
    "alert_rules",
    "alerting_entries",
    "prometheus_rule",
    "recording_rules",
]

#: Labels of ``rankwatch_incident_info`` an incident alert keeps (``instance`` is dropped:
#: two sidecars reporting one incident make one alert).
INCIDENT_KEYS = ["job", "incident", "failure", "initiator_rank", "hardware", "severity"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Annotations(_Strict):
    summary: str
    description: str
    runbook_url: str


class AlertRule(_Strict):
    alert: str = Field(pattern=r"^Rankwatch[A-Z][A-Za-z0-9]*$")
    expr: str
    for_: str = Field(alias="for", pattern=r"^(\d+[smh])+$")
    labels: dict[str, str]
    annotations: Annotations


class RecordingRule(_Strict):
    record: str = Field(pattern=r"^[a-z_]+:[a-z_]+(:[a-z0-9_]+)?$")
    expr: str


class Group(_Strict):
    name: str
    rules: list[AlertRule | RecordingRule] = Field(min_length=1)


class RuleFile(_Strict):
    groups: list[Group]

    def alerts(self) -> dict[str, AlertRule]:
        return {r.alert: r for g in self.groups for r in g.rules if isinstance(r, AlertRule)}

    def dump(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True)


def alerting_entries(cat: Catalog) -> list[Any]:
    """Catalog entries that page (critical) or open a ticket (warning), by id."""
    return sorted((e for e in cat if e.severity in ("critical", "warning")), key=lambda e: e.id)


def alert_rules(cat: Catalog, opts: Options) -> RuleFile:
    def runbook(page: str, anchor: str = "") -> str:
        """A catalog page, the sidecar's page, or the index when the catalog lost that failure."""
        return opts.runbook(page if page in cat or page == DAEMON_PAGE else "README", anchor)

    raw = yaml_template(
        "alerts.yml.j2", entries=alerting_entries(cat), known=sorted(e.id for e in cat), o=opts,
        incident_keys=INCIDENT_KEYS, alert_name=alert_name, duration=duration, daemon_page=DAEMON_PAGE,
        runbook=runbook,
    )
    return RuleFile.model_validate(raw)


def recording_rules() -> RuleFile:
    return RuleFile.model_validate(yaml_template("recording.yml.j2"))


def prometheus_rule(alerts: RuleFile, recording: RuleFile) -> dict[str, Any]:
    """Both rule files as one Prometheus Operator ``PrometheusRule``."""
    return {
        "apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
        "metadata": {"name": "rankwatch", "namespace": "monitoring", "labels": {"release": "prometheus"}},
        "spec": {"groups": [*alerts.dump()["groups"], *recording.dump()["groups"]]},
    }

