"""Random heartbeat histories against the consumer group's invariants: no partition ever has two
owners, epochs only grow, and once every member keeps heartbeating the group settles with every
subscribed partition owned exactly once."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from groupctl.coordinator.consumer.partitions import count
from tests.unit.consumer_harness import AUDIT, ORDERS, Client, Harness

MEMBERS = ("a", "b", "c", "d")
actions = st.lists(st.tuples(st.sampled_from(["join", "beat", "stubborn", "leave", "wait"]),
                             st.sampled_from(MEMBERS), st.sampled_from([("orders",), ("orders", "audit")])),
                   max_size=40)


def assert_single_owners(harness: Harness) -> None:
    group = harness.core.groups.get("g")
    if group is None:
        return
    seen: set = set()
    for member in group.members.values():
        for block in (member.assigned, member.pending_revocation):
            for topic, partitions in block.items():
                for partition in partitions:
                    assert (topic, partition) not in seen, f"{topic}-{partition} has two owners"
                    seen.add((topic, partition))
    assert group.assignment_epoch <= group.group_epoch


@settings(max_examples=300, deadline=None)
@given(history=actions)
def test_no_partition_ever_has_two_owners_and_the_group_settles_once_everyone_heartbeats(history):
    harness = Harness(session_timeout_ms=45_000)
    clients = {m: Client(harness, m) for m in MEMBERS}
    joined: set[str] = set()
    epochs = [0]
    for action, member_id, topics in history:
        client = clients[member_id]
        if action == "join":
            client.topics, client.epoch, client.owned = topics, 0, {}
            if client.join().error == 0:
                joined.add(member_id)
        elif action == "beat" and member_id in joined:
            if client.beat().error != 0:
                joined.discard(member_id)
        elif action == "stubborn" and member_id in joined:  # heartbeats without revoking anything
            kept = dict(client.owned)
            if client.beat().error != 0:
                joined.discard(member_id)
            else:
                client.owned = kept
        elif action == "leave" and member_id in joined:
            client.leave()
            joined.discard(member_id)
        elif action == "wait":
            harness.advance(20_000)
            group = harness.core.groups.get("g")
            joined &= set(group.members) if group is not None else set()
        assert_single_owners(harness)
        group = harness.core.groups.get("g")
        if group is not None:
            assert group.group_epoch >= epochs[-1]
            epochs.append(group.group_epoch)
    for member_id in joined:
        clients[member_id].catch_up()
    for _ in range(8):  # everyone left heartbeats, revoking as told
        for member_id in sorted(joined):
            clients[member_id].beat()
            assert_single_owners(harness)
    group = harness.core.groups.get("g")
    if group is None or not group.members:
        return
    assert group.state.value == "Stable"
    subscribed = {name for m in group.members.values() for name in m.subscribed_topic_names}
    expected = sum(t.partitions for t in (ORDERS, AUDIT) if t.name in subscribed)
    assert sum(count(m.assigned) for m in group.members.values()) == expected
