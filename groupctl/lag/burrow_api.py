"""Burrow's HTTP API documents (v3) from a live `Evaluation`: what `groupctl lag serve` answers, so
that Burrow's clients, dashboards and alerting read groupctl unchanged.

The shapes are Burrow's (linkedin/Burrow, core/internal/httpserver/structs.go and
core/protocol/evaluator.go): every answer has `error` and `message` (the HTTP layer adds
`request`); a group's status has `cluster`, `group`, `status`, `complete`, `partitions`,
`partition_count`, `maxlag` and `totallag`; a partition's has `topic`, `partition`, `owner`,
`client_id`, `status`, `start` and `end` (the window's first and last commits: `offset`,
`timestamp`, `observedAt`, `lag`), `current_lag` and `complete`.

Where groupctl differs, and why:
- groupctl's extras are added as keys Burrow does not have: `lag_seconds`,
  `lag_seconds_is_lower_bound`, `lag_trend`, `catch_up_seconds`, `consume_rate`, `produce_rate`,
  `committed`, `log_end` on a partition; `max_lag_seconds`, `catch_up_seconds`, `lag_trend`,
  `evaluated_at`, `rules` on a group.
- Kafka does not say when an offset was committed: `timestamp` and `observedAt` are both the
  sample's time. `owner` (Burrow: the member's host) is empty: the samples keep the member's
  client id only, given as `client_id`.
- A partition whose lag is unknown (its leader could not be asked) has `current_lag` 0, as Go
  decodes a null into a number, and `log_end` null.
- Partitions are listed by topic, then partition (Burrow's order is its map's); `maxlag` is the
  first of those with the largest lag (the first partition when no lag is known).

Invariants: pure functions of the evaluation; statuses are the rules' (`groupctl.lag.rules`).
"""

from __future__ import annotations

from typing import Optional

from groupctl.lag.live import Evaluation, PartitionState
from groupctl.lag.window import Reading

STATUS_CODES = {"NOTFOUND": 0, "OK": 1, "WARN": 2, "ERR": 3, "STOP": 4, "STALL": 5, "REWIND": 6}
"""Burrow's status constants (protocol.StatusConstant): the numbers its Prometheus gauges carry."""

PARTITION_EXTRAS = ("lag_seconds", "lag_seconds_is_lower_bound", "lag_trend", "catch_up_seconds", "consume_rate",
                    "produce_rate", "committed", "log_end")
GROUP_EXTRAS = ("max_lag_seconds", "catch_up_seconds", "lag_trend", "evaluated_at")


def answer(message: str, **body) -> dict:
    """A successful answer: Burrow's `error` false and `message`, then `body`."""
    return {"error": False, "message": message, **body}


def error(message: str) -> dict:
    return {"error": True, "message": message}


def cluster_list(clusters: list[str]) -> dict:
    return answer("cluster list returned", clusters=clusters)


def consumer_list(evaluation: Evaluation, cluster: str) -> dict:
    return answer("consumer list returned", consumers=evaluation.group_names(cluster))


def consumer_detail(evaluation: Evaluation, cluster: str, group: str) -> Optional[dict]:
    """Burrow's consumer detail (`topics`: per topic, one entry per partition number holding the
    window's commits), or None for a group not known."""
    states = evaluation.partitions.get((cluster, group))
    if states is None:
        return None
    topics: dict[str, list] = {}
    for state in states:
        _, _, topic, partition = state.key
        slots = topics.setdefault(topic, [])
        slots.extend(_no_offsets() for _ in range(partition + 1 - len(slots)))  # Burrow: no null slot
        slots[partition] = {"offsets": [_offset(entry) for entry in state.window.entries], "owner": "",
                            "client_id": state.report["owner"] or "",
                            "current-lag": state.report["current_lag"] or 0}
    return answer("consumer detail returned", topics=topics)


def _no_offsets() -> dict:
    """A partition the group has not committed, as Burrow's storage holds it."""
    return {"offsets": [], "owner": "", "client_id": "", "current-lag": 0}


def group_status(evaluation: Evaluation, cluster: str, group: str, *, show_all: bool) -> tuple[int, dict]:
    """(HTTP status, Burrow's consumer status answer): every partition with `show_all` (`/lag`),
    only those not OK without (`/status`); 404 with status NOTFOUND for a group not known."""
    return (404 if (cluster, group) not in evaluation.groups else 200,
            answer("consumer status returned", status=status_document(evaluation, cluster, group, show_all=show_all)))


def status_document(evaluation: Evaluation, cluster: str, group: str, *, show_all: bool) -> dict:
    """Burrow's ConsumerGroupStatus of one group (NOTFOUND with no partitions when not known)."""
    report = evaluation.groups.get((cluster, group))
    if report is None:
        return {"cluster": cluster, "group": group, "status": "NOTFOUND", "complete": 1.0, "partitions": [],
                "partition_count": 0, "maxlag": None, "totallag": 0, "rules": evaluation.rules.value,
                "evaluated_at": evaluation.now}
    states = evaluation.partitions[(cluster, group)]
    documents = [partition_document(state) for state in states]
    largest = next((doc for doc in documents if (doc["topic"], doc["partition"])
                    == (report["max_lag_topic"], report["max_lag_partition"])), documents[0])  # no lag known: the first
    return {
        "cluster": cluster, "group": group, "status": report["status"], "complete": report["complete"],
        "partitions": [doc for doc in documents if show_all or doc["status"] != "OK"],
        "partition_count": report["partitions"], "maxlag": largest, "totallag": report["total_lag"] or 0,
        "rules": evaluation.rules.value, **{name: report[name] for name in GROUP_EXTRAS},
    }


def partition_document(state: PartitionState) -> dict:
    """Burrow's PartitionStatus of one partition, with groupctl's extras."""
    report, entries = state.report, state.window.entries
    return {
        "topic": report["topic"], "partition": report["partition"], "owner": "", "client_id": report["owner"] or "",
        "status": report["status"], "start": _offset(entries[0]) if entries else None,
        "end": _offset(entries[-1]) if entries else None, "current_lag": report["current_lag"] or 0,
        "complete": report["complete"], **{name: report[name] for name in PARTITION_EXTRAS},
    }


def _offset(entry: Reading) -> dict:
    """Burrow's ConsumerOffset of one commit of the window (its time is the sample's)."""
    return {"offset": entry.committed, "timestamp": entry.ts, "observedAt": entry.ts, "lag": entry.lag}
