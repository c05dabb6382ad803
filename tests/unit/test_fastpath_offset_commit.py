"""The hand-written OffsetCommit v8/v9 codec is kafka-python's codec, only faster.

Properties, at v8 and v9 (the versions kafka-python and librdkafka send), against kafka-python's
own classes:
- a request kafka-python encodes (random names including any Unicode, nulls where kafka-python
  can write them, up to hundreds of topics and partitions, unknown tagged fields in the header,
  after each partition, after each topic and at the end of the body, trailing bytes) decodes to
  what kafka-python decodes;
- the handler answers the fast body exactly as it answers kafka-python's request object;
- a response encodes to kafka-python's bytes exactly;
- every truncation of a request is a `FrameError` (the connection closes);
- on arbitrary corruption, the fast codec never accepts what kafka-python rejects, and whatever
  it accepts kafka-python reads the same way.
"""

from __future__ import annotations

import asyncio
import struct
import uuid
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.protocol.consumer.group import OffsetCommitRequest, OffsetCommitResponse
from kafka.protocol.schemas.fields.codecs.types import UnsignedVarInt32

import groupctl.server.handlers.offset_commit  # noqa: F401  (registers the handler)
from groupctl.coordinator.offsets.messages import CommitOffsetsResult, PartitionError
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.records import TopicRecord
from groupctl.coordinator.results import Result
from groupctl.protocol import fastpath, framing, schemas, validation
from groupctl.protocol.registry import REGISTRY, ApiSpec
from groupctl.server.context import RequestContext
from tests.support.corruption import corrupt

VERSIONS = st.sampled_from([8, 9])
INT64 = st.integers(-(2**63), 2**63 - 1)
INT32 = st.integers(-(2**31), 2**31 - 1)
INT16 = st.integers(-(2**15), 2**15 - 1)
# hypothesis's text never holds surrogates: always valid UTF-8. Long strings need multi-byte
# length varints (128+ bytes).
TEXT = st.text(max_size=20) | st.text(min_size=40, max_size=200)
NULLABLE_TEXT = st.none() | TEXT
TAGS = st.dictionaries(st.integers(0, 2**31 - 1), st.binary(max_size=150), max_size=4)
PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_REQUEST = OffsetCommitRequest
_TOPIC = _REQUEST.OffsetCommitRequestTopic
_PARTITION = _TOPIC.OffsetCommitRequestPartition
_RESPONSE_TOPIC = OffsetCommitResponse.OffsetCommitResponseTopic
_RESPONSE_PARTITION = _RESPONSE_TOPIC.OffsetCommitResponsePartition


def breaks_the_schema(request: Any, version: int) -> bool:
    """A null where OffsetCommit's schema allows none (framing refuses such a request)."""
    return validation.checker(OffsetCommitRequest, version)(request) is not None


async def _unused_handler(ctx, request):  # decoding never reaches a handler
    raise AssertionError("not called")


OFFSET_COMMIT_ONLY = {8: ApiSpec(8, 2, 10, _unused_handler, OffsetCommitRequest)}

# --- building frames: kafka-python's bytes, with unknown tags where its empty sections are -------

partitions_strategy = st.builds(
    _PARTITION,
    partition_index=INT32,
    committed_offset=INT64,
    committed_leader_epoch=INT32,
    committed_metadata=NULLABLE_TEXT,
)
topics_strategy = st.builds(
    _TOPIC,
    name=NULLABLE_TEXT,
    partitions=st.none() | st.lists(partitions_strategy, max_size=5),
)


def tag_section(tags: dict[int, bytes]) -> bytes:
    out = [UnsignedVarInt32.encode(len(tags))]
    for tag, value in sorted(tags.items()):
        out += [UnsignedVarInt32.encode(tag), UnsignedVarInt32.encode(len(value)), value]
    return b"".join(out)


def no_tags(*_: Any) -> dict[int, bytes]:
    return {}


def body(version: int, group: dict[str, Any], topics: list | None) -> bytes:
    """kafka-python's encoding of a request body."""
    return bytes(_REQUEST[version](**group, topics=topics).encode(version=version))


