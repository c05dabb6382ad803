"""`lag serve`'s HTTP server on loopback: Burrow's routes and error documents, HEAD, refused
methods, and /metrics in Prometheus text listing exactly what docs/metrics.md documents."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from groupctl.errors import OpsError
from groupctl.lag.live import Evaluation, LiveLag
from groupctl.lag.rules import Rules
from groupctl.lag.window import Sample
from groupctl.ops.lag_http import LagHttpServer
from groupctl.ops.lag_schedule import RoundOutcome
from groupctl.ops.lag_record import RoundSample
from groupctl.ops.lag_serve_metrics import LagServeMetrics

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def served():
    live = LiveLag(window=2, history_ms=60_000)
    for t in range(3):
        live.record([(("local", "billing", "events", 0), Sample(1000 * t, 5, 5 + t, 0, None)),
                     (("local", "billing", "events", 1), Sample(1000 * t, None, 9, 0, None))],  # lag unknown
                    sampled=[("local", "billing")])
    evaluation = live.evaluate(2_000)
    ready = [False]
    metrics = LagServeMetrics(lambda: evaluation)
    metrics.round(RoundOutcome(1, RoundSample((), 1, ()), None, None, 0.02, 0), 1_700_000_000.0)
    metrics.notified("sent")
    server = LagHttpServer("127.0.0.1", 0, cluster="local", settings={"class-name": "groupctl"},
                           latest=lambda: evaluation, registry=metrics.registry, ready=lambda: ready[0])
    server.start()
    server.ready_flag = ready
    yield server
    server.close()


def get(server, path: str, method: str = "GET") -> tuple[int, str, str]:
    request = urllib.request.Request(server.url + path, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers["Content-Type"], response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["Content-Type"], exc.read().decode()


def test_burrows_routes_answer_json_with_the_request_named(served):
    code, kind, body = get(served, "/v3/kafka/")
    assert (code, kind) == (200, "application/json")
    assert json.loads(body) == {"error": False, "message": "cluster list returned", "clusters": ["local"],
                                "request": {"url": "/v3/kafka/", "host": json.loads(body)["request"]["host"]}}
    assert json.loads(get(served, "/v3/kafka/local/consumer")[2])["consumers"] == ["billing"]
    code, _, body = get(served, "/v3/kafka/local/consumer/billing/status")
    assert code == 200 and json.loads(body)["status"]["status"] == "ERR"
    assert json.loads(get(served, "/v3/kafka/local")[2])["module"] == {"class-name": "groupctl"}
    assert json.loads(get(served, "/v3/kafka/local/consumer/billing")[2])["topics"]["events"][0]["current-lag"] == 2


@pytest.mark.parametrize("path, message", [
    ("/v3/kafka/elsewhere/consumer", "cluster not found"),
    ("/v3/kafka/local/consumer/ghost", "cluster or consumer not found"),
    ("/v3/kafka/local/topic", "invalid request type"),
    ("/v2/kafka", "invalid request type"),
    ("/v3/kafka/local/consumer/billing/status/more", "invalid request type"),
])
def test_what_is_not_there_is_a_404_with_burrows_error_document(served, path, message):
    code, _, body = get(served, path)
    assert code == 404 and json.loads(body)["error"] is True and json.loads(body)["message"] == message


def test_a_status_in_a_cluster_not_served_is_burrows_notfound_too(served):
    code, _, body = get(served, "/v3/kafka/elsewhere/consumer/billing/lag")
    assert code == 404 and json.loads(body)["error"] is False
    assert json.loads(body)["status"]["status"] == "NOTFOUND" and json.loads(body)["status"]["cluster"] == "elsewhere"


def test_readiness_is_starting_until_a_round_was_evaluated(served):
    assert get(served, "/burrow/admin/ready")[::2] == (503, "STARTING")
    served.ready_flag[0] = True
    assert get(served, "/burrow/admin/ready")[::2] == (200, "READY")


def test_an_unknown_group_status_is_a_404_notfound_and_a_group_name_is_url_decoded(served):
    code, _, body = get(served, "/v3/kafka/local/consumer/gh%2Fost/status")
    assert code == 404 and json.loads(body)["status"]["group"] == "gh/ost"
    assert json.loads(body)["status"]["status"] == "NOTFOUND"


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
def test_every_method_but_get_and_head_is_a_405_naming_those_two(served, method):
    request = urllib.request.Request(served.url + "/v3/kafka", method=method)
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 405 and refused.value.headers["Allow"] == "GET, HEAD"
    assert json.loads(refused.value.read())["message"] == "method not allowed"


def test_an_ipv6_loopback_is_served():
    try:
        server = LagHttpServer("::1", 0, cluster="local", settings={}, latest=lambda: Evaluation(0, 3, Rules.GROUPCTL),
                               registry=LagServeMetrics(lambda: Evaluation(0, 3, Rules.GROUPCTL)).registry)
    except OpsError as exc:
        pytest.fail(f"::1 refused: {exc}")
    server.start()
    try:
        assert server.url.startswith("http://[::1]:")
        assert json.loads(get(server, "/v3/kafka")[2])["clusters"] == ["local"]
    finally:
        server.close()


def test_head_answers_headers_only(served):
    code, kind, body = get(served, "/v3/kafka", method="HEAD")
    assert (code, kind, body) == (200, "application/json", "")
    assert get(served, "/burrow/admin")[2] == "GOOD"


def test_metrics_report_lag_status_and_the_samplers_health_and_leave_an_unknown_lag_out(served):
    code, kind, text = get(served, "/metrics")
    assert code == 200 and kind.startswith("text/plain")
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for family in text_string_to_metric_families(text) for s in family.samples}
    p0 = (("cluster", "local"), ("group", "billing"), ("partition", "0"), ("topic", "events"))
    p1 = (("cluster", "local"), ("group", "billing"), ("partition", "1"), ("topic", "events"))
    assert samples[("groupctl_consumer_lag", p0)] == 2 and ("groupctl_consumer_lag", p1) not in samples
    assert samples[("groupctl_consumer_partition_status", p0)] == 4  # STOP
    assert samples[("groupctl_consumer_status", (("cluster", "local"), ("group", "billing")))] == 3  # ERR
    assert samples[("groupctl_consumer_total_lag", (("cluster", "local"), ("group", "billing")))] == 2
    assert samples[("groupctl_lag_rounds_total", (("outcome", "ok"),))] == 1
    assert samples[("groupctl_lag_notifications_total", (("outcome", "sent"),))] == 1
    assert samples[("groupctl_lag_last_round_timestamp_seconds", ())] == 1_700_000_000.0


def test_docs_metrics_lists_exactly_the_metrics_lag_serve_exports_with_their_types_and_labels(served):
    _, _, text = get(served, "/metrics")
    exported = {}
    for family in text_string_to_metric_families(text):
        if family.name.endswith("_created"):  # prometheus-client's companions of counters and histograms
            continue
        name = family.name + "_total" if family.type == "counter" else family.name
        labels = {key for sample in family.samples for key in sample.labels} - {"le"}
        exported[name] = (family.type, labels)
    docs = (ROOT / "docs" / "metrics.md").read_text().split("## Consumer lag: `groupctl lag serve`", 1)[1]
    docs = docs.split("\n## ", 1)[0]
    documented = {name: (kind, set(re.findall(r"`(\w+)`", labels)))
                  for name, kind, labels in re.findall(r"^\| `(groupctl_\w+)` \| (\w+) \|([^|]*)\|", docs, flags=re.M)}
    assert documented == exported


def test_a_round_counts_by_outcome_and_only_a_round_that_sampled_moves_the_staleness_clock():
    metrics = LagServeMetrics(lambda: Evaluation(0, 3, Rules.GROUPCTL))  # nothing known yet
    sampled = RoundSample((), 1, ())
    metrics.round(RoundOutcome(1, sampled, None, None, 0.1, 0), 100.0)
    metrics.round(RoundOutcome(2, sampled, None, "cannot write the round's file: disk full", 0.1, 0), 200.0)
    metrics.round(RoundOutcome(3, None, None, "cannot reach bootstrap", 0.1, 0), 300.0)
    value = metrics.registry.get_sample_value
    assert {kind: value("groupctl_lag_rounds_total", {"outcome": kind}) for kind in ("ok", "unwritten", "failed")} \
        == {"ok": 1, "unwritten": 1, "failed": 1}
    assert value("groupctl_lag_last_round_timestamp_seconds") == 200.0
