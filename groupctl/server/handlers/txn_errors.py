"""The transaction coordinator's answers as each request version may carry them.

PRODUCER_FENCED (KIP-588) reaches only the versions that know it; older ones get
INVALID_PRODUCER_EPOCH, as Kafka's KafkaApis maps it: InitProducerId below v4, AddPartitionsToTxn,
AddOffsetsToTxn and EndTxn below v2.
"""

from __future__ import annotations

from groupctl.coordinator.errors import ErrorCode


def for_version(error: ErrorCode, version: int, first_fenced_version: int) -> ErrorCode:
    if error is ErrorCode.PRODUCER_FENCED and version < first_fenced_version:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    return error
