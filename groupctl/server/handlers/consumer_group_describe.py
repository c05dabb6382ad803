"""ConsumerGroupDescribe (API 69), versions 0-1: consumer groups as Kafka 4 admin clients and
kafka-consumer-groups.sh describe them (`groupctl.coordinator.consumer.describe`).

An unknown or classic group is GROUP_ID_NOT_FOUND, on which admin clients fall back to
DescribeGroups. v1 adds each member's MemberType (1: a consumer-protocol member, 0: a
classic-protocol member of a group being migrated). Authorized
operations are not computed: -2^31, "not requested", whatever was asked (a deliberate
difference: Kafka computes them when asked).

Authorization (`--authorizer`), as Kafka: Describe on each group, else an entry with
GROUP_AUTHORIZATION_FAILED (listed first, then the groups described, as Kafka orders them).

A group id named more than once is described once (a deliberate difference: `validation.distinct`).
"""

from __future__ import annotations

import uuid
from typing import Any

from groupctl.coordinator.consumer.messages import DescribedConsumerGroup, DescribedTopic
from groupctl.protocol.consumer_group import DESCRIBE_KEY
from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.protocol.validation import distinct
from groupctl.security.acls import Operation
from groupctl.server.context import RequestContext
from groupctl.server.handlers.acl_checks import GROUP, allowed_names

CLASSIC_MEMBER, CONSUMER_MEMBER = 0, 1
NOT_REQUESTED = -2**31


@api(key=DESCRIBE_KEY, versions=(0, 1))
async def handle_consumer_group_describe(ctx: RequestContext, request: Any) -> Any:
    request.group_ids = distinct(request.group_ids)
    describable = allowed_names(ctx, Operation.DESCRIBE, GROUP, request.group_ids)
    group_ids = tuple(g for g in request.group_ids if g in describable)
    described: tuple[DescribedConsumerGroup, ...] = await ctx.node.call_groups(
        lambda core, token, now: core.describe_consumer_groups(token, group_ids, now))
    group_class = ctx.response_class.DescribedGroup
    member_class = group_class.Member
    assignment_class = member_class.Assignment

    def topics(block: tuple[DescribedTopic, ...]) -> Any:
        return assignment_class(topic_partitions=[
            assignment_class.TopicPartitions(topic_id=uuid.UUID(t.topic_id), topic_name=t.name,
                                             partitions=list(t.partitions)) for t in block])

    groups = [group_class(error_code=int(ErrorCode.GROUP_AUTHORIZATION_FAILED), error_message=None, group_id=g,
                          group_state="", group_epoch=0, assignment_epoch=0, assignor_name="", members=[],
                          authorized_operations=NOT_REQUESTED)
              for g in request.group_ids if g not in describable]
    for g in described:
        members = []
        for m in g.members:
            fields = dict(member_id=m.member_id, instance_id=m.instance_id, rack_id=m.rack_id,
                          member_epoch=m.member_epoch, client_id=m.client_id, client_host=m.client_host,
                          subscribed_topic_names=list(m.subscribed_topic_names),
                          subscribed_topic_regex=m.subscribed_topic_regex, assignment=topics(m.assignment),
                          target_assignment=topics(m.target))
            if ctx.version >= 1:
                fields["member_type"] = CLASSIC_MEMBER if m.classic_protocol else CONSUMER_MEMBER
            members.append(member_class(**fields))
        groups.append(group_class(error_code=int(g.error), error_message=g.error_message, group_id=g.group_id,
                                  group_state=g.state, group_epoch=g.group_epoch, assignment_epoch=g.assignment_epoch,
                                  assignor_name=g.assignor, members=members, authorized_operations=NOT_REQUESTED))
    return ctx.respond(throttle_time_ms=0, groups=groups)
