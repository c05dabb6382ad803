"""The offset-reset planner: scopes, targets and plans, as pure functions over fetched data.

Mirrors kafka-consumer-groups.sh `--reset-offsets`, which operators' fingers know; the targets,
time zones, clamping and the CSV format are documented for users in docs/commands.md.

Invariants:
- Pure: `plan_reset` gets the committed offsets, earliest/latest offsets and timestamp lookups
  already fetched (`groupctl.ops.offsets` fetches them), so every target and scope is
  unit-testable. Input errors raise `BadInput` with one line naming what was wrong.
- Numbers fit the wire: partitions are int32, offsets and shifts int64; every parser and target
  checks this, so an out-of-range number is `BadInput` before anything is sent.
- Every topic and partition a scope or a plan file names must exist; errors about a plan file's
  partitions name the file (`PlanOffsets.source`).
- Offsets the operator supplies (to-offset, shift-by, from-file) are clamped to [earliest, latest]
  and the plan records what was asked (`PlannedOffset.clamped_from`), as Kafka warns about it. A
  time with no record at or after it resets to latest; a time before the epoch is sent as 0
  (ListOffsets reads negative times as special values); to-current resets a partition without a
  committed offset to latest, as Kafka does.
- Each planned offset carries its partition's current leader epoch from Metadata
  (`PlanInputs.leader_epochs`; None when the cluster reports none), and is committed with it.
  A consumer that resumes there validates its position against that epoch (KIP-320), and the
  epoch's end offset is at least the log end at planning time, so no offset in the plan can look
  truncated. (kafka-consumer-groups.sh commits no epoch: `new OffsetAndMetadata(offset)`.)

Deliberate differences from kafka-consumer-groups.sh: `--all-topics` skips committed partitions
of topics that no longer exist (instead of failing); datetimes accept 1-9 fraction digits and
`Z`/`±hh:mm`/`±hhmm`/`±hh` zones (a datetime without a zone is UTC, as in Kafka, never the
machine's zone). CSV plans are `groupctl.ops.plan_csv`'s, durations `groupctl.ops.durations`'.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Iterable, Mapping, Optional, Sequence, Union

from groupctl.errors import BadInput

TopicPartition = tuple[str, int]

MAX_PARTITION = 2**31 - 1
"""Partitions are int32 on the wire."""
MAX_OFFSET = 2**63 - 1
"""Offsets (and shifts) are int64 on the wire."""

_TOPIC_NAME = re.compile(r"^[A-Za-z0-9._-]{1,249}$")
_DIGITS = re.compile(r"^[0-9]+$")  # ASCII only: str.isdigit() also accepts "²", which int() rejects


def _tp(tp: TopicPartition) -> str:
    return f"{tp[0]}:{tp[1]}"


def check_topic_name(topic: str) -> str:
    if not _TOPIC_NAME.match(topic) or topic in (".", ".."):
        raise BadInput(f"invalid topic name '{topic}' (letters, digits, '.', '_' and '-' only)")
    return topic


def _non_negative(text: str, what: str, context: str, maximum: int) -> int:
    """`what` (a partition or an offset) of `context`, a command-line value, -> int."""
    text = text.strip()
    if not _DIGITS.match(text):
        raise BadInput(f"{what} '{text}' in '{context}' is not a non-negative integer")
    value = int(text)
    if value > maximum:
        raise BadInput(f"{what} {value} in '{context}' is too large (at most {maximum})")
    return value


def check_offsets(offsets: Mapping[TopicPartition, int], source: Optional[str] = None) -> None:
    """BadInput unless every partition is in 0..2**31-1 and every offset in 0..2**63-1."""
    where = f"{source}: " if source else ""
    for (topic, partition), offset in sorted(offsets.items()):
        if not 0 <= partition <= MAX_PARTITION:
            raise BadInput(f"{where}partition {partition} of topic '{topic}' is out of range (0-{MAX_PARTITION})")
        if not 0 <= offset <= MAX_OFFSET:
            raise BadInput(f"{where}offset {offset} of {topic}:{partition} is out of range (0-{MAX_OFFSET})")


# -- scopes ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TopicScope:
    topic: str
    partitions: Optional[tuple[int, ...]] = None  # None: every partition of the topic


@dataclass(frozen=True)
class Scope:
    topics: tuple[TopicScope, ...] = ()
    all_topics: bool = False


def parse_topic_scope(text: str) -> TopicScope:
    """"T" or "T:0,1,2" -> TopicScope."""
    topic, sep, partitions = text.strip().partition(":")
    check_topic_name(topic)
    if not sep:
        return TopicScope(topic)
    numbers = [p for p in partitions.split(",")]
    if not partitions or any(not p.strip() for p in numbers):
        raise BadInput(f"'{text}' is not TOPIC or TOPIC:PARTITION[,PARTITION...]")
    return TopicScope(topic, tuple(sorted({_non_negative(p, "partition", text, MAX_PARTITION) for p in numbers})))


def make_scope(topics: Sequence[str], all_topics: bool) -> Scope:
    """The scope of `--topic ...` / `--all-topics` (exactly one of the two kinds)."""
    if topics and all_topics:
        raise BadInput("give either --topic or --all-topics, not both")
    if not topics and not all_topics:
        raise BadInput("give a scope: --topic TOPIC[:PARTITION,...] or --all-topics")
    merged: dict[str, Optional[set[int]]] = {}
    for text in topics:
        scope = parse_topic_scope(text)
        if scope.topic in merged and merged[scope.topic] is None:
            continue
        if scope.partitions is None:
            merged[scope.topic] = None
        else:
            merged.setdefault(scope.topic, set()).update(scope.partitions)
    return Scope(
        topics=tuple(TopicScope(t, None if ps is None else tuple(sorted(ps))) for t, ps in merged.items()),
        all_topics=all_topics,
    )


# -- targets ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToEarliest:
    pass


@dataclass(frozen=True)
class ToLatest:
    pass


@dataclass(frozen=True)
class ToOffset:
    offset: int

    def __post_init__(self) -> None:
        if not 0 <= self.offset <= MAX_OFFSET:
            raise BadInput(f"offset {self.offset} is out of range (0-{MAX_OFFSET})")


@dataclass(frozen=True)
class ShiftBy:
    delta: int

    def __post_init__(self) -> None:
        if abs(self.delta) > MAX_OFFSET:
            raise BadInput(f"shift {self.delta} is out of range (-{MAX_OFFSET} to {MAX_OFFSET})")


@dataclass(frozen=True)
class ToDatetime:
    timestamp_ms: int


@dataclass(frozen=True)
class ByDuration:
    duration_ms: int


@dataclass(frozen=True)
class ToCurrent:
    pass


class PlanOffsets(dict):
    """{(topic, partition): offset} read from a plan, remembering where from (`source`, e.g. the
    file name) so that errors about its partitions can name it."""

    def __init__(self, offsets: Mapping[TopicPartition, int] = (), source: Optional[str] = None) -> None:
        super().__init__(offsets)
        self.source = source


@dataclass(frozen=True)
class FromFile:
    offsets: Mapping[TopicPartition, int] = field(hash=False)

    def __post_init__(self) -> None:
        check_offsets(self.offsets, self.source)

    @property
    def source(self) -> Optional[str]:
        """The plan file the offsets came from, when they are `PlanOffsets` that know it."""
        return self.offsets.source if isinstance(self.offsets, PlanOffsets) else None


Target = Union[ToEarliest, ToLatest, ToOffset, ShiftBy, ToDatetime, ByDuration, ToCurrent, FromFile]


def lookup_timestamp(target: Target, now_ms: int) -> Optional[int]:
    """The time whose offsets the target needs (to-datetime, by-duration), or None.

    Never negative: ListOffsets reads -1, -2 and -3 as latest, earliest and max timestamp, so a
    time before the epoch is sent as 0 (the earliest record: none is stamped earlier).
    """
    if isinstance(target, ToDatetime):
        return max(0, target.timestamp_ms)
    if isinstance(target, ByDuration):
        return max(0, now_ms - target.duration_ms)
    return None


_DATETIME = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?"
    r"(Z|[+-]\d{2}(?::?\d{2})?)?$",
    re.IGNORECASE,
)
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def parse_datetime(text: str) -> int:
    """"YYYY-MM-DDTHH:mm:SS[.sss][Z|±hh:mm]" -> epoch milliseconds.

    Without a zone the time is UTC, whatever the machine's time zone (TZ): kafka-consumer-groups.sh
    appends "Z" to a zone-less `--to-datetime` (Apache Kafka's `Utils.getDateTime`), so the same
    command means the same instant on every machine. An explicit `Z` or offset is honoured.
    """
    match = _DATETIME.match(text.strip())
    usage = f"cannot parse date-time '{text}': expected YYYY-MM-DDTHH:mm:SS[.sss][Z|±hh:mm]"
    if not match:
        raise BadInput(usage)
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    try:
        tz = timezone.utc
        if zone and zone.upper() != "Z":
            digits = zone[1:].replace(":", "")
            offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:] or 0))
            if offset >= timedelta(hours=24) or int(digits[2:] or 0) >= 60:
                raise ValueError("zone offset out of range")
            tz = timezone(-offset if zone[0] == "-" else offset)
        micros = int((fraction or "0").ljust(6, "0")[:6])
        moment = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), micros, tzinfo=tz)
    except ValueError as exc:
        raise BadInput(f"{usage} ({exc})") from None
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def format_utc(ms: int) -> str:
    """Epoch milliseconds -> "2020-01-01T05:00:00Z" (UTC; ".sss" only when not a whole second),
    the form `parse_datetime` reads back: how a plan shows the instant a time target resolved to."""
    moment = _EPOCH + timedelta(milliseconds=ms)
    fraction = f".{ms % 1000:03d}" if ms % 1000 else ""
    return (f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
            f"T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}{fraction}Z")


# -- explicit offsets: TOPIC:PARTITION=OFFSET and CSV plans ---------------------------------


def parse_offset_assignment(text: str) -> tuple[TopicPartition, int]:
    """"TOPIC:PARTITION=OFFSET" -> ((topic, partition), offset)."""
    usage = f"'{text}' is not TOPIC:PARTITION=OFFSET"
    left, eq, offset = text.strip().rpartition("=")
    topic, colon, partition = left.rpartition(":")
    if not eq or not colon or not topic:
        raise BadInput(usage)
    check_topic_name(topic)
    return ((topic, _non_negative(partition, "partition", text, MAX_PARTITION)),
            _non_negative(offset, "offset", text, MAX_OFFSET))


def parse_offset_assignments(texts: Iterable[str]) -> dict[TopicPartition, int]:
    offsets: dict[TopicPartition, int] = {}
    for text in texts:
        tp, offset = parse_offset_assignment(text)
        if tp in offsets and offsets[tp] != offset:
            raise BadInput(f"{_tp(tp)} is given two different offsets ({offsets[tp]} and {offset})")
        offsets[tp] = offset
    if not offsets:
        raise BadInput("give at least one TOPIC:PARTITION=OFFSET")
    return offsets


# -- plans -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlannedOffset:
    topic: str
    partition: int
    current_offset: Optional[int]  # the committed offset before the change (None: none)
    new_offset: int
    clamped_from: Optional[int] = None
    """The offset the operator asked for (to-offset, shift-by, a plan file) when it lay outside
    the partition's [log start, log end] and `new_offset` is that bound instead; None otherwise."""
    leader_epoch: Optional[int] = None
    """The partition's leader epoch when planned, committed with `new_offset` (None: none known)."""

    def to_json(self) -> dict:
        return {"topic": self.topic, "partition": self.partition,
                "current_offset": self.current_offset, "new_offset": self.new_offset,
                "clamped_from": self.clamped_from, "leader_epoch": self.leader_epoch}


@dataclass(frozen=True)
class ResetPlan:
    group: str
    partitions: tuple[PlannedOffset, ...]
    executed: bool = False  # True once the offsets were committed
    timestamp_ms: Optional[int] = None
    """The instant a time target (to-datetime, by-duration) resolved to, as sent to ListOffsets;
    None for other targets."""

    def offsets(self) -> dict[TopicPartition, int]:
        return {(p.topic, p.partition): p.new_offset for p in self.partitions}

    def leader_epochs(self) -> dict[TopicPartition, int]:
        """The leader epoch to commit with each new offset, where one is known."""
        return {(p.topic, p.partition): p.leader_epoch for p in self.partitions if p.leader_epoch is not None}

    def to_json(self) -> dict:
        return {"group": self.group, "executed": self.executed, "timestamp_ms": self.timestamp_ms,
                "timestamp": None if self.timestamp_ms is None else format_utc(self.timestamp_ms),
                "partitions": [p.to_json() for p in self.partitions]}


@dataclass(frozen=True)
class PlanInputs:
    """What the cluster said, fetched before planning."""

    topic_partitions: Mapping[str, Sequence[int]]
    """Existing partitions of every topic the plan may touch (absent: the topic does not exist)."""
    committed: Mapping[TopicPartition, int]
    earliest: Mapping[TopicPartition, int]
    latest: Mapping[TopicPartition, int]
    for_timestamp: Mapping[TopicPartition, Optional[int]] = field(default_factory=dict)
    """For time targets: the first offset at/after the time (None: no such record)."""
    timestamp_ms: Optional[int] = None
    """For time targets: the time `for_timestamp` was looked up for (`lookup_timestamp`)."""
    leader_epochs: Mapping[TopicPartition, int] = field(default_factory=dict)
    """Each partition's current leader epoch, where the cluster reports one."""


def topics_to_fetch(scope: Optional[Scope], target: Target, committed: Mapping[TopicPartition, int]) -> list[str]:
    """The topics whose metadata `resolve_partitions` needs."""
    if isinstance(target, FromFile):
        names = {t for t, _ in target.offsets}
        if scope is not None and not scope.all_topics:
            names.update(s.topic for s in scope.topics)
    elif scope is None:
        raise BadInput("give a scope: --topic TOPIC[:PARTITION,...] or --all-topics")
    elif scope.all_topics:
        names = {t for t, _ in committed}
    else:
        names = {s.topic for s in scope.topics}
    return sorted(names)


def check_exists(tp: TopicPartition, topic_partitions: Mapping[str, Sequence[int]],
                 source: Optional[str] = None) -> None:
    """BadInput unless `tp` is an existing partition (per `topic_partitions`); the message
    starts with `source` (the plan file that named it), if given."""
    topic, partition = tp
    where = f"{source}: " if source else ""
    if topic not in topic_partitions:
        raise BadInput(f"{where}unknown topic '{topic}'")
    existing = topic_partitions[topic]
    if partition not in existing:
        span = f"partitions 0-{max(existing)}" if existing else "no partitions"
        raise BadInput(f"{where}unknown partition {_tp(tp)} (topic '{topic}' has {span})")


def _check_scope_exists(scope: Scope, topic_partitions: Mapping[str, Sequence[int]]) -> None:
    for s in scope.topics:
        if s.topic not in topic_partitions:
            raise BadInput(f"unknown topic '{s.topic}'")
        for p in s.partitions or ():
            check_exists((s.topic, p), topic_partitions)


def resolve_partitions(
    scope: Optional[Scope],
    target: Target,
    topic_partitions: Mapping[str, Sequence[int]],
    committed: Mapping[TopicPartition, int],
) -> tuple[TopicPartition, ...]:
    """The partitions a reset touches, sorted; BadInput for unknown topics or partitions."""
    if scope is not None:
        _check_scope_exists(scope, topic_partitions)
    if isinstance(target, FromFile):
        wanted = set(target.offsets)
        if scope is not None and not scope.all_topics:
            inside = {s.topic: s.partitions for s in scope.topics}
            wanted = {tp for tp in wanted
                      if tp[0] in inside and (inside[tp[0]] is None or tp[1] in inside[tp[0]])}
        for tp in sorted(wanted):
            check_exists(tp, topic_partitions, target.source)
        return tuple(sorted(wanted))
    if scope is None:
        raise BadInput("give a scope: --topic TOPIC[:PARTITION,...] or --all-topics")
    if scope.all_topics:
        return tuple(sorted(tp for tp in committed if tp[1] in topic_partitions.get(tp[0], ())))
    resolved: set[TopicPartition] = set()
    for s in scope.topics:
        partitions = topic_partitions[s.topic] if s.partitions is None else s.partitions
        resolved.update((s.topic, p) for p in partitions)
    return tuple(sorted(resolved))


def _clamp(offset: int, low: int, high: int) -> int:
    return max(low, min(offset, high))


def plan_reset(group: str, scope: Optional[Scope], target: Target, inputs: PlanInputs) -> ResetPlan:
    """The new offset of every partition in scope (not executed). Offsets the operator supplied
    are clamped into [earliest, latest], recording what was asked (`clamped_from`)."""
    planned = []
    for tp in resolve_partitions(scope, target, inputs.topic_partitions, inputs.committed):
        low, high = inputs.earliest[tp], inputs.latest[tp]
        current = inputs.committed.get(tp)
        requested: Optional[int] = None  # an offset the operator supplied, clamped below
        if isinstance(target, ToEarliest):
            new = low
        elif isinstance(target, ToLatest):
            new = high
        elif isinstance(target, ToOffset):
            requested = target.offset
        elif isinstance(target, ShiftBy):
            if current is None:
                raise BadInput(f"cannot shift {_tp(tp)}: group '{group}' has no committed offset for it")
            requested = current + target.delta
        elif isinstance(target, (ToDatetime, ByDuration)):
            found = inputs.for_timestamp.get(tp)
            new = high if found is None else _clamp(found, low, high)
        elif isinstance(target, ToCurrent):
            new = high if current is None else current
        elif isinstance(target, FromFile):
            requested = target.offsets[tp]
        else:
            raise TypeError(f"not a reset target: {target!r}")
        clamped_from = None
        if requested is not None:
            new = _clamp(requested, low, high)
            clamped_from = requested if new != requested else None
        planned.append(PlannedOffset(tp[0], tp[1], current, new, clamped_from, inputs.leader_epochs.get(tp)))
    return ResetPlan(group, tuple(planned), timestamp_ms=inputs.timestamp_ms)
