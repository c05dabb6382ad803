"""Journal events: what happened to groups, as the coordinator's event journal records it.

Invariants:
- Each builder returns one event as a plain, JSON-ready dict with exactly the fields
  `groupctl.layout.journal` declares (a test holds them to it): the common `v`, `ts` (the core's
  `now_ms` of the operation), `node`, `event` and `group`, then its type's fields, null when they
  have no value. `seq` is added by the writer (`groupctl.server.journal`).
- Builders are pure and cheap (the commit path builds one event per partition); their dicts are
  never mutated after the core returns them.
- Replaying stored records emits nothing: replay rebuilds state, it is not new history.

When (the classic core's emission points; an operation puts its events in its `Result`):
- `rebalance_started`: a group enters PreparingRebalance from a settled state (a new episode, see
  `classic.causes`); a join phase restarted within the episode is not a new one.
- `rebalance_completed`: the group document that completes the episode is written.
- `member_joined`: a member is admitted (a pending member when it comes back with its id; a static
  member's restart admits its new member id).
- `member_left`: LeaveGroup. `member_expired`: removed by the coordinator (see EXPIRED_*).
- `offset_commit`: one per accepted partition. `offset_delete`: one per deleted committed offset.
- `group_deleted`: DeleteGroups.
Transactions (`offsets.store` for the group's side, `transactions.coordinator` for the id's):
- `txn_offset_commit`: one per partition a TxnOffsetCommit holds pending for its producer.
- `txn_offsets_completed`: a transaction's marker reached the group with offsets held for its
  producer; a commit is followed by an `offset_commit` (with `producer_id`) per offset it made
  visible (a held offset older than the committed one is not).
- `transaction_completed`: a transaction's CompleteCommit/CompleteAbort is persisted (its
  markers are written and its groups' offsets completed); `group` is "" (NO_GROUP).
Consumer groups (KIP-848; `consumer.events` says where each is emitted): `group_epoch_bumped`,
`target_assignment_computed`, `member_reconciled`, `group_stable`, `group_migrated`, and the
member, offset and deletion events above with the group epoch as `generation`.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional

from groupctl.layout.journal import SCHEMA_VERSION

Event = dict[str, Any]

# Why the coordinator removed a member (`member_expired`'s reason). The first three are the
# `classic.causes.Reason` values of the rebalance such a removal starts; a member that did not
# rejoin before its group's join phase ended is removed inside a rebalance already under way,
# so it has no rebalance reason of its own: it is "join timeout".
EXPIRED_SESSION = "session expiry"
EXPIRED_SYNC = "sync timeout"
EXPIRED_GROUP_MAX_SIZE = "group max size"
EXPIRED_JOIN = "join timeout"
EXPIRED_REBALANCE = "rebalance timeout"  # a consumer member that did not revoke in time (KIP-848)

# Why a consumer group's epoch was bumped (`group_epoch_bumped`'s reason), in the classic
# rebalance reasons' words where they mean the same; a member's removal bumps it with the
# removal's reason (LEAVE, or the EXPIRED_* value of its `member_expired`).
JOIN = "join"
LEAVE = "leave"
SUBSCRIPTION_CHANGE = "subscription change"
TOPIC_CHANGE = "topic change"
TRIGGER = "trigger"

# `group_migrated`'s group_type: what the group became.
CLASSIC = "classic"
CONSUMER = "consumer"


def rebalance_started(
    node: int, ts: int, group: str, *, generation: int, reason: str, member_id: Optional[str],
    client_id: Optional[str], members: int,
) -> Event:
    """`generation` is the one being left; `members` the member count when it started."""
    return {"v": SCHEMA_VERSION, "ts": ts, "node": node, "event": "rebalance_started", "group": group,
            "generation": generation, "reason": reason, "member_id": member_id, "client_id": client_id,
            "members": members}


def rebalance_completed(
    node: int, ts: int, group: str, *, generation: int, reason: str, started_ts: int, state: str,
    protocol: Optional[str], leader: Optional[str], member_ids: list[str], assignment: list[dict[str, Any]],
) -> Event:
    """`generation` is the new one; `assignment` as `assignment_rows` builds it."""
    return {"v": SCHEMA_VERSION, "ts": ts, "node": node, "event": "rebalance_completed", "group": group,
            "generation": generation, "reason": reason, "started_ts": started_ts,
            "duration_ms": ts - started_ts, "state": state, "protocol": protocol, "leader": leader,
            "members": len(member_ids), "member_ids": member_ids, "assignment": assignment}


def assignment_rows(members: Iterable[tuple[str, str, Mapping[str, Iterable[int]]]]) -> list[dict[str, Any]]:
    """(member id, client id, {topic: partitions}) per member -> one row per owned partition."""
    return [{"member_id": member_id, "client_id": client_id, "topic": topic, "partition": partition}
            for member_id, client_id, owned in members
            for topic, partitions in owned.items()
            for partition in partitions]


def member_joined(
    node: int, ts: int, group: str, *, member_id: str, client_id: str, client_host: str,
    instance_id: Optional[str], generation: int, replaced_member_id: Optional[str] = None,
) -> Event:
    """`generation` is the group's current one when the member was admitted. A static member's
    restart names the member id it takes over in `replaced_member_id`: in a Stable group it keeps
    that id's assignment in the same generation, with no rebalance."""
    return {"v": SCHEMA_VERSION, "ts": ts, "node": node, "event": "member_joined", "group": group,
            "member_id": member_id, "client_id": client_id, "client_host": client_host,
            "instance_id": instance_id, "generation": generation, "replaced_member_id": replaced_member_id}


