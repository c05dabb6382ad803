"""A consumer group (KIP-848), `/groups/<group>` with `"type": "consumer"`: keys in this order:
`{"version": 1, "type": "consumer", "group", "group_epoch", "assignment_epoch", "assignor",
"state", "topics": {"<topic id>": "<topic name>"}, "subscribed": {"<topic id>": <partitions>}, "members": [{"member_id", "instance_id",
"rack_id", "client_id", "client_host", "rebalance_timeout_ms", "subscribed_topic_names",
"subscribed_topic_regex", "server_assignor", "member_epoch", "previous_member_epoch",
"member_state", "assigned", "pending_revocation", "target", "classic"}], "ownership": {"<topic>":
{"<p>": "<member id>"}}, "coordinator", "updated_at_ms"}`.

A classic-protocol member of the group (online migration) also has "classic":
`{"session_timeout_ms", "protocols": [{"name", "metadata_base64"}]}`, its last JoinGroup's
protocols in its preference order; a member of the consumer protocol has no such key.

Assignments ("assigned", "pending_revocation", "target") are `{"<topic id>": [partitions]}`:
topic ids are what the protocol and the core use; "topics" names them for people, and
"ownership" is the same map classic documents have (every assigned or revoking partition by
topic name), so `zk show`, `zk watch` and the analyses read both types alike.

Invariants: "state" is Empty without members, else Assigning, Reconciling or Stable;
"assignment_epoch" <= "group_epoch"; a partition has at most one owner across the members'
"assigned" and "pending_revocation".

Written by the coordinator's store whenever an epoch, a member or the target changes; read when a
coordinator loads the group, and by the tools.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Optional

import base64

from groupctl.layout.codec import (
    LayoutError,
    base64_bytes,
    check_version,
    encode,
    integer,
    ownership_map,
    strings,
    text,
    within,
)
from groupctl.layout.paths import group_path

VERSION = 1
CONSUMER = "consumer"

PartitionsById = dict[str, list[int]]


@dataclass(frozen=True)
class ClassicMemberDocument:
    session_timeout_ms: int
    protocols: tuple[tuple[str, bytes], ...]  # (name, metadata), the member's preference order

    def to_json(self) -> dict[str, Any]:
        return {"session_timeout_ms": self.session_timeout_ms,
                "protocols": [{"name": name, "metadata_base64": base64.b64encode(metadata).decode("ascii")}
                              for name, metadata in self.protocols]}

    @classmethod
    def from_json(cls, path: str, value: Any) -> "ClassicMemberDocument":
        with within(path, "classic"):
            if not isinstance(value, dict) or not isinstance(value.get("protocols"), list) or not value["protocols"]:
                raise LayoutError(path, f'must be an object with a non-empty "protocols" list, not {value!r}')
            protocols = []
            for index, protocol in enumerate(value["protocols"]):
                with within(path, f"protocols[{index}]"):
                    if not isinstance(protocol, dict):
                        raise LayoutError(path, f"must be an object, not {protocol!r}")
                    protocols.append((text(path, protocol, "name"), base64_bytes(path, protocol, "metadata_base64")))
            return cls(session_timeout_ms=integer(path, value, "session_timeout_ms", minimum=1),
                       protocols=tuple(protocols))


@dataclass(frozen=True)
class ConsumerMemberDocument:
    member_id: str
    instance_id: Optional[str]
    rack_id: Optional[str]
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    subscribed_topic_names: list[str]
    subscribed_topic_regex: Optional[str]
    server_assignor: Optional[str]
    member_epoch: int
    previous_member_epoch: int
    member_state: str
    assigned: PartitionsById
    pending_revocation: PartitionsById
    target: PartitionsById
    classic: Optional[ClassicMemberDocument] = None

    def to_json(self) -> dict[str, Any]:
        member = {
            "member_id": self.member_id, "instance_id": self.instance_id, "rack_id": self.rack_id,
            "client_id": self.client_id, "client_host": self.client_host,
            "rebalance_timeout_ms": self.rebalance_timeout_ms,
            "subscribed_topic_names": list(self.subscribed_topic_names),
            "subscribed_topic_regex": self.subscribed_topic_regex, "server_assignor": self.server_assignor,
            "member_epoch": self.member_epoch, "previous_member_epoch": self.previous_member_epoch,
            "member_state": self.member_state,
            "assigned": _sorted(self.assigned), "pending_revocation": _sorted(self.pending_revocation),
            "target": _sorted(self.target),
        }
        if self.classic is not None:
            member["classic"] = self.classic.to_json()
        return member

    @classmethod
    def from_json(cls, path: str, index: int, member: Any) -> "ConsumerMemberDocument":
        with within(path, f"members[{index}]"):
            if not isinstance(member, dict):
                raise LayoutError(path, f"must be an object, not {member!r}")
            return cls(
                member_id=text(path, member, "member_id"),
                instance_id=text(path, member, "instance_id", default=None),
                rack_id=text(path, member, "rack_id", default=None),
                client_id=text(path, member, "client_id"),
                client_host=text(path, member, "client_host"),
                rebalance_timeout_ms=integer(path, member, "rebalance_timeout_ms"),
                subscribed_topic_names=strings(path, member, "subscribed_topic_names"),
                subscribed_topic_regex=text(path, member, "subscribed_topic_regex", default=None),
                server_assignor=text(path, member, "server_assignor", default=None),
                member_epoch=integer(path, member, "member_epoch"),
                previous_member_epoch=integer(path, member, "previous_member_epoch"),
                member_state=text(path, member, "member_state"),
                assigned=_partitions(path, member, "assigned"),
                pending_revocation=_partitions(path, member, "pending_revocation"),
                target=_partitions(path, member, "target"),
                classic=(ClassicMemberDocument.from_json(path, member["classic"])
                         if member.get("classic") is not None else None),
            )


@dataclass(frozen=True)
class ConsumerGroupDocument:
    TYPE: ClassVar[str] = CONSUMER

    group: str
    group_epoch: int
    assignment_epoch: int
    assignor: Optional[str]
    state: str
    topics: dict[str, str]  # topic id -> name, of every topic an assignment names
    subscribed: dict[str, int]  # topic id -> partitions of the topics the target was computed over
    members: tuple[ConsumerMemberDocument, ...]
    ownership: dict[str, dict[str, str]]
    coordinator: int
    updated_at_ms: int

    @property
    def generation(self) -> int:
        """What tools that follow generations follow: the group epoch."""
        return self.group_epoch

    @property
    def rebalance(self) -> None:
        """A consumer group records no rebalance episodes (its epochs are its history)."""
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "version": VERSION, "type": self.TYPE, "group": self.group, "group_epoch": self.group_epoch,
            "assignment_epoch": self.assignment_epoch, "assignor": self.assignor, "state": self.state,
            "topics": dict(sorted(self.topics.items())), "subscribed": dict(sorted(self.subscribed.items())),
            "members": [member.to_json() for member in self.members],
            "ownership": {topic: dict(owners) for topic, owners in self.ownership.items()},
            "coordinator": self.coordinator, "updated_at_ms": self.updated_at_ms,
        }

    def encode(self) -> bytes:
        return encode(self.to_json())

    @classmethod
    def from_json(cls, group: str, document: dict[str, Any]) -> "ConsumerGroupDocument":
        path = group_path(group)
        check_version(path, document, VERSION)
        name = text(path, document, "group")
        if name != group:
            raise LayoutError(path, f'"group" is {name!r}, not the group stored here ({group!r})')
        members = document.get("members")
        if not isinstance(members, list):
            raise LayoutError(path, f'"members" must be a list, not {members!r}')
        topics = document.get("topics")
        if not isinstance(topics, dict) or not all(isinstance(n, str) for n in topics.values()):
            raise LayoutError(path, f'"topics" must be an object of topic names by id, not {topics!r}')
        subscribed = document.get("subscribed")
        if not isinstance(subscribed, dict) or not all(
                isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in subscribed.values()):
            raise LayoutError(path, f'"subscribed" must be an object of partition counts by topic id, '
                                    f'not {subscribed!r}')
        group_epoch = integer(path, document, "group_epoch", minimum=0)
        return cls(
            group=name, group_epoch=group_epoch,
            assignment_epoch=integer(path, document, "assignment_epoch", minimum=0, maximum=group_epoch),
            assignor=text(path, document, "assignor", default=None), state=text(path, document, "state"),
            topics=topics, subscribed=subscribed,
            members=tuple(ConsumerMemberDocument.from_json(path, i, m) for i, m in enumerate(members)),
            ownership=ownership_map(path, document.get("ownership")),
            coordinator=integer(path, document, "coordinator"),
            updated_at_ms=integer(path, document, "updated_at_ms"),
        )


def _sorted(partitions: PartitionsById) -> dict[str, list[int]]:
    return {topic: sorted(ps) for topic, ps in sorted(partitions.items())}


def _partitions(path: str, document: dict[str, Any], name: str) -> PartitionsById:
    value = document.get(name)
    if not isinstance(value, dict) or not all(
            isinstance(ps, list) and all(isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in ps)
            for ps in value.values()):
        raise LayoutError(path, f'"{name}" must be an object of partition lists, not {value!r}')
    return value
