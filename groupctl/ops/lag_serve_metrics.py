"""The Prometheus metrics of `groupctl lag serve` (docs/metrics.md, "lag serve"): consumer lag and
status read at scrape time from the latest evaluation, and the sampler's own health.

Invariants:
- One registry per server; nothing registers in prometheus-client's global registry.
- Lag series are those of the latest evaluation: a group or partition that is no longer known
  leaves no series behind. A partition whose lag is unknown has no `groupctl_consumer_lag` (nor
  `_lag_seconds`) sample, rather than a made-up number.
- Statuses carry Burrow's numeric codes (`burrow_api.STATUS_CODES`), so alerts written for
  Burrow's exporter translate one for one.
"""

from __future__ import annotations

from typing import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric

from groupctl.lag.burrow_api import STATUS_CODES
from groupctl.lag.live import Evaluation
from groupctl.ops.lag_schedule import RoundOutcome

PARTITION_LABELS = ["cluster", "group", "topic", "partition"]
GROUP_LABELS = ["cluster", "group"]
ROUND_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class LagServeMetrics:
    """The registry `lag serve` exposes at /metrics; `latest()` gives the evaluation to report."""

    def __init__(self, latest: Callable[[], Evaluation]) -> None:
        self.registry = CollectorRegistry()
        self.rounds = Counter("groupctl_lag_rounds", "Sampling rounds, by outcome: ok, incomplete (some groups or "
                              "log ends could not be sampled), failed (nothing could be), unwritten (sampled, "
                              "its --out file not written)", ["outcome"],
                              registry=self.registry)
        self.round_duration = Histogram("groupctl_lag_round_duration_seconds", "Time one sampling round took",
                                        buckets=ROUND_BUCKETS, registry=self.registry)
        self.last_round = Gauge("groupctl_lag_last_round_timestamp_seconds",
                                "When the latest round that sampled ended (Unix time)", registry=self.registry)
        self.notifications = Counter("groupctl_lag_notifications", "Webhook notifications, by outcome: sent, "
                                     "failed (given up after retries), dropped (queue full), unsent (not posted "
                                     "when the server stopped)", ["outcome"],
                                     registry=self.registry)
        self.registry.register(_EvaluationCollector(latest))

    def round(self, outcome: RoundOutcome, ended_s: float) -> None:
        """Count one round that ended at `ended_s` (Unix time)."""
        sample = outcome.sample
        sampled = sample is not None and not sample.failed
        if not sampled:
            kind = "failed"
        elif outcome.failed:
            kind = "unwritten"  # sampled, but its --out file could not be written
        else:
            kind = "incomplete" if sample.problems else "ok"
        self.rounds.labels(kind).inc()
        self.round_duration.observe(outcome.elapsed_s)
        if sampled:
            self.last_round.set(ended_s)

    def notified(self, outcome: str) -> None:
        self.notifications.labels(outcome).inc()


class _EvaluationCollector:
    """Lag and status gauges of the latest evaluation, built at each scrape."""

    def __init__(self, latest: Callable[[], Evaluation]) -> None:
        self._latest = latest

    def collect(self) -> Iterator[Metric]:
        evaluation = self._latest()
        lag = GaugeMetricFamily("groupctl_consumer_lag", "Messages between a partition's committed offset and its "
                                "log end (never negative)", labels=PARTITION_LABELS)
        seconds = GaugeMetricFamily("groupctl_consumer_lag_seconds", "Age of a partition's oldest unconsumed message "
                                    "(a lower bound when it predates the samples kept)", labels=PARTITION_LABELS)
        partition_status = GaugeMetricFamily("groupctl_consumer_partition_status", "A partition's status, Burrow's "
                                             "codes: 1 OK, 2 WARN, 4 STOP, 5 STALL, 6 REWIND",
                                             labels=PARTITION_LABELS)
        status = GaugeMetricFamily("groupctl_consumer_status", "A group's status, Burrow's codes: 1 OK, 2 WARN, "
                                   "3 ERR", labels=GROUP_LABELS)
        total = GaugeMetricFamily("groupctl_consumer_total_lag", "A group's lag summed over its partitions with a "
                                  "known lag", labels=GROUP_LABELS)
        for (cluster, group), report in evaluation.groups.items():
            status.add_metric([cluster, group], STATUS_CODES[report["status"]])
            if report["total_lag"] is not None:
                total.add_metric([cluster, group], report["total_lag"])
            for state in evaluation.partitions[(cluster, group)]:
                row = state.report
                labels = [cluster, group, row["topic"], str(row["partition"])]
                partition_status.add_metric(labels, STATUS_CODES[row["status"]])
                if row["current_lag"] is not None:
                    lag.add_metric(labels, row["current_lag"])
                if row["lag_seconds"] is not None:
                    seconds.add_metric(labels, row["lag_seconds"])
        yield from (lag, seconds, partition_status, status, total)
