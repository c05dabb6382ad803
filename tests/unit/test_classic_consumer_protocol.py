"""Decoding ConsumerProtocolSubscription / ConsumerProtocolAssignment bytes, leniently."""

import pytest

from groupctl.coordinator.consumer_protocol import (
    decode_assignment,
    decode_subscription,
    parse_assignment,
    parse_subscription,
)
from tests.unit.classic_harness import assignment, subscription


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_subscription_topics_decode_at_every_version(version):
    assert decode_subscription(subscription("orders", "payments", version=version)) == ["orders", "payments"]


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_assignment_decodes_to_sorted_partitions_per_topic(version):
    data = assignment({"orders": [2, 0], "payments": [1]}, version=version)
    assert decode_assignment(data) == {"orders": [0, 2], "payments": [1]}


def test_empty_assignment_bytes_are_the_empty_assignment():
    assert parse_assignment(b"") == {}


@pytest.mark.parametrize("garbage", [b"\x00", b"\x00\x01\xff\xff\xff\x7f", b"not kafka at all"])
def test_undecodable_bytes_are_empty_not_an_error(garbage):
    assert parse_subscription(garbage) is None
    assert decode_subscription(garbage) == []
    assert parse_assignment(garbage) is None
    assert decode_assignment(garbage) == {}
