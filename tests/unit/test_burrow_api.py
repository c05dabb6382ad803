"""`groupctl.lag.burrow_api`: lag serve's answers have Burrow's v3 shapes (its structs' JSON keys),
groupctl's extras only as added keys, and Burrow's NOTFOUND and /status-versus-/lag rules."""

from __future__ import annotations

from groupctl.lag import burrow_api
from groupctl.lag.live import LiveLag
from groupctl.lag.window import Sample

CLUSTER = "local"
# Burrow's JSON keys (core/protocol/evaluator.go, storage.go; httpserver/structs.go).
BURROW_GROUP_KEYS = {"cluster", "group", "status", "complete", "partitions", "partition_count", "maxlag", "totallag"}
BURROW_PARTITION_KEYS = {"topic", "partition", "owner", "client_id", "status", "start", "end", "current_lag", "complete"}
BURROW_OFFSET_KEYS = {"offset", "timestamp", "observedAt", "lag"}


def evaluation():
    """`billing`: partition 0 keeps up, partition 1 died behind (STOP); `orders` keeps up."""
    live = LiveLag(window=3, history_ms=60_000)
    for t in range(8):
        ts = 1_000 * t
        live.record([(("local", "billing", "events", 0), Sample(ts, 10 * t, 10 * t, 1, "c-1")),
                     (("local", "billing", "events", 1), Sample(ts, 5, 5 + t, 0, None)),
                     (("local", "orders", "events", 0), Sample(ts, t, t, 1, "c-2"))],
                    sampled=[("local", "billing"), ("local", "orders")])
    return live.evaluate(7_000)


def test_a_group_status_has_burrows_keys_plus_groupctls_extras_and_lists_only_problem_partitions():
    code, body = burrow_api.group_status(evaluation(), CLUSTER, "billing", show_all=False)
    assert code == 200 and body["error"] is False and body["message"] == "consumer status returned"
    status = body["status"]
    assert set(status) == BURROW_GROUP_KEYS | {"rules", *burrow_api.GROUP_EXTRAS}
    assert (status["status"], status["partition_count"], status["totallag"]) == ("ERR", 2, 7)
    [stopped] = status["partitions"]
    assert set(stopped) == BURROW_PARTITION_KEYS | set(burrow_api.PARTITION_EXTRAS)
    assert (stopped["partition"], stopped["status"], stopped["current_lag"]) == (1, "STOP", 7)
    assert set(stopped["start"]) == BURROW_OFFSET_KEYS and stopped["start"]["offset"] == 5
    assert status["maxlag"]["partition"] == 1


def test_lag_lists_every_partition_in_topic_then_partition_order():
    _, body = burrow_api.group_status(evaluation(), CLUSTER, "billing", show_all=True)
    assert [(p["partition"], p["status"]) for p in body["status"]["partitions"]] == [(0, "OK"), (1, "STOP")]
    assert body["status"]["partitions"][0]["client_id"] == "c-1"


def test_an_unknown_group_is_a_404_with_burrows_notfound_status():
    code, body = burrow_api.group_status(evaluation(), CLUSTER, "ghost", show_all=True)
    assert code == 404 and body["error"] is False
    assert body["status"] == {"cluster": CLUSTER, "group": "ghost", "status": "NOTFOUND", "complete": 1.0,
                              "partitions": [], "partition_count": 0, "maxlag": None, "totallag": 0,
                              "rules": "groupctl", "evaluated_at": 7_000}


def test_the_consumer_list_and_detail_name_the_groups_and_each_partitions_window_commits():
    current = evaluation()
    assert burrow_api.consumer_list(current, CLUSTER)["consumers"] == ["billing", "orders"]
    topics = burrow_api.consumer_detail(current, CLUSTER, "orders")["topics"]
    [partition0] = topics["events"]
    assert [o["offset"] for o in partition0["offsets"]] == [5, 6, 7] and partition0["current-lag"] == 0
    assert burrow_api.consumer_detail(current, CLUSTER, "ghost") is None


def test_status_codes_are_burrows_constants():
    assert burrow_api.STATUS_CODES == {"NOTFOUND": 0, "OK": 1, "WARN": 2, "ERR": 3, "STOP": 4, "STALL": 5,
                                       "REWIND": 6}


def test_a_partition_the_group_never_committed_is_an_empty_slot_in_the_detail_never_null():
    live = LiveLag(window=3, history_ms=60_000)
    live.record([(("local", "sparse", "events", 2), Sample(0, 5, 5, 1, "c"))], sampled=[("local", "sparse")])
    [first, second, third] = burrow_api.consumer_detail(live.evaluate(0), CLUSTER, "sparse")["topics"]["events"]
    assert first == second == {"offsets": [], "owner": "", "client_id": "", "current-lag": 0}
    assert third["offsets"][0]["offset"] == 5


def test_with_no_lag_known_maxlag_names_the_first_partition_as_burrow_does():
    live = LiveLag(window=3, history_ms=60_000)
    live.record([(("local", "blind", "events", p), Sample(0, None, None, 1, "c")) for p in (0, 1)],
                sampled=[("local", "blind")])
    status = burrow_api.status_document(live.evaluate(0), CLUSTER, "blind", show_all=True)
    assert status["maxlag"]["partition"] == 0 and status["totallag"] == 0
