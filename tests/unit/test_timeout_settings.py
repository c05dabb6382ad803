"""The operator's bound on network waits: `--timeout MS` as parsed, the timeouts a command
config may carry, and which of them a Kafka client or a ZooKeeper session ends up with."""

from __future__ import annotations

import time

import click
import pytest

from groupctl.cli.context import Milliseconds
from groupctl.client.kafka import DEFAULT_TIMEOUT, Bootstrap, KafkaClient
from groupctl.client.security import ClientSecurity, security_from_properties
from groupctl.client.zookeeper import DEFAULT_TIMEOUT_S, ZkSession
from groupctl.errors import BadInput


@pytest.mark.parametrize("given, expected", [("1500", 1500), (" 5000 ", 5000), ("1", 1), (250, 250)])
def test_timeout_takes_a_positive_whole_number_of_milliseconds(given, expected):
    assert Milliseconds().convert(given, None, None) == expected


@pytest.mark.parametrize("given", ["0", "-5", "1.5", "abc", "", "1e3", "²", 0, True])
def test_anything_else_is_a_usage_error(given):
    with pytest.raises(click.BadParameter, match="not a positive whole number of milliseconds"):
        Milliseconds().convert(given, None, None)


def test_a_command_config_may_carry_kafka_consumer_groups_timeouts():
    security = security_from_properties({"request.timeout.ms": "1500", "default.api.timeout.ms": "4000"})
    assert (security.request_timeout_s, security.api_timeout_s) == (1.5, 4.0)


@pytest.mark.parametrize("value", ["0", "-1", "1.5", "soon", ""])
def test_a_bad_timeout_property_is_refused_naming_the_key(value):
    with pytest.raises(BadInput, match="request.timeout.ms=.*positive number of milliseconds"):
        security_from_properties({"request.timeout.ms": value})


@pytest.mark.parametrize("timeout_s, request_s, api_s, expected", [
    (None, None, None, (8.0, 8.0)),  # nothing given: what the caller passed
    (1.5, None, None, (1.5, 1.5)),  # --timeout bounds each exchange and the whole client
    (1.5, 30.0, 60.0, (1.5, 1.5)),  # ... and wins over the command config
    (None, 2.0, None, (2.0, 2.0)),  # request.timeout.ms alone stands for both
    (None, None, 3.0, (3.0, 3.0)),  # so does default.api.timeout.ms
    (None, 2.0, 9.0, (2.0, 9.0)),  # both: each exchange, the whole client
])
def test_which_bound_a_kafka_client_gets(timeout_s, request_s, api_s, expected):
    target = Bootstrap("h:1", ClientSecurity(request_timeout_s=request_s, api_timeout_s=api_s), timeout_s=timeout_s)
    assert target.timeouts(DEFAULT_TIMEOUT) == expected


def test_the_operators_bound_replaces_the_timeout_an_ops_function_passes():
    before = time.monotonic()
    client = KafkaClient(Bootstrap("127.0.0.1:1", timeout_s=1.5), timeout=DEFAULT_TIMEOUT)
    assert client.timeout == 1.5
    assert before + 1.5 <= client.deadline <= time.monotonic() + 1.5
    assert KafkaClient("127.0.0.1:1", timeout=3.0).timeout == 3.0  # a plain address: the caller's


def test_a_watch_keeps_its_own_deadline_and_gets_the_operators_bound_per_exchange():
    client = KafkaClient(Bootstrap("127.0.0.1:1", timeout_s=1.5), deadline=float("inf"))
    assert (client.timeout, client.deadline) == (1.5, float("inf"))


def test_a_zookeeper_session_takes_the_operators_bound_else_its_default():
    assert ZkSession("127.0.0.1:1", timeout_s=1.5).timeout_s == 1.5
    assert ZkSession("127.0.0.1:1", timeout_s=None).timeout_s == DEFAULT_TIMEOUT_S