def tagged_frame(
    version: int,
    correlation_id: int,
    client_id: str | None,
    group: dict[str, Any],
    topics: list | None,
    tags: Callable[..., dict[int, bytes]] = no_tags,
) -> bytes:
    """The request frame kafka-python writes, with `tags(place...)` as the unknown tags of each
    tag section (kafka-python writes every one of them empty). The pieces are cut out of
    kafka-python's encodings of smaller requests; that they are kafka-python's layout is checked
    by reassembling the untagged frame."""
    request = _REQUEST[version](**group, topics=topics)
    request.with_header(correlation_id=correlation_id, client_id=client_id)
    reference = bytes(request.encode(version=version, header=True))
    header_tags_at = 8 + 2 + (len(client_id.encode()) if client_id is not None else 0)
    assert reference[header_tags_at] == 0

    def assemble(tags: Callable[..., dict[int, bytes]]) -> bytes:
        prefix = body(version, group, None)[:-2]  # null topics (0x00), body tags (0x00)
        out = [reference[:header_tags_at], tag_section(tags("header")), prefix]
        if topics is None:
            out.append(b"\0")
        else:
            out.append(UnsignedVarInt32.encode(len(topics) + 1))
            for t, topic in enumerate(topics):
                head = topic_bytes(_TOPIC(name=topic.name, partitions=None))[:-2]
                out.append(head)
                if topic.partitions is None:
                    out.append(b"\0")
                else:
                    out.append(UnsignedVarInt32.encode(len(topic.partitions) + 1))
                    for p, partition in enumerate(topic.partitions):
                        encoded = topic_bytes(_TOPIC(name=topic.name, partitions=[partition]))
                        out.append(encoded[len(head) + 1:-2])  # without its tags, nor the topic's
                        out.append(tag_section(tags("partition", t, p)))
                out.append(tag_section(tags("topic", t)))
        out.append(tag_section(tags("body")))
        return b"".join(out)

    def topic_bytes(topic: Any) -> bytes:
        prefix = body(version, group, None)[:-2]
        return body(version, group, [topic])[len(prefix) + 1:-1]

    assert assemble(no_tags) == reference
    return assemble(tags)


@st.composite
def requests(draw, versions=VERSIONS, topics=st.none() | st.lists(topics_strategy, max_size=5)):
    """(version, frame) of an OffsetCommit request as kafka-python encodes it, with unknown
    tagged fields in any of its tag sections."""
    version = draw(versions)
    group = dict(
        group_id=draw(NULLABLE_TEXT),
        generation_id_or_member_epoch=draw(INT32),
        member_id=draw(NULLABLE_TEXT),
        group_instance_id=draw(NULLABLE_TEXT),
    )
    drawn = {}

    def tags(*place: Any) -> dict[int, bytes]:
        if place not in drawn:
            drawn[place] = draw(TAGS)
        return drawn[place]

    frame = tagged_frame(version, draw(INT32), draw(NULLABLE_TEXT), group, draw(topics), tags)
    return version, frame


DECODE_ERRORS = (IndexError, struct.error, ValueError, TypeError, OverflowError)


def view(decoded: Any) -> tuple:
    """kafka-python's decoded request as the plain tuples the fast body compares equal to."""
    topics = None
    if decoded.topics is not None:
        topics = [
            (t.name, None if t.partitions is None else [
                (p.partition_index, p.committed_offset, p.committed_leader_epoch, p.committed_metadata)
                for p in t.partitions])
            for t in decoded.topics
        ]
    return (decoded.header.client_id, decoded.group_id, decoded.generation_id_or_member_epoch,
            decoded.member_id, decoded.group_instance_id, topics)


def unknown_tags(decoded: Any) -> tuple:
    """Every unknown tag kafka-python kept, level by level."""
    nested = []
    for t in decoded.topics or ():
        nested.append((t.unknown_tags, [p.unknown_tags for p in t.partitions or ()]))
    return decoded.header.unknown_tags, decoded.unknown_tags, nested


def kafka_python_reading(frame: bytes, version: int) -> tuple | Exception:
    """kafka-python's view plus the unknown tags it kept, or the exception it raised."""
    try:
        decoded = OffsetCommitRequest.decode(frame, version=version, header=True)
    except DECODE_ERRORS as exc:
        return exc
    return view(decoded), unknown_tags(decoded)


def fast_view(frame: bytes, version: int) -> tuple:
    client_id, request = fastpath.decode_offset_commit_request(frame, version)
    return (client_id, *request)


# --- requests ------------------------------------------------------------------------------------

@PROPERTY
@given(requests(), st.binary(max_size=8))
def test_a_request_decodes_to_exactly_what_kafka_python_decodes(version_frame, trailing):
    version, frame = version_frame
    frame += trailing
    decoded = OffsetCommitRequest.decode(frame, version=version, header=True)
    assert fast_view(frame, version) == view(decoded)