def member_left(node: int, ts: int, group: str, *, member_id: str, client_id: str, generation: int) -> Event:
    return {"v": SCHEMA_VERSION, "ts": ts, "node": node, "event": "member_left", "group": group,
            "member_id": member_id, "client_id": client_id, "generation": generation}


def member_expired(
    node: int, ts: int, group: str, *, member_id: str, client_id: str, generation: int, reason: str,
) -> Event:
    """`reason`: one of the EXPIRED_* values."""
    return {"v": SCHEMA_VERSION, "ts": ts, "node": node, "event": "member_expired", "group": group,
            "member_id": member_id, "client_id": client_id, "generation": generation, "reason": reason}


def offset_commit(
    node: int, ts: int, group: str, *, member_id: str, generation: int, topic: str, partition: int, offset: int,
    producer_id: Optional[int] = None, producer_epoch: Optional[int] = None,
) -> Event:
    """A simple or admin commit carries generation -1 and member id "" (as its request does); so
    does an offset a transaction's commit made visible, which names the transaction's producer
    (`producer_id`, `producer_epoch`; null for every other commit)."""
    return {"v": SCHEMA_VERSION, "ts": ts, "node": node, "event": "offset_commit", "group": group,
            "member_id": member_id, "generation": generation, "topic": topic, "partition": partition,
            "offset": offset, "producer_id": producer_id, "producer_epoch": producer_epoch}


def offset_delete(node: int, ts: int, group: str, *, topic: str, partition: int) -> Event:
    return {"v": SCHEMA_VERSION, "ts": ts, "node": node, "event": "offset_delete", "group": group,
            "topic": topic, "partition": partition}


def group_deleted(node: int, ts: int, group: str) -> Event:
    return {"v": SCHEMA_VERSION, "ts": ts, "node": node, "event": "group_deleted", "group": group}


# -- consumer groups (KIP-848) ---------------------------------------------------------------------

def group_epoch_bumped(
    node: int, ts: int, group: str, *, generation: int, reason: str, member_id: Optional[str],
    client_id: Optional[str], members: int,
) -> Event:
    """`generation` is the new group epoch; `member_id` / `client_id` name the member that caused
    it (null for a topic change or a trigger); `members` is the member count at the new epoch."""
    return {"v": SCHEMA_VERSION, "ts": ts, "node": node, "event": "group_epoch_bumped", "group": group,
            "generation": generation, "reason": reason, "member_id": member_id, "client_id": client_id,
            "members": members}


def target_assignment_computed(
    node: int, ts: int, group: str, *, generation: int, protocol: Optional[str], members: int, moved: int,
    member_ids: list[str], assignment: list[dict[str, Any]],
) -> Event:
    """`generation` is the assignment epoch (the group epoch it was computed at); `protocol` the
    assignor; `moved` the partitions whose target owner changed (newly targeted ones included);
    `member_ids` the members whose target changed and `assignment` their new targets (as
    `assignment_rows` builds them): an unchanged target is left out."""
    return {"v": SCHEMA_VERSION, "ts": ts, "node": node, "event": "target_assignment_computed", "group": group,
            "generation": generation, "protocol": protocol, "members": members, "moved": moved,
            "member_ids": member_ids, "assignment": assignment}


