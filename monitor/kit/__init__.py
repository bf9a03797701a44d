"""The monitoring kit ("mixin") generated from the failure catalog: Prometheus alert and
recording rules and their ``promtool test rules`` files, the Prometheus Operator
``PrometheusRule``, runbook pages and Grafana dashboards.

One module per artefact: :mod:`~monitor.kit.alerts` (rule files from Jinja2 templates,
validated by pydantic), :mod:`~monitor.kit.promtool` (test files from the hand-written
expectations in ``expectations/``), :mod:`~monitor.kit.runbooks` (Markdown templates),
:mod:`~monitor.kit.dashboards` (grafana-foundation-sdk). Output is a pure function of the
catalog and :class:`Options` (same input, same bytes). ``rankwatch generate`` writes the
files; ``rankwatch generate --check`` lists stale ones.
"""

from __future__ import annotations

from detectors.catalog import Catalog, load_catalog
from monitor.kit.alerts import alert_rules, prometheus_rule, recording_rules
from monitor.kit.dashboards import dashboards
from monitor.kit.files import run, stale, write
from monitor.kit.options import (
    ALERTS_FILE,
    DASHBOARD_DIR,
    DEFAULT_RUNBOOK_URL,
    MARK,
    PROMETHEUSRULE_FILE,
    RECORDING_FILE,
    REGENERATE,
    RUNBOOK_DIR,
    TESTS_DIR,
    Options,
    alert_name,
)
from monitor.kit.promtool import promtool_tests
from monitor.kit.render import dump_yaml
from monitor.kit.runbooks import runbooks
from monitor.kit.usage import check_metrics

__all__ = [
    "ALERTS_FILE", "DASHBOARD_DIR", "DEFAULT_RUNBOOK_URL", "MARK", "PROMETHEUSRULE_FILE", "RECORDING_FILE",
    "REGENERATE", "RUNBOOK_DIR", "TESTS_DIR", "Options", "alert_name", "generate", "run", "stale", "write",
]


def generate(catalog: Catalog | None = None, opts: Options | None = None) -> dict[str, str]:
    """Every generated file: repository-relative path → exact content."""
    cat = catalog if catalog is not None else load_catalog()
    opts = opts or Options()
    alerts, recording = alert_rules(cat, opts), recording_rules()
    files = {
        ALERTS_FILE: dump_yaml(f"{MARK}\nSource of truth: the failure catalog. Runbook base URL: {opts.runbook_url}\n"
                               "(set yours with `rankwatch generate --runbook-url URL`).", alerts.dump()),
        RECORDING_FILE: dump_yaml(MARK, recording.dump()),
        PROMETHEUSRULE_FILE: dump_yaml(f"{MARK}\nThe rules of {ALERTS_FILE} and {RECORDING_FILE} for the Prometheus "
                                       "Operator.", prometheus_rule(alerts, recording)),
    }
    for name, (header, content) in promtool_tests(cat, alerts, opts).items():
        files[f"{TESTS_DIR}/{name}"] = dump_yaml(f"{MARK}\n{header}", content)
    files.update(runbooks(cat, alerts, opts))
    boards = dashboards(cat, opts)
    check_metrics([alerts, recording], boards.values())
    files.update(boards)
    return files
