"""The coordinator's event journal as stored (docs/lag-and-rebalances.md, "The coordinator's
event journal"): `events-NNNNNNNN.jsonl`, one compact JSON object a line, `seq` first. The
fields of every event type and their types, once: the core's builders
(`groupctl.coordinator.journal`) write exactly these (a test holds them to it), and the analyses
read them with the Spark schema built from `FIELDS` (`groupctl.analytics.schemas`).

Kinds: "int" (32 bits), "long" (64 bits), "string", "string[]", and "assignment[]" (a list of
ASSIGNMENT_ROW objects). Every field may be null; an event leaves other types' fields out.
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
)
"""Every field of every event, in the order the analyses lay their columns out."""

ASSIGNMENT_ROW = (("member_id", "string"), ("client_id", "string"), ("topic", "string"), ("partition", "int"))
"""One owned partition of a `rebalance_completed` event's `assignment`."""

COMMON = ("v", "seq", "ts", "node", "event", "group")
"""The fields every event has (`seq` is the writer's, the others the core's)."""

EVENTS = {
    "rebalance_started": ("generation", "reason", "member_id", "client_id", "members"),
    "rebalance_completed": ("generation", "reason", "started_ts", "duration_ms", "state", "protocol", "leader",
                            "members", "member_ids", "assignment"),
    "member_joined": ("member_id", "client_id", "client_host", "instance_id", "generation", "replaced_member_id"),
    "member_left": ("member_id", "client_id", "generation"),
    "member_expired": ("member_id", "client_id", "generation", "reason"),
    "offset_commit": ("member_id", "generation", "topic", "partition", "offset"),
    "offset_delete": ("topic", "partition"),
    "group_deleted": (),
}
"""Each event type's own fields."""