def member_reconciled(
    node: int, ts: int, group: str, *, member_id: str, client_id: str, instance_id: Optional[str], generation: int,
    member_epoch: int, state: str, assignment: Optional[list[dict[str, Any]]],
    revoking: Optional[list[dict[str, Any]]],
) -> Event:
    """The member's epoch, state or partitions changed: it owns `assignment` (null: the same as at
    its previous `member_reconciled`) plus `revoking` (null: none) at `member_epoch`;
    `generation` is the group epoch; `state` a member state (stable, unrevoked_partitions,
    unreleased_partitions)."""
    return {"v": SCHEMA_VERSION, "ts": ts, "node": node, "event": "member_reconciled", "group": group,
            "member_id": member_id, "client_id": client_id, "instance_id": instance_id, "generation": generation,
            "member_epoch": member_epoch, "state": state, "assignment": assignment, "revoking": revoking}


def group_stable(node: int, ts: int, group: str, *, generation: int, members: int) -> Event:
    """Every member reached the target assignment of group epoch `generation`."""
    return {"v": SCHEMA_VERSION, "ts": ts, "node": node, "event": "group_stable", "group": group,
            "generation": generation, "members": members}


def group_migrated(
    node: int, ts: int, group: str, *, group_type: str, generation: int, member_id: Optional[str],
    client_id: Optional[str], members: int,
) -> Event:
    """Online migration: the group became a `group_type` (CLASSIC or CONSUMER) group at
    `generation` (its generation / group epoch after the conversion), with `members` members,
    because of the member `member_id` (one of the consumer protocol joining a classic group, or
    the last one leaving a consumer group; its own join or leave event tells which)."""
    return {"v": SCHEMA_VERSION, "ts": ts, "node": node, "event": "group_migrated", "group": group,
            "group_type": group_type, "generation": generation, "member_id": member_id, "client_id": client_id,
            "members": members}


# -- transactions ------------------------------------------------------------------------------------

COMMIT = "commit"
ABORT = "abort"

NO_GROUP = ""
"""The `group` of an event that concerns no group (`transaction_completed`): not null, because
readers of version 1 take an event without a group for a malformed line."""

# Why a transaction ended (`transaction_completed`'s reason); null when the coordinator that
# completed it loaded it already preparing (a restart or a takeover), so it does not know.
END_TXN = "end txn"
TIMEOUT = "timeout"
NEW_PRODUCER = "new producer"  # an InitProducerId for its transactional id fenced it


def txn_offset_commit(
    node: int, ts: int, group: str, *, member_id: str, generation: int, producer_id: int, producer_epoch: int,
    topic: str, partition: int, offset: int,
) -> Event:
    """`member_id` and `generation` as the TxnOffsetCommit gave them (a consumer member's member
    epoch as generation; "" and -1 when it named none)."""
    return {"v": SCHEMA_VERSION, "ts": ts, "node": node, "event": "txn_offset_commit", "group": group,
            "member_id": member_id, "generation": generation, "topic": topic, "partition": partition,
            "offset": offset, "producer_id": producer_id, "producer_epoch": producer_epoch}


def partition_rows(partitions: Iterable[tuple[str, int, Optional[int]]]) -> list[dict[str, Any]]:
    """(topic, partition, offset or None) -> "partition[]" rows, in the order given."""
    return [{"topic": topic, "partition": partition, "offset": offset} for topic, partition, offset in partitions]


def txn_offsets_completed(
    node: int, ts: int, group: str, *, producer_id: int, producer_epoch: int, outcome: str,
    partitions: list[dict[str, Any]],
) -> Event:
    """`producer_epoch` is the marker's (an abort that fenced the producer: its epoch plus one);
    `outcome` COMMIT or ABORT; `partitions` every offset the producer held for the group (as
    `partition_rows` builds them), made visible or dropped."""
    return {"v": SCHEMA_VERSION, "ts": ts, "node": node, "event": "txn_offsets_completed", "group": group,
            "producer_id": producer_id, "producer_epoch": producer_epoch, "outcome": outcome,
            "partitions": partitions}


def transaction_completed(
    node: int, ts: int, *, transactional_id: str, producer_id: int, producer_epoch: int, outcome: str,
    reason: Optional[str], partitions: list[dict[str, Any]], started_ts: int,
) -> Event:
    """`outcome` COMMIT or ABORT, `reason` END_TXN, TIMEOUT or NEW_PRODUCER (null: unknown);
    `partitions` the transaction's partitions with null offsets, a group's offsets as its
    `__consumer_offsets` partition (AddOffsetsToTxn); `started_ts` when the transaction opened."""
    return {"v": SCHEMA_VERSION, "ts": ts, "node": node, "event": "transaction_completed", "group": NO_GROUP,
            "transactional_id": transactional_id, "producer_id": producer_id, "producer_epoch": producer_epoch,
            "outcome": outcome, "reason": reason, "partitions": partitions, "started_ts": started_ts,
            "duration_ms": ts - started_ts}
