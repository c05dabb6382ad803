"""GroupctlDescribeGroup v1 lists a group's pending transactional offsets only for the topics the
principal may Describe, as OffsetFetch filters a group's committed offsets (Describe on the group
alone does not show the names and offsets of topics the principal may not see)."""

from __future__ import annotations

import pytest

from groupctl.coordinator.offsets.messages import PartitionOffset, TxnCommitOffsets
from groupctl.protocol.extensions import GroupctlDescribeGroupRequest
from groupctl.security.acls import (
    AccessControlEntry,
    AclBinding,
    Operation,
    PatternType,
    Permission,
    ResourcePattern,
    ResourceType,
)
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.wire import exchange


@pytest.fixture
def node():
    started = InProcessCoordinator(node_config(authorizer=True, topics=(("jobs", 1), ("secret", 1)))).start()
    yield started
    started.stop()


def grant(node, resource_type, name, operation) -> None:
    binding = AclBinding(ResourcePattern(resource_type, name, PatternType.LITERAL),
                         AccessControlEntry("User:ANONYMOUS", "*", operation, Permission.ALLOW))
    assert node.call(node.node.authorizer.create([binding])) == [None]


def hold_pending_offsets(node, group: str) -> None:
    """A producer's open transaction holds offsets of both topics for `group`."""
    commit = TxnCommitOffsets(group, 77, 0, -1, "", None, (PartitionOffset("jobs", 0, 5), PartitionOffset("secret", 0, 9)))
    node.call(node.node.call_groups(lambda core, token, now: core.txn_commit_offsets(token, commit, now)))


def test_pending_offsets_of_topics_the_principal_may_not_describe_are_left_out(node):
    hold_pending_offsets(node, "etl")
    grant(node, ResourceType.GROUP, "etl", Operation.DESCRIBE)
    grant(node, ResourceType.TOPIC, "jobs", Operation.DESCRIBE)
    answer = exchange(node, GroupctlDescribeGroupRequest[1](group_id="etl", after_generation=-1, max_wait_ms=0), 1)
    assert [(p.topic, p.partition, p.offset) for p in answer.pending_offsets] == [("jobs", 0, 5)]
