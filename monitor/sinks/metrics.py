"""The sinks' contract counters as Prometheus metrics (a collector over live ``Stats``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.registry import Collector

from monitor.sinks.base import DropReason, Sink

__all__ = ["SinkCollector"]


class SinkCollector(Collector):
    def __init__(self, sinks: Iterable[Sink]) -> None:
        self.sinks = list(sinks)

    def collect(self) -> Iterator[Metric]:
        received = CounterMetricFamily("rankwatch_sink_received", "Incident changes handed to a sink.", labels=["sink"])
        emitted = CounterMetricFamily("rankwatch_sink_emitted", "Incident changes a sink delivered.", labels=["sink"])
        dropped = CounterMetricFamily("rankwatch_sink_dropped", "Incident changes a sink dropped, by reason.",
                                      labels=["sink", "reason"])
        errors = CounterMetricFamily("rankwatch_sink_errors", "Failed delivery attempts (retried or not).", labels=["sink"])
        for s in self.sinks:
            received.add_metric([s.kind], s.stats.received)
            emitted.add_metric([s.kind], s.stats.emitted)
            errors.add_metric([s.kind], s.stats.errors)
            for reason in DropReason:
                dropped.add_metric([s.kind, reason.value], s.stats.dropped[reason])
        yield from (received, emitted, dropped, errors)
