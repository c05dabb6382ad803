"""The coordinator's event journal as stored (docs/lag-and-rebalances.md, "The coordinator's
event journal"): `events-NNNNNNNN.jsonl`, one compact JSON object a line, `seq` first. The
fields of every event type and their types, once: the core's builders
(`groupctl.coordinator.journal`) write exactly these (a test holds them to it), and the analyses
read them with the Spark schema built from `FIELDS` (`groupctl.analytics.schemas`).

Kinds: "int" (32 bits), "long" (64 bits), "string", "string[]", "assignment[]" (a list of
ASSIGNMENT_ROW objects) and "partition[]" (a list of PARTITION_ROW objects). Every field may be
null; an event leaves other types' fields out.

Versions: an event type's fields, once released, are what readers of that version expect (a
journal an earlier release wrote is held to them by a test); adding an event type, or a field
that only new event types carry, keeps the version, since readers select events by type and
ignore fields they do not know. A field added to a released event type also keeps the version
when its null means what the event meant before it (ADDED lists them; events an earlier release
wrote lack them, which readers take as null). Changing what a released field or event means takes a new
SCHEMA_VERSION, added to READABLE_VERSIONS once the analyses read it. The consumer-group events
(KIP-848: `group_epoch_bumped` ... `group_migrated`) were added that way, within version 1;
consumer groups also emit the classic `member_joined`, `member_left`, `member_expired`,
`offset_commit`, `offset_delete` and `group_deleted`, with the group epoch as `generation`
(an `offset_commit` of a consumer member carries its member epoch, as its request does).
Transactions (issue 17) added `txn_offset_commit`, `txn_offsets_completed` and
`transaction_completed` within version 1, and `producer_id` / `producer_epoch` to `offset_commit`
(null: not made visible by a transaction, as every earlier `offset_commit`). `transaction_completed`
concerns a transactional id, not a group: its `group` is "" (not null, which readers of
version 1 count as a malformed line).
"""

from __future__ import annotations

SCHEMA_VERSION = 1
READABLE_VERSIONS = (1,)
"""The schema versions a reader understands (the analyses skip rows of any other); SCHEMA_VERSION is one."""

FIELDS = (
    ("v", "int"), ("ts", "long"), ("node", "int"), ("seq", "long"), ("event", "string"), ("group", "string"),
    ("generation", "int"), ("reason", "string"), ("member_id", "string"), ("client_id", "string"),
    ("client_host", "string"), ("instance_id", "string"), ("replaced_member_id", "string"),
    ("members", "int"), ("started_ts", "long"), ("duration_ms", "long"), ("state", "string"),
    ("protocol", "string"), ("leader", "string"), ("member_ids", "string[]"), ("assignment", "assignment[]"),
    ("topic", "string"), ("partition", "int"), ("offset", "long"),
    ("member_epoch", "int"), ("moved", "int"), ("revoking", "assignment[]"), ("group_type", "string"),
    ("producer_id", "long"), ("producer_epoch", "int"), ("transactional_id", "string"), ("outcome", "string"),
    ("partitions", "partition[]"),
)
"""Every field of every event, in the order the analyses lay their columns out."""

ASSIGNMENT_ROW = (("member_id", "string"), ("client_id", "string"), ("topic", "string"), ("partition", "int"))
"""One partition of an "assignment[]" field: owned (`rebalance_completed`, `member_reconciled`),
to be given up (`member_reconciled`'s `revoking`) or targeted (`target_assignment_computed`)."""

PARTITION_ROW = (("topic", "string"), ("partition", "int"), ("offset", "long"))
"""One partition of a "partition[]" field: an offset a transaction held for a group
(`txn_offsets_completed`), or a partition of a transaction (`transaction_completed`, offset null)."""

COMMON = ("v", "seq", "ts", "node", "event", "group")
"""The fields every event has (`seq` is the writer's, the others the core's)."""

EVENTS = {
    "rebalance_started": ("generation", "reason", "member_id", "client_id", "members"),
    "rebalance_completed": ("generation", "reason", "started_ts", "duration_ms", "state", "protocol", "leader",
                            "members", "member_ids", "assignment"),
    "member_joined": ("member_id", "client_id", "client_host", "instance_id", "generation", "replaced_member_id"),
    "member_left": ("member_id", "client_id", "generation"),
    "member_expired": ("member_id", "client_id", "generation", "reason"),
    "offset_commit": ("member_id", "generation", "topic", "partition", "offset", "producer_id", "producer_epoch"),
    "offset_delete": ("topic", "partition"),
    "group_deleted": (),
    "group_epoch_bumped": ("generation", "reason", "member_id", "client_id", "members"),
    "target_assignment_computed": ("generation", "protocol", "members", "moved", "member_ids", "assignment"),
    "member_reconciled": ("member_id", "client_id", "instance_id", "generation", "member_epoch", "state",
                          "assignment", "revoking"),
    "group_stable": ("generation", "members"),
    "group_migrated": ("group_type", "generation", "member_id", "client_id", "members"),
    "txn_offset_commit": ("member_id", "generation", "topic", "partition", "offset", "producer_id", "producer_epoch"),
    "txn_offsets_completed": ("producer_id", "producer_epoch", "outcome", "partitions"),
    "transaction_completed": ("transactional_id", "producer_id", "producer_epoch", "outcome", "reason", "partitions",
                              "started_ts", "duration_ms"),
}
"""Each event type's own fields."""

ADDED = {"offset_commit": ("producer_id", "producer_epoch")}
"""Fields added to a released event type within its version: an event written before lacks them."""
