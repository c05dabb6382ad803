"""ConsumerGroupHeartbeat (API 68), versions 0-1: a consumer-protocol (KIP-848) member joins,
stays, reconciles and leaves; the core decides (`groupctl.coordinator.consumer.heartbeat`).

Version notes: v1 adds SubscribedTopicRegex, and the client makes its member id (an empty one
is INVALID_REQUEST); in v0 the coordinator makes one for a join without it (KIP-1082). Topic ids
are uuids on the wire and strings in the core; a zero uuid (which kafka-python decodes as None)
names no topic and is left out.

Authorization (`--authorizer`), as Kafka 3.9: Read on the group, else GROUP_AUTHORIZATION_FAILED
(no member id, epoch 0). Kafka 4's Describe checks on the topics a regex subscription resolves
to are not made: a regex subscribes the member to every matching topic.
"""

from __future__ import annotations

import uuid
from functools import lru_cache
from typing import Any, Optional

from groupctl.coordinator.consumer.messages import ConsumerHeartbeat, ConsumerHeartbeatResult
from groupctl.coordinator.consumer.partitions import Assignment, assignment
from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.consumer_group import HEARTBEAT_KEY
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.context import RequestContext
from groupctl.server.handlers.acl_checks import GROUP, allowed


def owned(topic_partitions: Optional[list]) -> Optional[Assignment]:
    if topic_partitions is None:
        return None
    return assignment({str(tp.topic_id): tp.partitions or () for tp in topic_partitions if tp.topic_id is not None})


@api(key=HEARTBEAT_KEY, versions=(0, 1))
async def handle_consumer_group_heartbeat(ctx: RequestContext, request: Any) -> Any:
    if ctx.authorizer is not None and not allowed(ctx, Operation.READ, GROUP, request.group_id):
        return _unchanged(ctx.response_class, int(ErrorCode.GROUP_AUTHORIZATION_FAILED), None, None, 0, 0)
    beat = ConsumerHeartbeat(
        group_id=request.group_id, member_id=request.member_id, member_epoch=request.member_epoch,
        instance_id=request.instance_id, rack_id=request.rack_id, rebalance_timeout_ms=request.rebalance_timeout_ms,
        subscribed_topic_names=(tuple(request.subscribed_topic_names)
                                if request.subscribed_topic_names is not None else None),
        subscribed_topic_regex=request.subscribed_topic_regex if ctx.version >= 1 else None,
        server_assignor=request.server_assignor, owned=owned(request.topic_partitions),
        client_id=ctx.client_id, client_host=ctx.client_host, member_id_from_client=ctx.version >= 1)
    result: ConsumerHeartbeatResult = await ctx.node.call_groups(
        lambda core, token, now: core.consumer_group_heartbeat(token, beat, now))
    response = ctx.response_class
    if result.assignment is None:
        return _unchanged(response, int(result.error), result.error_message, result.member_id, result.member_epoch,
                          result.heartbeat_interval_ms)
    topics = response.Assignment.TopicPartitions
    given = response.Assignment(topic_partitions=[
        topics(topic_id=uuid.UUID(topic_id), partitions=sorted(partitions))
        for topic_id, partitions in sorted(result.assignment.items())])
    return ctx.respond(throttle_time_ms=0, error_code=int(result.error), error_message=result.error_message,
                       member_id=result.member_id, member_epoch=result.member_epoch,
                       heartbeat_interval_ms=result.heartbeat_interval_ms, assignment=given)


def _unchanged(response_class: type, error_code: int, error_message: Optional[str], member_id: Optional[str],
               member_epoch: int, heartbeat_interval_ms: int) -> Any:
    """A response without an assignment, built once per member and epoch: most heartbeats get
    one (the steady case), and building a kafka-python message cost as much as the core's work.
    Sharing is safe: nothing changes a response after its handler returns. Member ids and error
    messages (which may quote a client's regex) come from clients: only short ones are cached."""
    if len(member_id or "") + len(error_message or "") > _CACHED_CHARS:
        return _response(response_class, error_code, error_message, member_id, member_epoch, heartbeat_interval_ms)
    return _cached_response(response_class, error_code, error_message, member_id, member_epoch,
                            heartbeat_interval_ms)


def _response(response_class: type, error_code: int, error_message: Optional[str], member_id: Optional[str],
              member_epoch: int, heartbeat_interval_ms: int) -> Any:
    return response_class(throttle_time_ms=0, error_code=error_code, error_message=error_message,
                          member_id=member_id, member_epoch=member_epoch,
                          heartbeat_interval_ms=heartbeat_interval_ms, assignment=None)


_cached_response = lru_cache(maxsize=4096)(_response)
_CACHED_CHARS = 256