@PROPERTY
@given(VERSIONS, st.data())
def test_unknown_tags_sit_where_kafka_python_reads_them_and_are_skipped(version, data):
    """The frames the other properties use carry their tags where kafka-python expects them:
    kafka-python reads back each tag at the level it was put."""
    drawn: dict[tuple, dict[int, bytes]] = {}

    def tags(*place: Any) -> dict[int, bytes]:
        drawn[place] = data.draw(TAGS)
        return drawn[place]

    topics = data.draw(st.lists(topics_strategy, min_size=1, max_size=3))
    group = dict(group_id="g", generation_id_or_member_epoch=1, member_id="m", group_instance_id=None)
    frame = tagged_frame(version, 1, "c", group, topics, tags)
    decoded = OffsetCommitRequest.decode(frame, version=version, header=True)

    def kept(place: tuple) -> dict[str, bytes] | None:
        return {f"_{tag}": value for tag, value in drawn[place].items()} or None

    assert unknown_tags(decoded) == (
        kept(("header",)),
        kept(("body",)),
        [(kept(("topic", t)), [kept(("partition", t, p)) for p in range(len(topic.partitions or ()))])
         for t, topic in enumerate(topics)],
    )
    assert fast_view(frame, version) == view(decoded)


@PROPERTY
@given(requests())
def test_framing_serves_offset_commit_v8_v9_through_the_fast_decoder_with_the_same_header(version_frame):
    version, frame = version_frame
    reference = OffsetCommitRequest.decode(frame, version=version, header=True)
    if breaks_the_schema(reference, version):
        with pytest.raises(framing.FrameError, match="non-nullable"):
            framing.decode_request(frame, OFFSET_COMMIT_ONLY)
        return
    decoded = framing.decode_request(frame, OFFSET_COMMIT_ONLY)
    assert isinstance(decoded.body, fastpath.OffsetCommitRequestBody)
    assert (decoded.version, decoded.correlation_id, decoded.client_id) == (
        version, reference.header.correlation_id, reference.header.client_id or "")
    assert decoded.body == view(reference)[1:]
    assert [t.topic_id for t in decoded.body.topics or ()] == [t.topic_id for t in reference.topics or ()]


def test_hundreds_of_topics_and_partitions_with_long_names_decode_as_kafka_python_decodes():
    """Counts and lengths of 128 and more take multi-byte varints."""
    partitions = [_PARTITION(partition_index=i, committed_offset=2**40 + i, committed_leader_epoch=i % 7,
                             committed_metadata=None if i % 3 else "ü" * (i % 150))
                  for i in range(300)]
    topics = [_TOPIC(name=f"topic-{i}-" + "ß" * (i % 90), partitions=partitions[: (i * 37) % 300])
              for i in range(200)]
    group = dict(group_id="é" * 200, generation_id_or_member_epoch=7, member_id="m" * 130,
                 group_instance_id="host-1")
    for version in (8, 9):
        frame = tagged_frame(version, 1, "client-" * 30, group, topics,
                             lambda *place: {len(place): b"v" * (1 if place[0] == "partition" else 200)})
        decoded = OffsetCommitRequest.decode(frame, version=version, header=True)
        assert fast_view(frame, version) == view(decoded)
        assert sum(len(t.partitions) for t in decoded.topics) > 20_000


@PROPERTY
@given(requests(topics=st.lists(topics_strategy, max_size=3)))
def test_every_truncation_of_a_request_is_a_frame_error(version_frame):
    _, frame = version_frame
    for cut in range(len(frame)):
        with pytest.raises(framing.FrameError):
            framing.decode_request(frame[:cut], OFFSET_COMMIT_ONLY)


@PROPERTY
@given(requests(topics=st.lists(topics_strategy, max_size=3)), st.data())
def test_corruption_is_never_accepted_where_kafka_python_rejects_it(version_frame, data):
    version, frame = version_frame
    corrupted = corrupt(frame, data)
    expected = kafka_python_reading(corrupted, version)
    if isinstance(expected, Exception):
        with pytest.raises(framing.FrameError):
            framing.decode_request(corrupted, OFFSET_COMMIT_ONLY)
        return
    try:
        actual = fast_view(corrupted, version)
    except DECODE_ERRORS as exc:
        # Stricter than kafka-python only where fastpath's docstring says: kafka-python read
        # past the end of the frame (what it returns changes when bytes are appended), or a
        # varint ran longer than 5 bytes.
        reads_past_the_end = kafka_python_reading(corrupted + b"\0", version) != expected
        assert reads_past_the_end or "varint longer than 5 bytes" in str(exc)
        return
    assert actual == expected[0]


