"""What a partition log is told to honour: the topic configs of Kafka's LogConfig that this node
implements, in the log's own units.

The configs layer (topic config documents, DescribeConfigs, AlterConfigs) turns a topic's
`retention.ms`, `segment.bytes`, ... into one `LogConfig`; the log manager hands it to every
log of the topic and again whenever it changes. The log reads only this object, so it knows
nothing of config names, sources or storage.

Invariants: a LogConfig is immutable and always valid (the configs layer refuses bad values
with INVALID_CONFIG before building one); -1 means "no limit" for the retention fields, as in
Kafka.
"""

from __future__ import annotations

from dataclasses import dataclass

CREATE_TIME = "CreateTime"
LOG_APPEND_TIME = "LogAppendTime"

DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024  # Kafka's default is 1 GiB; smaller suits a developer's disk
WEEK_MS = 7 * 24 * 60 * 60 * 1000


@dataclass(frozen=True)
class LogConfig:
    segment_bytes: int = DEFAULT_SEGMENT_BYTES  # segment.bytes: roll before a segment grows past it
    segment_ms: int = WEEK_MS  # segment.ms: roll a segment whose first batch is older than this
    retention_ms: int = WEEK_MS  # retention.ms: delete segments whose newest record is older (-1: keep)
    retention_bytes: int = -1  # retention.bytes: delete oldest segments while the log is larger (-1: keep)
    max_message_bytes: int = 1048588  # max.message.bytes: the largest record batch accepted
    message_timestamp_type: str = CREATE_TIME  # message.timestamp.type: CreateTime or LogAppendTime
