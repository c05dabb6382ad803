"""DeleteTopics (20), v1-6.

Version notes: v4 is flexible; v5 adds error messages; v6 names topics by name or id.

Semantics: a deleted topic's partition logs, its configs (`/config/topics/<t>`) and every group's
committed offsets for it go with it, as in Kafka. Deletion is immediate (Kafka deletes asynchronously and reports the topic as
"marked for deletion" meanwhile). Of concurrent requests deleting one topic exactly one deletes
it; the others get UNKNOWN_TOPIC_OR_PARTITION (UNKNOWN_TOPIC_ID when they named it by id), as
they would a moment later.

Authorization (`--authorizer`), as Kafka: Delete on each topic, else TOPIC_AUTHORIZATION_FAILED
(before the unknown-topic check); a topic named by id also needs Describe, else it answers
TOPIC_AUTHORIZATION_FAILED without its name.
"""

import uuid

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.handlers.acl_checks import TOPIC, allowed
from groupctl.server.topics import TopicError

ZERO_UUID = uuid.UUID(int=0)


def _targets(ctx, request):
    """(name, topic_id) pairs in request order."""
    if ctx.version >= 6:
        return [(t.name, t.topic_id) for t in request.topics]
    return [(name, None) for name in request.topic_names]


def _unknown_id(entry, topic_id):
    return entry(name=None, topic_id=topic_id, error_code=ErrorCode.UNKNOWN_TOPIC_ID,
                 error_message=f"no topic with id {topic_id}")


@api(key=20, versions=(1, 6))
async def handle_delete_topics(ctx, request):
    entry = ctx.response_class.DeletableTopicResult
    results = []
    for name, topic_id in _targets(ctx, request):
        by_id = name is None and topic_id not in (None, ZERO_UUID)
        if by_id:
            record = ctx.node.topics.by_id(str(topic_id))
            if record is None:
                results.append(_unknown_id(entry, topic_id))
                continue
            name = record.name
            if not allowed(ctx, Operation.DESCRIBE, TOPIC, name):
                results.append(entry(name=None, topic_id=topic_id, error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                                     error_message="Topic authorization failed."))
                continue
        if not allowed(ctx, Operation.DELETE, TOPIC, name):
            results.append(entry(name=name, topic_id=topic_id or ZERO_UUID,
                                 error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                                 error_message="Topic authorization failed."))
            continue
        try:
            record = await ctx.node.delete_topic(name)
        except TopicError as exc:
            if by_id and exc.code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
                results.append(_unknown_id(entry, topic_id))  # deleted meanwhile by another request
            else:
                results.append(entry(name=name, topic_id=topic_id or ZERO_UUID, error_code=exc.code,
                                     error_message=str(exc)))
            continue
        results.append(entry(name=name, topic_id=uuid.UUID(record.topic_id), error_code=0, error_message=None))
    return ctx.respond(throttle_time_ms=0, responses=results)