def test_a_tag_value_cut_short_by_the_frame_end_closes_the_connection_where_kafka_python_reads_on():
    group = dict(group_id="g", generation_id_or_member_epoch=1, member_id="m", group_instance_id=None)
    topics = [_TOPIC(name="orders", partitions=[_PARTITION(
        partition_index=0, committed_offset=5, committed_leader_epoch=-1, committed_metadata=None)])]
    frame = tagged_frame(9, 1, "c", group, topics,
                         lambda *place: {5: b"abcdef"} if place == ("body",) else {})
    cut = frame[:-3]  # the body's last tag keeps "abc" of its declared 6 bytes
    assert OffsetCommitRequest.decode(cut, version=9, header=True).unknown_tags == {"_5": b"abc"}
    with pytest.raises(framing.FrameError):
        framing.decode_request(cut, OFFSET_COMMIT_ONLY)


# The topic count+1 = 2 in six bytes (zero-padded), and a run of continuation bytes.
@pytest.mark.parametrize("count", [b"\x82\x80\x80\x80\x80\x00", b"\xff\xff\xff\xff\xff\xff"])
def test_a_varint_longer_than_five_bytes_is_a_frame_error(count):
    group = dict(group_id="g", generation_id_or_member_epoch=1, member_id="m", group_instance_id=None)
    frame = tagged_frame(8, 1, "c", group, [_TOPIC(name="t", partitions=[])])
    topics_at = 8 + 2 + 1 + 1 + 2 + 4 + 2 + 1  # header, its tags, group, generation, member, instance
    assert frame[topics_at:topics_at + 2] == b"\x02\x02"
    with pytest.raises(framing.FrameError):
        framing.decode_request(frame[:topics_at] + count + frame[topics_at + 1:], OFFSET_COMMIT_ONLY)


# --- the handler reads the fast body as it reads kafka-python's request ------------------------

ORDERS = TopicRecord(name="orders", topic_id=str(uuid.uuid4()), replicas={0: [0], 1: [0], 2: [0]})
PAYMENTS = TopicRecord(name="payments", topic_id=str(uuid.uuid4()), replicas={0: [0]})


class FakeNode:
    """Topics "orders" (partitions 0-2) and "payments" (0); the core answers each committed
    partition with the error `errors` gives it."""

    config = logs = None

    def __init__(self, errors: Callable[[str, int], ErrorCode]) -> None:
        self.errors = errors
        self.commits: list[Any] = []
        self.topics = self

    def get(self, name: str) -> TopicRecord | None:
        return {"orders": ORDERS, "payments": PAYMENTS}.get(name)

    def now_ms(self) -> int:
        return 0

    async def call_groups(self, op: Callable[[Any, Any, int], Result]) -> Any:
        return op(self, "token", 0).replies[0].response

    def commit_offsets(self, token: Any, commit: Any, now_ms: int) -> Result:
        self.commits.append(commit)
        answer = tuple(PartitionError(o.topic, o.partition, self.errors(o.topic, o.partition))
                       for o in commit.offsets)
        return Result().reply(token, CommitOffsetsResult(answer))


def handle(request: Any, version: int, errors: Callable[[str, int], ErrorCode]) -> tuple[list, bytes]:
    """(commits the core was asked for, the framed response) of the registered handler."""
    node = FakeNode(errors)
    ctx = RequestContext(node=node, api_key=8, version=version, correlation_id=5, client_id="c",
                         client_host="/127.0.0.1", response_class=schemas.response_class(8)[version])
    response = asyncio.run(REGISTRY[8].handler(ctx, request))
    return node.commits, framing.encode_response(response, 5)


known_topics = st.builds(
    _TOPIC,
    name=st.sampled_from(["orders", "payments", "ghost", ""]) | st.none(),
    partitions=st.lists(st.builds(_PARTITION, partition_index=st.integers(-1, 3), committed_offset=INT64,
                                  committed_leader_epoch=INT32,
                                  committed_metadata=st.none() | st.sampled_from(["", "m", "x" * 4097])),
                        max_size=4),
)


@PROPERTY
@given(requests(topics=st.lists(known_topics, max_size=4)),
       st.sampled_from([ErrorCode.NONE, ErrorCode.ILLEGAL_GENERATION, ErrorCode.REBALANCE_IN_PROGRESS]))
