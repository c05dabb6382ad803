"""The node's Prometheus metrics (`coordinator run --metrics-port`; docs/metrics.md lists them).

Invariants:
- One `CollectorRegistry` per node (never prometheus_client's global one), so nodes in one
  process do not share series.
- Gauges about groups are computed at scrape time from the core (`coordinator.gauges`), so a group
  that left the core has no series; per-group counters are dropped, on the event loop, when the
  group is deleted or its partition moves to another node. With `per_group` off no series carries
  a `group` label (aggregates only, never dropped) and `group_epoch` is not exported.
- Counters about groups are fed from the core's journal events (`Node._journal` hands every
  result's events here, journal or not); requests are counted in the connection's dispatch and
  store transactions in the record writer: on those paths a dict lookup and an increment or two.
"""

from __future__ import annotations

import logging
from bisect import bisect_left
from collections import Counter
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from prometheus_client import CollectorRegistry, Counter as PromCounter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.utils import floatToGoString
from prometheus_client.exposition import start_http_server

from groupctl.coordinator.gauges import CLASSIC, CONSUMER, group_gauges
from groupctl.protocol.registry import REGISTRY

if TYPE_CHECKING:
    from groupctl.server.runtime import Node

log = logging.getLogger("groupctl.metrics")

_LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
_REBALANCE_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1.0, 3.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
_BATCH_BUCKETS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)


class NodeMetrics:
    """Everything one node exports; `serve` starts its /metrics endpoint."""

    def __init__(self, node: "Node", *, per_group: bool = True) -> None:
        self.node = node
        self.per_group = per_group
        self.registry = CollectorRegistry()
        self.rebalances: Counter[tuple[str, str, str]] = Counter()  # (group, type, reason) -> started
        self.offset_commits: Counter[str] = Counter()  # group -> committed partitions
        self._consumer_rebalancing: dict[str, int] = {}  # consumer group -> ts of its first unsettled epoch bump
        # API key -> its requests' durations: plain counts, not prometheus_client's labelled
        # children, whose locks cost four times as much per request (bench/README.md).
        self.request_timings: dict[int, Timings] = {}
        self.connections = Gauge("groupctl_connections", "Client connections open now.", registry=self.registry)
        self.rebalance_duration = Histogram(
            "groupctl_rebalance_duration_seconds", "Rebalances from start to completion (classic: the "
            "new generation's document written; consumer: the group stable again), by group type.",
            ["type"], buckets=_REBALANCE_BUCKETS, registry=self.registry)
        self.store_write_duration = Histogram(
            "groupctl_store_write_duration_seconds", "Store transactions (coalesced writes), from start to commit.",
            buckets=_LATENCY_BUCKETS, registry=self.registry)
        self.store_write_records = Histogram(
            "groupctl_store_write_records", "Records per store transaction (the coalesced batch size).",
            buckets=_BATCH_BUCKETS, registry=self.registry)
        self.leadership_changes = PromCounter(
            "groupctl_leadership_changes", "Group partitions this node started (gained) or stopped (lost) leading.",
            ["change"], registry=self.registry)
        self.registry.register(_StateCollector(self))
        self._server: Any = None

    # -- fed by the node -----------------------------------------------------------------------

    def request(self, api_key: int, seconds: float) -> None:
        timings = self.request_timings.get(api_key)
        if timings is None:
            timings = self.request_timings[api_key] = Timings(_LATENCY_BUCKETS)
        timings.observe(seconds)

    def store_transaction(self, seconds: float, records: int) -> None:
        self.store_write_duration.observe(seconds)
        self.store_write_records.observe(records)

    def partitions_changed(self, change: str, count: int) -> None:
        """`change` is "gained" or "lost"; `count` group partitions."""
        if count:
            self.leadership_changes.labels(change).inc(count)

    def events(self, events: Iterable[dict[str, Any]]) -> None:
        """Count a result's journal events (`groupctl.coordinator.journal`); without per-group
        series the counters are kept under the group "" (never forgotten)."""
        per_group = self.per_group
        for event in events:
            kind = event["event"]
            if kind == "offset_commit":
                self.offset_commits[event["group"] if per_group else ""] += 1
            elif kind == "rebalance_started":
                self.rebalances[(event["group"] if per_group else "", CLASSIC, event["reason"])] += 1
            elif kind == "rebalance_completed":
                self.rebalance_duration.labels(CLASSIC).observe(max(event["ts"] - event["started_ts"], 0) / 1000)
            elif kind == "group_epoch_bumped":
                group = event["group"]
                self.rebalances[(group if per_group else "", CONSUMER, event["reason"])] += 1
                self._consumer_rebalancing.setdefault(group, event["ts"])
            elif kind == "group_stable":
                started = self._consumer_rebalancing.pop(event["group"], None)
                if started is not None:
                    self.rebalance_duration.labels(CONSUMER).observe(max(event["ts"] - started, 0) / 1000)
            elif kind == "group_deleted":
                group = event["group"]
                self.forget(lambda candidate: candidate == group)

    def forget(self, belongs: Callable[[str], bool]) -> None:
        """Drop the per-group counters of the groups `belongs` accepts (deleted, or their
        partition no longer served here); the aggregates (group "") stay."""
        for key in [key for key in self.rebalances if key[0] and belongs(key[0])]:
            del self.rebalances[key]
        for group in [group for group in self.offset_commits if group and belongs(group)]:
            del self.offset_commits[group]
        for group in [group for group in self._consumer_rebalancing if belongs(group)]:
            del self._consumer_rebalancing[group]

    # -- the endpoint -------------------------------------------------------------------------

    def serve(self, host: str, port: int) -> int:
        """Serve /metrics on host:port (0: any free port) on its own thread; returns the port."""
        self._server, _ = start_http_server(port, host, registry=self.registry)  # a daemon thread, ended by close
        bound = self._server.server_address[1]
        log.info("serving Prometheus metrics on http://%s:%d/metrics", host, bound)
        return bound

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


