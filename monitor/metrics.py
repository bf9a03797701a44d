"""Prometheus exposition: a collector that yields from the live engine's state.

Nothing is registered on the global registry: the daemon owns a ``CollectorRegistry``
and this collector reads the engine and tailer when scraped, so a job's series vanish
with the job (no bookkeeping). Labels come from the catalog (failure ids), rank numbers
(capped at ``max_ranks``: beyond it series are dropped and counted) and the configured
job name — never from log text.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from monitor.metric_table import metric as table_row

if TYPE_CHECKING:
    from detectors.detect import RankState
    from monitor.live import LiveEngine
    from monitor.tailer import Tailer

__all__ = ["RankwatchCollector"]

__version__ = "0.1.0"


def _family(name: str, value: float | None = None) -> Any:
    """An empty family of the metric table's row ``name`` (its type, help and labels)."""
    m = table_row(name)
    cls = CounterMetricFamily if m.type == "counter" else GaugeMetricFamily
    if value is not None:
        return cls(name, m.help, value=value)
    return cls(name, m.help, labels=list(m.labels))


class RankwatchCollector(Collector):
    def __init__(self, engine: LiveEngine, tailer: Tailer, max_ranks: int = 65536) -> None:
        self.engine = engine
        self.tailer = tailer
        self.max_ranks = max_ranks
        self.label_drops = 0
        self.publisher: Any = None  # monitor.mqtt.Publisher when MQTT is on
        self.stack_samples: Any = None  # Counter[str]: py-spy results by kind (monitor/stacks.py)

    def _allowed_ranks(self) -> set[int]:
        """The lowest ``max_ranks`` global ranks: the only rank label values exported (every
        family). ``label_drops`` is the number of distinct ranks left out (monotonic)."""
        st = self.engine.state
        ranks = sorted({k[1] for k in st.ranks if k is not None and k[0] == "g"} | {r for r, _ in st.match_counts if r is not None})
        self.label_drops = max(self.label_drops, len(ranks) - self.max_ranks)
        return set(ranks[: self.max_ranks])

    def _ranks(self, allowed: set[int]) -> Iterator[tuple[str, RankState]]:
        st = self.engine.state
        for key, rs in sorted(st.ranks.items(), key=lambda kv: (kv[0] is None, kv[0] or ("", 0))):
            if key is None or key[0] != "g" or key[1] not in allowed:
                continue
            yield str(key[1]), rs

    def collect(self) -> Iterator[Metric]:
        eng = self.engine
        st = eng.state
        job = eng.job
        findings = _family("rankwatch_findings")
        allowed = self._allowed_ranks()
        for (rank, failure), n in sorted(st.match_counts.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
            if rank is not None and rank not in allowed:
                continue
            findings.add_metric([job, "" if rank is None else str(rank), failure], n)
        yield findings
        opened = _family("rankwatch_incidents")
        for failure, n in sorted(eng.opened_total.items()):
            opened.add_metric([job, failure], n)
        yield opened
        info = _family("rankwatch_incident_info")
        for iid, pub in sorted(eng.published.items()):
            if pub.status != "open":
                continue
            d = pub.incident
            irank = d["initiator"]["rank"]
            info.add_metric([job, iid, d["failure"], "" if irank is None else str(irank),
                             "true" if d["hardware"] else "false", d["severity"]], 1)
        yield info
        gauges = {
            "loss": _family("rankwatch_loss"),
            "grad_norm": _family("rankwatch_grad_norm"),
            "loss_scale": _family("rankwatch_loss_scale"),
        }
        step = _family("rankwatch_step")
        skipped = _family("rankwatch_skipped_steps")
        nonfinite = _family("rankwatch_nonfinite")
        progress = _family("rankwatch_last_progress_timestamp_seconds")
        for rlabel, rs in self._ranks(allowed):
            for k, g in gauges.items():
                v = rs.last.get(k)
                if v is not None:
                    g.add_metric([job, rlabel], v if math.isfinite(v) else float("nan"))
            if rs.last_step is not None:
                step.add_metric([job, rlabel], rs.last_step)
            skipped.add_metric([job, rlabel], rs.skipped_total)
            for metric, n in sorted(rs.nonfinite.items()):
                nonfinite.add_metric([job, rlabel, metric], n)
            if rs.progress_wall is not None:
                progress.add_metric([job, rlabel], rs.progress_wall)
        yield from gauges.values()
        yield step
        yield skipped
        yield nonfinite
        yield progress
        finished = _family("rankwatch_job_finished")
        finished.add_metric([job], 1 if st.finished else 0)
        yield finished
        build = _family("rankwatch_build_info")
        build.add_metric([job, __version__], 1)
        yield build
        t = self.tailer
        s = t.stats
        yield _family("rankwatch_lines", value=s.lines)
        yield _family("rankwatch_bytes_read", value=s.bytes)
        yield _family("rankwatch_files_tailed", value=len(t.tails) + len(t.draining))
        yield _family("rankwatch_tail_lag_bytes", value=t.lag_bytes())
        yield _family("rankwatch_rotations", value=s.rotations)
        yield _family("rankwatch_truncations", value=s.truncations)
        restarts = _family("rankwatch_rank_restarts")
        for rank, n in sorted(s.restarts.items()):
            restarts.add_metric([job, str(rank)], n)
        yield restarts
        if self.stack_samples is not None:
            from monitor.stacks import RESULTS

            samples = _family("rankwatch_stack_samples")
            for result in RESULTS:
                samples.add_metric([result], self.stack_samples.get(result, 0))
            yield samples
        dropped = _family("rankwatch_dropped")
        reasons = dict(s.dropped)
        if self.publisher is not None:
            for k, v in self.publisher.outbox.dropped.items():
                reasons[k] = reasons.get(k, 0) + v
        for k, v in st.dropped.items():
            reasons[k] = reasons.get(k, 0) + v
        if self.label_drops:
            reasons["rank_label_cap"] = self.label_drops
        for reason in ("truncated", "line_too_long", "max_files", "open_failed", "read_error", "findings", "rank_label_cap",
                       "mqtt_outbox_full"):
            reasons.setdefault(reason, 0)
        for reason, n in sorted(reasons.items()):
            dropped.add_metric([reason], n)
        yield dropped
