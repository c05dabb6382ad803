"""The node's metrics over a real core (`groupctl.server.metrics`): group gauges are read from the
core at scrape time, group counters are fed from the core's journal events, per-group series go
with their group, and `per_group=False` leaves no `group` label anywhere.

The node's shell (its placement, store and journal queue) is a plain namespace here: the
collector reads nothing else of it; tests/e2e/test_metrics_e2e.py scrapes a real node."""

from __future__ import annotations

from types import SimpleNamespace

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

import groupctl.server.handlers  # noqa: F401  (registers the API names requests are counted under)
from groupctl.coordinator.placement import Placement
from groupctl.server.metrics import NodeMetrics
from tests.unit.test_group_types import Node, classic_join


def scrape(metrics: NodeMetrics) -> dict[tuple[str, frozenset], float]:
    """Every sample of the node's registry: (name, labels) -> value."""
    text = generate_latest(metrics.registry).decode()
    return {(sample.name, frozenset(sample.labels.items())): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def value(samples: dict, name: str, **labels: str) -> float:
    return samples[(name, frozenset(labels.items()))]


def named(samples: dict, name: str) -> dict[frozenset, float]:
    return {labels: v for (sample, labels), v in samples.items() if sample == name}


class Metered:
    """A core whose every result's events reach a `NodeMetrics`, as `Node._journal` hands them."""

    def __init__(self, per_group: bool = True) -> None:
        self.node = Node()
        self.backlog = 0
        shell = SimpleNamespace(core=self.node.core, placement=Placement(4), store=None,
                                journal_backlog=lambda: self.backlog)
        self.metrics = NodeMetrics(shell, per_group=per_group)

    def run(self, operation: str, request) -> None:
        result = getattr(self.node.core, operation)("token", request, self.node.timer.now_ms)
        self.metrics.events(result.events)

    def advance(self, ms: int) -> None:
        for result in self.node.timer.advance(ms):
            self.metrics.events(result.events)

    def consumer_join(self, group: str, member: str) -> None:
        from groupctl.coordinator.consumer.messages import ConsumerHeartbeat

        self.run("consumer_group_heartbeat", ConsumerHeartbeat(
            group, member, 0, rebalance_timeout_ms=60_000, subscribed_topic_names=("orders",), owned={}))

    def commit(self, group: str) -> None:
        from groupctl.coordinator.offsets.messages import CommitOffsets, PartitionOffset

        self.run("commit_offsets", CommitOffsets(group, -1, "", None, (PartitionOffset("orders", 0, 10),), 9))


def test_groups_are_counted_by_type_and_state_with_their_members_and_consumer_epochs():
    metered = Metered()
    metered.run("join_group", classic_join("classic-g"))
    metered.advance(10_000)  # the initial rebalance delay ends: the member awaits its SyncGroup
    metered.consumer_join("consumer-g", "a")
    metered.consumer_join("consumer-g", "b")
    samples = scrape(metered.metrics)
    assert named(samples, "groupctl_groups") == {
        frozenset({("type", "classic"), ("state", "CompletingRebalance")}): 1,
        frozenset({("type", "consumer"), ("state", "Reconciling")}): 1}
    assert value(samples, "groupctl_group_members", group="classic-g", type="classic") == 1
    assert value(samples, "groupctl_group_members", group="consumer-g", type="consumer") == 2
    assert value(samples, "groupctl_group_epoch", group="consumer-g") == 2
    # "a" must revoke what "b" gets, and "b" waits for it: neither has its target assignment yet
    assert value(samples, "groupctl_group_members_behind_target", group="consumer-g") == 2
    assert value(samples, "groupctl_rebalances_total", group="classic-g", type="classic", reason="join") == 1
    assert value(samples, "groupctl_rebalances_total", group="consumer-g", type="consumer", reason="join") == 2


def test_offset_commits_are_counted_per_partition_and_the_journal_backlog_is_reported():
    metered = Metered()
    metered.commit("g")
    metered.commit("g")
    metered.backlog = 3
    samples = scrape(metered.metrics)
    assert value(samples, "groupctl_offset_commits_total", group="g") == 2
    assert value(samples, "groupctl_journal_backlog_events") == 3


def test_a_deleted_group_leaves_no_series():
    metered = Metered()
    metered.commit("gone")
    metered.commit("kept")
    metered.run("delete_groups", ("gone",))
    samples = scrape(metered.metrics)
    assert not [labels for (_, labels) in samples if ("group", "gone") in labels]
    assert value(samples, "groupctl_offset_commits_total", group="kept") == 1


def test_a_group_whose_partition_moved_away_leaves_no_counter_series():
    metered = Metered()
    metered.commit("moved")
    metered.metrics.forget(lambda group: group == "moved")  # what Node._partitions_lost does
    assert not named(scrape(metered.metrics), "groupctl_offset_commits_total")


def test_without_per_group_series_only_totals_are_exported_and_deletions_keep_them():
    metered = Metered(per_group=False)
    metered.consumer_join("c", "a")
    metered.commit("one")
    metered.commit("two")
    metered.run("delete_groups", ("one",))
    samples = scrape(metered.metrics)
    assert not [labels for (_, labels) in samples if any(name == "group" for name, _ in labels)]
    assert value(samples, "groupctl_offset_commits_total") == 2
    assert value(samples, "groupctl_group_members", type="consumer") == 1
    assert value(samples, "groupctl_rebalances_total", type="consumer", reason="join") == 1
    assert not named(samples, "groupctl_group_epoch")


def test_requests_are_counted_and_timed_by_api_name():
    metrics = Metered().metrics
    metrics.request(12, 0.002)  # Heartbeat
    metrics.request(12, 0.004)
    samples = scrape(metrics)
    assert value(samples, "groupctl_requests_total", api="Heartbeat") == 2
    assert value(samples, "groupctl_request_duration_seconds_count", api="Heartbeat") == 2
    assert abs(value(samples, "groupctl_request_duration_seconds_sum", api="Heartbeat") - 0.006) < 1e-9


def test_docs_metrics_lists_exactly_the_metrics_the_node_exports_with_their_types_and_labels():
    import re
    from pathlib import Path

    metered = Metered()
    metered.metrics.node.store = SimpleNamespace(session_state="CONNECTED")  # a ZooKeeper-backed node
    metered.run("join_group", classic_join("classic-g"))
    metered.consumer_join("consumer-g", "a")
    metered.commit("committed-only")
    metrics = metered.metrics
    metrics.events([{"event": "rebalance_completed", "group": "classic-g", "ts": 20, "started_ts": 10}])
    metrics.request(12, 0.001)
    metrics.store_transaction(0.001, 3)
    metrics.partitions_changed("gained", 1)
    exported = {}
    for family in metrics.registry.collect():
        name = family.name + "_total" if family.type == "counter" else family.name
        labels = {key for sample in family.samples for key in sample.labels} - {"le"}
        exported[name] = (family.type, labels)
    text = (Path(__file__).resolve().parents[2] / "docs" / "metrics.md").read_text()
    text = text.split("## Every metric", 1)[1].split("\n## ", 1)[0]  # the coordinator's table, not lag serve's
    documented = {name: (kind, set(re.findall(r"`(\w+)`", labels)))
                  for name, kind, labels in re.findall(r"^\| `(groupctl_\w+)` \| (\w+) \|([^|]*)\|", text, flags=re.M)}
    assert documented == exported
