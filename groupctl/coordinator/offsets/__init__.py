"""Committed offsets for every group type: the store (`store`) and the offset APIs' values
(`messages`). A group type plugs in by implementing `OffsetGroup` and handing the store a lookup
of its groups; see `store` for the invariants and Kafka's rules."""

from groupctl.coordinator.offsets.store import (
    OFFSET_METADATA_MAX_CHARS,
    OffsetGroup,
    OffsetStore,
    UnknownOffset,
)

__all__ = ["OFFSET_METADATA_MAX_CHARS", "OffsetGroup", "OffsetStore", "UnknownOffset"]
