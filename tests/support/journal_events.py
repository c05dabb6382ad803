"""Hand-written coordinator journal events for the journal analysis tests.

A `Journal` fills in the common fields (v, node, seq +1 per event of a node, group) so a test
states only what matters, keeps every event it made in the order made, and turns them into a
DataFrame with schemas.JOURNAL_SCHEMA. `as_record` is the compact JSON line the audit reports an
event as.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Optional

from groupctl.layout import journal

FIELDS = tuple(name for name, _ in journal.FIELDS)
ASSIGNMENT_FIELDS = tuple(name for name, _ in journal.ASSIGNMENT_ROW)
ASSIGNMENT_LISTS = {name for name, kind in journal.FIELDS if kind == "assignment[]"}
PARTITION_FIELDS = tuple(name for name, _ in journal.PARTITION_ROW)
PARTITION_LISTS = {name for name, kind in journal.FIELDS if kind == "partition[]"}


class Journal:
    def __init__(self, group: str = "orders", node: int = 1):
        self.group = group
        self.node = node
        self.events: list[dict] = []
        self._last_seq: dict[int, int] = defaultdict(int)

    def event(self, kind: str, ts: int, *, group: Optional[str] = None, node: Optional[int] = None,
              **fields) -> dict:
        node = self.node if node is None else node
        self._last_seq[node] += 1
        unknown = set(fields) - set(FIELDS)
        assert not unknown, f"not journal fields: {unknown}"
        event = dict.fromkeys(FIELDS)
        event.update(v=1, ts=ts, node=node, seq=self._last_seq[node], event=kind,
                     group=self.group if group is None else group, **fields)
        self.events.append(event)
        return event

    def started(self, ts: int, generation: int, reason: str = "join", **fields) -> dict:
        return self.event("rebalance_started", ts, generation=generation, reason=reason, **fields)

    def completed(self, ts: int, generation: int, *, started_ts: int, owners: Optional[dict] = None,
                  reason: str = "join", state: str = "Stable", **fields) -> dict:
        """owners: {member_id: ["topic/partition", ...]}; members, leader and member_ids follow from
        it unless given."""
        owners = owners or {}
        assignment = _rows(owners)
        derived = dict(protocol="range" if owners else None, leader=next(iter(owners), None),
                       members=len(owners), member_ids=list(owners))
        return self.event("rebalance_completed", ts, generation=generation, reason=reason, started_ts=started_ts,
                          duration_ms=ts - started_ts, state=state, assignment=assignment, **{**derived, **fields})

    def joined(self, ts: int, member_id: str, generation: int, **fields) -> dict:
        return self.event("member_joined", ts, member_id=member_id, client_id=member_id.split("-")[0],
                          client_host="/127.0.0.1", generation=generation, **fields)

    def left(self, ts: int, member_id: str, generation: int, **fields) -> dict:
        return self.event("member_left", ts, member_id=member_id, client_id=member_id.split("-")[0],
                          generation=generation, **fields)

    def expired(self, ts: int, member_id: str, generation: int, reason: str = "session expiry", **fields) -> dict:
        return self.event("member_expired", ts, member_id=member_id, client_id=member_id.split("-")[0],
                          generation=generation, reason=reason, **fields)

    def commit(self, ts: int, member_id: str, generation: int, partition: str, offset: int, **fields) -> dict:
        """A member's commit; member_id "" and generation -1 make a simple/admin commit."""
        topic, number = partition.rsplit("/", 1)
        return self.event("offset_commit", ts, member_id=member_id, generation=generation, topic=topic,
                          partition=int(number), offset=offset, **fields)

    def offset_delete(self, ts: int, partition: str, **fields) -> dict:
        topic, number = partition.rsplit("/", 1)
        return self.event("offset_delete", ts, topic=topic, partition=int(number), **fields)

    def group_deleted(self, ts: int, **fields) -> dict:
        return self.event("group_deleted", ts, **fields)

    # -- consumer groups (KIP-848) ---------------------------------------------------------------

    def bumped(self, ts: int, epoch: int, reason: str = "join", *, members: int = 1, member_id: Optional[str] = None,
               **fields) -> dict:
        return self.event("group_epoch_bumped", ts, generation=epoch, reason=reason, member_id=member_id,
                          client_id=member_id.split("-")[0] if member_id else None, members=members, **fields)

    def target(self, ts: int, epoch: int, targets: dict, *, moved: int, members: Optional[int] = None,
               **fields) -> dict:
        """targets: {member_id: ["topic/partition", ...]} of the members whose target changed."""
        return self.event("target_assignment_computed", ts, generation=epoch, protocol="uniform",
                          members=len(targets) if members is None else members, moved=moved,
                          member_ids=list(targets), assignment=_rows(targets), **fields)

    def reconciled(self, ts: int, member_id: str, member_epoch: int, owned: Optional[list] = None, *,
                   revoking: Optional[list] = None, state: str = "stable", epoch: Optional[int] = None,
                   **fields) -> dict:
        """owned: ["topic/partition", ...] it is assigned (None: the same as its previous event);
        epoch: the group epoch (default: the member epoch)."""
        return self.event("member_reconciled", ts, member_id=member_id, client_id=member_id.split("-")[0],
                          generation=member_epoch if epoch is None else epoch, member_epoch=member_epoch,
                          state=state, assignment=None if owned is None else _rows({member_id: owned}),
                          revoking=_rows({member_id: revoking}) if revoking else None, **fields)

    def stable(self, ts: int, epoch: int, members: int = 1, **fields) -> dict:
        return self.event("group_stable", ts, generation=epoch, members=members, **fields)

    def migrated(self, ts: int, group_type: str, generation: int, members: int = 1, **fields) -> dict:
        return self.event("group_migrated", ts, group_type=group_type, generation=generation, members=members,
                          **fields)

    # -- transactions ------------------------------------------------------------------------------

    def txn_commit(self, ts: int, producer: tuple[int, int], partition: str, offset: int, **fields) -> dict:
        """A TxnOffsetCommit's offset held for `producer` (producer id, epoch), naming no member."""
        topic, number = partition.rsplit("/", 1)
        return self.event("txn_offset_commit", ts, member_id="", generation=-1, topic=topic, partition=int(number),
                          offset=offset, producer_id=producer[0], producer_epoch=producer[1], **fields)

    def txn_completed(self, ts: int, producer: tuple[int, int], outcome: str, held: dict, **fields) -> dict:
        """held: {"topic/partition": offset} the completion lists."""
        rows = [dict(topic=name.rsplit("/", 1)[0], partition=int(name.rsplit("/", 1)[1]), offset=offset)
                for name, offset in held.items()]
        return self.event("txn_offsets_completed", ts, producer_id=producer[0], producer_epoch=producer[1],
                          outcome=outcome, partitions=rows, **fields)

    def txn_visible(self, ts: int, producer: tuple[int, int], partition: str, offset: int, **fields) -> dict:
        """An offset a transaction's commit made visible."""
        return self.commit(ts, "", -1, partition, offset, producer_id=producer[0], producer_epoch=producer[1],
                           **fields)

    def frame(self, spark):
        """The events as a DataFrame with JOURNAL_SCHEMA, in reverse order (analyses must not rely on input order)."""
        from groupctl.analytics.schemas import JOURNAL_SCHEMA

        rows = [tuple(_row_value(name, event[name]) for name in FIELDS) for event in reversed(self.events)]
        return spark.createDataFrame(rows, schema=JOURNAL_SCHEMA)


def _rows(owners: dict) -> list[dict]:
    """{member_id: ["topic/partition", ...]} -> assignment rows."""
    return [dict(member_id=member, client_id=member.split("-")[0], topic=topic, partition=int(partition))
            for member, partitions in owners.items()
            for topic, partition in (name.rsplit("/", 1) for name in partitions)]


def _row_value(name: str, value):
    if name in ASSIGNMENT_LISTS and value is not None:
        return [tuple(entry[field] for field in ASSIGNMENT_FIELDS) for entry in value]
    if name in PARTITION_LISTS and value is not None:
        return [tuple(entry[field] for field in PARTITION_FIELDS) for entry in value]
    return value


def as_record(event: dict) -> str:
    """The compact JSON line of an event, without the fields its type leaves null."""
    return json.dumps({name: event[name] for name in FIELDS if event[name] is not None}, separators=(",", ":"))