class Timings:
    """A histogram the event loop feeds without a lock: a count per bucket and a sum. A scrape on
    the metrics thread copies the counts, so its buckets are cumulative and its count is theirs;
    its sum may be one observation ahead or behind."""

    __slots__ = ("bounds", "counts", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)  # the last one: above every bound
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1
        self.sum += value

    def buckets(self) -> list[tuple[str, int]]:
        """Prometheus' cumulative buckets, "+Inf" last."""
        cumulative, running = [], 0
        for bound, count in zip((*map(floatToGoString, self.bounds), "+Inf"), list(self.counts)):
            running += count
            cumulative.append((bound, running))
        return cumulative


class _StateCollector:
    """The series computed at scrape time: groups, members, epochs, per-group counters, the
    partitions led, the ZooKeeper session and the journal backlog. Scrapes run on the metrics
    thread and read the core without locking: a scrape racing a change may see either side of it
    (the dict copies below keep it from failing)."""

    def __init__(self, metrics: NodeMetrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Any]:
        metrics, node = self.metrics, self.metrics.node
        per_group = metrics.per_group
        groups = GaugeMetricFamily("groupctl_groups", "Groups this node coordinates, by type and state.",
                                   labels=["type", "state"])
        members = GaugeMetricFamily("groupctl_group_members", "Members of the groups this node coordinates.",
                                    labels=["group", "type"] if per_group else ["type"])
        epoch = GaugeMetricFamily("groupctl_group_epoch", "A consumer group's (KIP-848) group epoch.",
                                  labels=["group"])
        behind = GaugeMetricFamily(
            "groupctl_group_members_behind_target",
            "Members of consumer groups (KIP-848) not yet at their group's target assignment epoch.",
            labels=["group"] if per_group else [])
        by_state: Counter[tuple[str, str]] = Counter()
        members_by_type: Counter[str] = Counter()
        behind_total = 0
        for gauge in list(group_gauges(node.core)):
            by_state[(gauge.type, gauge.state)] += 1
            if per_group:
                members.add_metric([gauge.group, gauge.type], gauge.members)
            members_by_type[gauge.type] += gauge.members
            if gauge.epoch is not None:
                if per_group:
                    epoch.add_metric([gauge.group], gauge.epoch)
                    behind.add_metric([gauge.group], gauge.members_behind)
                behind_total += gauge.members_behind or 0
        for (kind, state), count in sorted(by_state.items()):
            groups.add_metric([kind, state], count)
        if not per_group:
            for kind, count in sorted(members_by_type.items()):
                members.add_metric([kind], count)
            behind.add_metric([], behind_total)
        yield groups
        yield members
        if per_group:
            yield epoch
        yield behind
        yield from self._counters(per_group)
        yield from self._requests()
        led = GaugeMetricFamily("groupctl_group_partitions_led", "Group partitions this node serves now.")
        led.add_metric([], len(node.placement.serving))
        yield led
        backlog = GaugeMetricFamily("groupctl_journal_backlog_events",
                                    "Journal events queued, not yet written to the journal.")
        backlog.add_metric([], node.journal_backlog())
        yield backlog
        session_state = getattr(node.store, "session_state", None)
        if session_state is not None:
            session = GaugeMetricFamily("groupctl_zookeeper_session_state",
                                        "1 for the ZooKeeper session's current state, 0 for the others.",
                                        labels=["state"])
            for state in ("CONNECTED", "SUSPENDED", "LOST", "CLOSED"):
                session.add_metric([state], 1 if state == session_state else 0)
            yield session

    def _requests(self) -> Iterator[Any]:
        requests = CounterMetricFamily("groupctl_requests", "Requests answered, by API.", labels=["api"])
        durations = HistogramMetricFamily("groupctl_request_duration_seconds",
                                          "Time from a request's decoding to its answer, by API.", labels=["api"])
        for key, timings in sorted(dict(self.metrics.request_timings).items()):
            name = REGISTRY[key].name
            buckets = timings.buckets()
            requests.add_metric([name], buckets[-1][1])
            durations.add_metric([name], buckets, timings.sum)
        yield requests
        yield durations

    def _counters(self, per_group: bool) -> Iterator[Any]:
        metrics = self.metrics
        rebalances = CounterMetricFamily("groupctl_rebalances", "Rebalances started, by cause (consumer "
                                         "groups: group epoch bumps).",
                                         labels=["group", "type", "reason"] if per_group else ["type", "reason"])
        commits = CounterMetricFamily("groupctl_offset_commits", "Offsets committed (one per partition).",
                                      labels=["group"] if per_group else [])
        if per_group:
            for (group, kind, reason), count in sorted(dict(metrics.rebalances).items()):
                rebalances.add_metric([group, kind, reason], count)
            for group, count in sorted(dict(metrics.offset_commits).items()):
                commits.add_metric([group], count)
        else:
            totals: Counter[tuple[str, str]] = Counter()
            for (_, kind, reason), count in dict(metrics.rebalances).items():
                totals[(kind, reason)] += count
            for (kind, reason), count in sorted(totals.items()):
                rebalances.add_metric([kind, reason], count)
            commits.add_metric([], sum(dict(metrics.offset_commits).values()))
        yield rebalances
        yield commits