def test_the_handler_answers_the_fast_body_exactly_as_kafka_pythons_request(version_frame, core_error):
    version, frame = version_frame
    reference = OffsetCommitRequest.decode(frame, version=version, header=True)
    if breaks_the_schema(reference, version):  # refused before any handler sees it
        with pytest.raises(framing.FrameError, match="non-nullable"):
            framing.decode_request(frame, OFFSET_COMMIT_ONLY)
        return
    fast = framing.decode_request(frame, OFFSET_COMMIT_ONLY).body
    assert isinstance(fast, fastpath.OffsetCommitRequestBody)
    assert handle(fast, version, lambda *_: core_error) == handle(reference, version, lambda *_: core_error)


# --- responses -----------------------------------------------------------------------------------

response_topics = st.none() | st.lists(
    st.builds(
        _RESPONSE_TOPIC,
        name=NULLABLE_TEXT,
        partitions=st.none() | st.lists(
            st.builds(_RESPONSE_PARTITION, partition_index=INT32, error_code=INT16), max_size=5),
    ),
    max_size=5,
)


def kafka_python_response_bytes(response: Any, correlation_id: int) -> bytes:
    copy = OffsetCommitResponse[response.version](throttle_time_ms=response.throttle_time_ms,
                                                  topics=response.topics)
    copy.with_header(correlation_id=correlation_id)
    return bytes(copy.encode(header=True, framed=True))


@PROPERTY
@given(VERSIONS, INT32, INT32, response_topics)
def test_a_response_encodes_to_kafka_pythons_bytes(version, correlation_id, throttle_time_ms, topics):
    response = OffsetCommitResponse[version](throttle_time_ms=throttle_time_ms, topics=topics)
    expected = kafka_python_response_bytes(response, correlation_id)
    assert fastpath.encode_offset_commit_response(response, correlation_id) == expected
    assert framing.encode_response(response, correlation_id) == expected


def test_a_response_with_hundreds_of_topics_and_long_names_encodes_to_kafka_pythons_bytes():
    partitions = [_RESPONSE_PARTITION(partition_index=i, error_code=i % 90) for i in range(200)]
    topics = [_RESPONSE_TOPIC(name="ñ" * i, partitions=partitions[:i]) for i in range(150)]
    for version in (8, 9):
        response = OffsetCommitResponse[version](throttle_time_ms=0, topics=topics)
        assert framing.encode_response(response, 3) == kafka_python_response_bytes(response, 3)


def test_unknown_tags_of_a_response_object_are_not_written_as_kafka_python_does_not():
    topics = [_RESPONSE_TOPIC(name="orders", partitions=[
        _RESPONSE_PARTITION(partition_index=0, error_code=0, _5=b"p")], _6=b"t")]
    response = OffsetCommitResponse[9](throttle_time_ms=0, topics=topics, _7=b"r")
    expected = OffsetCommitResponse[9](throttle_time_ms=0, topics=topics, _7=b"r")
    expected.with_header(correlation_id=3)
    assert framing.encode_response(response, 3) == bytes(expected.encode(header=True, framed=True))


@pytest.mark.parametrize("partition_index, error_code", [(2**31, 0), (0, 2**15)])
def test_an_out_of_range_field_fails_to_encode_as_with_kafka_python(partition_index, error_code):
    def response():
        topics = [_RESPONSE_TOPIC(name="orders", partitions=[
            _RESPONSE_PARTITION(partition_index=partition_index, error_code=error_code)])]
        return OffsetCommitResponse[8](throttle_time_ms=0, topics=topics)

    with pytest.raises(struct.error):
        kafka_python_response_bytes(response(), 7)
    with pytest.raises(struct.error):
        framing.encode_response(response(), 7)


# --- what the fast path leaves to kafka-python -------------------------------------------------

def test_only_offset_commit_versions_8_and_9_have_a_fast_decoder():
    assert [v for v in range(2, 11) if fastpath.request_decoder(8, v)] == [8, 9]


@pytest.mark.parametrize("version", [2, 7, 10])
def test_other_offset_commit_responses_are_encoded_by_kafka_python(version):
    def response():
        topic = _RESPONSE_TOPIC(name="orders", topic_id=uuid.UUID(int=7), partitions=[
            _RESPONSE_PARTITION(partition_index=1, error_code=0)])
        return OffsetCommitResponse[version](throttle_time_ms=0, topics=[topic])

    assert fastpath.encode_response(response(), 3) is None
    expected = response()
    expected.with_header(correlation_id=3)
    assert framing.encode_response(response(), 3) == bytes(expected.encode(header=True, framed=True))
