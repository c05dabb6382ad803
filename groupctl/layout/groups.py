"""A group, `/groups/<group>`: the group document (docs/zookeeper-layout.md), keys in this order:
`{"version": 1, "type": "classic", "group", "protocol_type", "protocol", "generation", "state",
"leader", "members": [{"member_id", "group_instance_id", "client_id", "client_host",
"session_timeout_ms", "rebalance_timeout_ms", "subscription", "assignment", "metadata_base64",
"assignment_base64"}], "ownership": {"<topic>": {"<p>": "<member id>"}}, "rebalance":
{"started_at_ms", "completed_at_ms", "reason", "member_id", "client_id", "detail"} | null,
"coordinator", "updated_at_ms"}`.

Invariants:
- "type" is one of GROUP_TYPES; a document without one (written before it existed) is classic.
- The bytes are what earlier releases wrote plus "type". "rebalance" is absent from documents
  written before it existed and from the Empty document an offset commit creates; decoding
  remembers that (`rebalance_key`), so re-encoding writes the same keys.
- Decoding checks each field's type and that the document is its path's group. The classic
  rules (Stable with members or Empty without, the leader a member) are the core's
  (`groupctl.coordinator.classic.document`): a live group's document may be in any state.

Written by the coordinator's store from the core's records; read when a coordinator loads the
group, by GroupctlDescribeGroup, and by the tools (`zk show|watch`, `rebalance watch|trigger`,
`coordinator status`, `group describe`).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any, ClassVar, Optional

from groupctl.layout.codec import (
    LayoutError,
    base64_bytes,
    check_version,
    decode_object,
    encode,
    integer,
    ownership_map,
    strings,
    text,
    within,
)
from groupctl.layout.paths import group_path

VERSION = 1
CLASSIC = "classic"
GROUP_TYPES = (CLASSIC, "consumer")
"""The group types this groupctl reads ("consumer": KIP-848's, `groupctl.layout.consumer_groups`)."""


def group_type(path: str, document: dict[str, Any]) -> str:
    """The document's "type" ("classic" when absent); a LayoutError for a type this groupctl does not read."""
    kind = document.get("type", CLASSIC)
    if kind not in GROUP_TYPES:
        raise LayoutError(path, f"group type {kind!r} is not one this groupctl reads ({', '.join(GROUP_TYPES)}); "
                                "upgrade groupctl")
    return kind


@dataclass(frozen=True)
class LastRebalance:
    """The group's last completed rebalance (see `groupctl.coordinator.classic.causes`)."""

    started_at_ms: int
    completed_at_ms: int
    reason: str
    member_id: Optional[str] = None
    client_id: Optional[str] = None
    detail: Optional[str] = None

    def to_json(self) -> dict[str, Any]:
        return {"started_at_ms": self.started_at_ms, "completed_at_ms": self.completed_at_ms, "reason": self.reason,
                "member_id": self.member_id, "client_id": self.client_id, "detail": self.detail}

    @classmethod
    def from_json(cls, path: str, block: Any) -> "LastRebalance":
        with within(path, "rebalance"):
            if not isinstance(block, dict):
                raise LayoutError(path, f"must be an object or null, not {block!r}")
            return cls(started_at_ms=integer(path, block, "started_at_ms"),
                       completed_at_ms=integer(path, block, "completed_at_ms"), reason=text(path, block, "reason"),
                       member_id=text(path, block, "member_id", default=None),
                       client_id=text(path, block, "client_id", default=None),
                       detail=text(path, block, "detail", default=None))


@dataclass(frozen=True)
class GroupMember:
    """A member as of the document. `subscription` and `assignment` are decoded from the consumer
    protocol for people and tools ([] and {} for other protocol types); `metadata_bytes` (its
    protocol metadata for the chosen protocol) and `assignment_bytes` are exactly what it and the
    leader sent, which a coordinator taking the group over needs."""

    member_id: str
    group_instance_id: Optional[str]
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    subscription: list[str]
    assignment: dict[str, list[int]]
    metadata_bytes: bytes
    assignment_bytes: bytes

    def to_json(self) -> dict[str, Any]:
        return {
            "member_id": self.member_id,
            "group_instance_id": self.group_instance_id,
            "client_id": self.client_id,
            "client_host": self.client_host,
            "session_timeout_ms": self.session_timeout_ms,
            "rebalance_timeout_ms": self.rebalance_timeout_ms,
            "subscription": list(self.subscription),
            "assignment": {topic: list(partitions) for topic, partitions in self.assignment.items()},
            "metadata_base64": base64.b64encode(self.metadata_bytes).decode("ascii"),
            "assignment_base64": base64.b64encode(self.assignment_bytes).decode("ascii"),
        }

    @classmethod
    def from_json(cls, path: str, index: int, member: Any) -> "GroupMember":
        with within(path, f"members[{index}]"):
            if not isinstance(member, dict):
                raise LayoutError(path, f"must be an object, not {member!r}")
            return cls(
                member_id=text(path, member, "member_id"),
                group_instance_id=text(path, member, "group_instance_id", default=None),
                client_id=text(path, member, "client_id"),
                client_host=text(path, member, "client_host"),
                session_timeout_ms=integer(path, member, "session_timeout_ms"),
                rebalance_timeout_ms=integer(path, member, "rebalance_timeout_ms"),
                subscription=strings(path, member, "subscription"),
                assignment=_partitions(path, member, "assignment"),
                metadata_bytes=base64_bytes(path, member, "metadata_base64"),
                assignment_bytes=base64_bytes(path, member, "assignment_base64"),
            )


@dataclass(frozen=True)
class GroupDocument:
    """A classic group's document; `ownership` is `{topic: {"<partition>": member id}}`."""

    TYPE: ClassVar[str] = CLASSIC

    group: str
    protocol_type: Optional[str]
    protocol: Optional[str]
    generation: int
    state: str
    leader: Optional[str]
    members: tuple[GroupMember, ...]
    ownership: dict[str, dict[str, str]]
    coordinator: int
    updated_at_ms: int
    rebalance: Optional[LastRebalance] = None
    rebalance_key: bool = True  # False: written without a "rebalance" key (see the module invariants)

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "version": VERSION,
            "type": self.TYPE,
            "group": self.group,
            "protocol_type": self.protocol_type,
            "protocol": self.protocol,
            "generation": self.generation,
            "state": self.state,
            "leader": self.leader,
            "members": [member.to_json() for member in self.members],
            "ownership": {topic: dict(owners) for topic, owners in self.ownership.items()},
        }
        if self.rebalance_key or self.rebalance is not None:
            document["rebalance"] = self.rebalance.to_json() if self.rebalance is not None else None
        document["coordinator"] = self.coordinator
        document["updated_at_ms"] = self.updated_at_ms
        return document

    def encode(self) -> bytes:
        return encode(self.to_json())

    @classmethod
    def decode(cls, group: str, data: Optional[bytes]) -> "GroupDocument":
        return cls.from_json(group, decode_object(group_path(group), data))

    @classmethod
    def from_json(cls, group: str, document: Any) -> "GroupDocument":
        """The document of `group` from its JSON object (as `decode` parses it)."""
        path = group_path(group)
        if not isinstance(document, dict):
            raise LayoutError(path, f"not a JSON object but {type(document).__name__}")
        check_version(path, document, VERSION)
        kind = group_type(path, document)
        if kind != CLASSIC:
            raise LayoutError(path, f"a {kind} group's document, not a classic group's")
        name = text(path, document, "group")
        if name != group:
            raise LayoutError(path, f'"group" is {name!r}, not the group stored here ({group!r})')
        members = document.get("members")
        if not isinstance(members, list):
            raise LayoutError(path, f'"members" must be a list, not {members!r}')
        block = document.get("rebalance")
        return cls(
            group=name,
            protocol_type=text(path, document, "protocol_type", default=None),
            protocol=text(path, document, "protocol", default=None),
            generation=integer(path, document, "generation", minimum=0),
            state=text(path, document, "state"),
            leader=text(path, document, "leader", default=None),
            members=tuple(GroupMember.from_json(path, index, member) for index, member in enumerate(members)),
            ownership=ownership_map(path, document.get("ownership")),
            coordinator=integer(path, document, "coordinator"),
            updated_at_ms=integer(path, document, "updated_at_ms"),
            rebalance=None if block is None else LastRebalance.from_json(path, block),
            rebalance_key="rebalance" in document,
        )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _partitions(path: str, document: dict[str, Any], name: str) -> dict[str, list[int]]:
    value = document.get(name)
    if not isinstance(value, dict) or not all(
            isinstance(partitions, list) and all(_is_int(p) for p in partitions) for partitions in value.values()):
        raise LayoutError(path, f'"{name}" must be an object of partition lists, not {value!r}')
    return value
