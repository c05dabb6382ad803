"""An audit of the coordinator's invariants over its event journal, with the evidence of each breach.

`audit_violations` and `audit_summary` are pure transforms of journal events
(schemas.JOURNAL_SCHEMA) in any order; event order is (ts, node, seq), see `events`. Events are audited per incarnation of
a group (the group_deleted events before them): a deleted group that comes back starts again at
generation 0 with no offsets, so two incarnations are never compared.

Invariants (docs/lag-and-rebalances.md, "analyze audit", states them for users):
- single_owner: per (group, generation, topic, partition) over every rebalance_completed of the
  generation, so two nodes completing one generation differently (split brain) are caught too.
  Consumer groups (KIP-848): per (group, member epoch, topic, partition) over every
  member_reconciled that says a member owns it at that epoch (its `assignment`, or when null
  the one of its previous event, plus its `revoking`); a static member's successor is the same
  owner (owners are instance ids, else member ids); epoch -2 (a static member away) is no epoch.
- owner_commits: an offset_commit with generation >= 0 is by an owner of the partition in that
  generation: an assigned member; a static member restarted within it (member_joined's
  replaced_member_id), which owns what its instance's earlier ids owned; or, for a partition the
  generation assigns to nobody, a member of it that owned the partition in the generation before
  (a cooperative consumer committing what it was just revoked). A generation whose assignment the
  journal does not hold (rotated away, or a non-"consumer" protocol recorded empty) makes the
  commit `unverified`, never a violation; an Empty generation assigns nothing. A consumer
  member's commit (its member epoch as generation) is checked against what the journal says it
  owned at that epoch, when it holds the member's partitions at that epoch.
- monotonic_offsets: a committed offset never goes back, except by an explicit reset: a commit
  with generation < 0, or the first commit after an offset_delete of the partition. A member's
  commit after an admin reset is compared with the reset.
- txn_offsets (transactions, per group and producer id): an offset a transaction made visible
  (an offset_commit with a producer_id) follows a txn_offsets_completed of that producer that
  committed, under the same epoch, and lists that offset; a completion lists what the producer
  held: per partition, its last txn_offset_commit since the producer's previous completion. A
  completion listing an offset the producer's previous (aborted) completion listed, with no
  txn_offset_commit of it in between, breaks it too: an aborted offset came back. A completion
  whose txn_offset_commit is not in the journal (rotated away, or held through another node
  whose journal is not read) is `unverified`.

A violation row's `records` are its evidence events as compact JSON lines, in event order.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, DataFrame, Window, WindowSpec
from pyspark.sql import functions as F

from groupctl.analytics.events import (
    GROUP_DELETED,
    MEMBER_JOINED,
    MEMBER_RECONCILED,
    OFFSET_COMMIT,
    OFFSET_DELETE,
    REBALANCE_COMPLETED,
    TXN_OFFSET_COMMIT,
    TXN_OFFSETS_COMPLETED,
    event_record,
    record_json,
    with_incarnation,
)

SINGLE_OWNER = "single_owner"
OWNER_COMMITS = "owner_commits"
MONOTONIC_OFFSETS = "monotonic_offsets"
TXN_OFFSETS = "txn_offsets"
INVARIANTS = (SINGLE_OWNER, OWNER_COMMITS, MONOTONIC_OFFSETS, TXN_OFFSETS)

OK, VIOLATION, UNVERIFIED = "ok", "violation", "unverified"

VIOLATION_COLUMNS = ("invariant", "group", "generation", "topic", "partition", "detail", "records")
GENERATION_KEY = ("group", "incarnation", "generation")
PARTITION_KEY = (*GENERATION_KEY, "topic", "partition")
PRODUCER_KEY = ("group", "incarnation", "producer_id")
COMMIT, ABORT = "commit", "abort"


def audit_violations(journal: DataFrame) -> DataFrame:
    """Every breach of INVARIANTS, one row each, with the columns of VIOLATION_COLUMNS."""
    events = _audited_events(journal)
    owners = _owners(events)
    completions = _completions(events)
    claims = _claims(events)
    commit_checks = _owner_commit_checks(events, owners, claims)
    found = [
        _single_owner_violations(_single_owner_checks(owners), completions),
        _epoch_owner_violations(_single_owner_checks(_epoch_owners(claims)), events),
        _owner_commit_violations(commit_checks.where(F.col("consumer_known").isNull()), completions),
        _consumer_commit_violations(commit_checks.where(F.col("consumer_known")), claims, events),
        _monotonic_violations(_monotonic_checks(events)),
        _txn_violations(_txn_completion_checks(events)),
        _txn_violations(_txn_visible_checks(events)),
    ]
    return (reduce(DataFrame.unionByName, found)
            .orderBy("last_record_at", "invariant", "group", "topic", "partition")
            .select(*VIOLATION_COLUMNS))


def audit_summary(journal: DataFrame) -> DataFrame:
    """Per invariant (in INVARIANTS order): invariant, checked, violations, unverified (longs)."""
    events = _audited_events(journal)
    owners = _owners(events)
    claims = _claims(events)
    checks = {
        SINGLE_OWNER: _single_owner_checks(owners).select("verdict").unionByName(
            _single_owner_checks(_epoch_owners(claims)).select("verdict")),
        OWNER_COMMITS: _owner_commit_checks(events, owners, claims),
        MONOTONIC_OFFSETS: _monotonic_checks(events),
        TXN_OFFSETS: _txn_completion_checks(events).select("verdict").unionByName(
            _txn_visible_checks(events).select("verdict")),
    }
    tallies = [
        checks[name].agg(
            F.lit(name).alias("invariant"),
            F.count_if(F.col("verdict") != UNVERIFIED).alias("checked"),
            F.count_if(F.col("verdict") == VIOLATION).alias("violations"),
            F.count_if(F.col("verdict") == UNVERIFIED).alias("unverified"),
        )
        for name in INVARIANTS
    ]
    return reduce(DataFrame.unionByName, tallies)


def _audited_events(journal: DataFrame) -> DataFrame:
    """The events the audit reads, with `at` (place in event order) and `incarnation` (group_deleted
    events of the group so far, `events.with_incarnation`). Their `event_record()` is built where it
    becomes evidence, after the window's shuffle, so the shuffle does not carry every event twice."""
    audited = (REBALANCE_COMPLETED, MEMBER_JOINED, MEMBER_RECONCILED, OFFSET_COMMIT, OFFSET_DELETE, GROUP_DELETED,
               TXN_OFFSET_COMMIT, TXN_OFFSETS_COMPLETED)
    return with_incarnation(journal.where(F.col("event").isin(*audited)))


def _so_far(order: WindowSpec) -> WindowSpec:
    """The window frame from the partition's first row to the current one."""
    return order.rowsBetween(Window.unboundedPreceding, Window.currentRow)


def _is(event: str) -> Column:
    return F.col("event") == event


# -- evidence ---------------------------------------------------------------------------------

def _evidence(at: Column, record: Column) -> Column:
    """One evidence entry: an event and its place in event order (sorting entries sorts by it)."""
    return F.struct(at.alias("at"), record.alias("event"))


def _completions(events: DataFrame) -> DataFrame:
    """(GENERATION_KEY, completions): the evidence entries of each generation's rebalance_completed events."""
    return (events.where(_is(REBALANCE_COMPLETED))
            .groupBy(*GENERATION_KEY)
            .agg(F.collect_list(_evidence(F.col("at"), event_record())).alias("completions")))


def _violation_rows(breaches: DataFrame, invariant: str, detail: Column, evidence: Column) -> DataFrame:
    in_order = F.sort_array(evidence)
    return breaches.select(
        F.lit(invariant).alias("invariant"), "group", "generation", "topic", "partition",
        detail.alias("detail"),
        F.transform(in_order, lambda entry: record_json(entry["event"])).alias("records"),
        F.element_at(in_order, -1)["at"].alias("last_record_at"),
    )


def _owners(events: DataFrame) -> DataFrame:
    """(PARTITION_KEY, owners, assigned_at): the sorted distinct members each partition of a
    generation is assigned to, and the places of the completions that assign it."""
    return (events.where(_is(REBALANCE_COMPLETED))
            .select(*GENERATION_KEY, "at", F.explode("assignment").alias("entry"))
            .groupBy(*GENERATION_KEY, "entry.topic", "entry.partition")
            .agg(F.sort_array(F.collect_set("entry.member_id")).alias("owners"),
                 F.collect_set("at").alias("assigned_at")))


# -- single_owner -----------------------------------------------------------------------------

def _single_owner_checks(owners: DataFrame) -> DataFrame:
    return owners.withColumn(
        "verdict", F.when(F.size("owners") > 1, F.lit(VIOLATION)).otherwise(F.lit(OK)))


def _single_owner_violations(checks: DataFrame, completions: DataFrame) -> DataFrame:
    breaches = checks.where(F.col("verdict") == VIOLATION).join(completions, list(GENERATION_KEY))
    detail = F.format_string("generation %d assigns %s/%d to %d members: %s", "generation", "topic",
                             "partition", F.size("owners"), F.array_join("owners", ", "))
    assigning = F.filter("completions", lambda entry: F.array_contains("assigned_at", entry["at"]))
    return _violation_rows(breaches, SINGLE_OWNER, detail, assigning)


# -- owner_commits ----------------------------------------------------------------------------

def _known_assignments(events: DataFrame) -> DataFrame:
    """(GENERATION_KEY, assignment_known): the generations whose assignment the journal holds."""
    readable = (F.col("state") == "Empty") | (F.size("assignment") > 0)
    return (events.where(_is(REBALANCE_COMPLETED) & readable)
            .select(*GENERATION_KEY).distinct()
            .withColumn("assignment_known", F.lit(True)))


def _inherited_ids(events: DataFrame) -> DataFrame:
    """(GENERATION_KEY, member_id, inherited): the member ids whose assignment `member_id` holds in
    a generation because it is the same static instance restarted (member_joined with
    replaced_member_id): one id after another within a generation, so any id its instance had."""
    replacements = (events.where(_is(MEMBER_JOINED) & F.col("replaced_member_id").isNotNull())
                    .select(*GENERATION_KEY, "instance_id", "member_id", "replaced_member_id"))
    heirs = replacements.select(*GENERATION_KEY, "instance_id", "member_id")
    return (heirs.join(replacements.select(*GENERATION_KEY, "instance_id", "replaced_member_id"),
                       [*GENERATION_KEY, "instance_id"])
            .groupBy(*GENERATION_KEY, "member_id")
            .agg(F.collect_set("replaced_member_id").alias("inherited")))


def _generation_members(events: DataFrame) -> DataFrame:
    """(GENERATION_KEY, generation_members): every member id a generation's completions name."""
    return (events.where(_is(REBALANCE_COMPLETED))
            .groupBy(*GENERATION_KEY)
            .agg(F.array_distinct(F.flatten(F.collect_list(F.coalesce(
                "member_ids", F.array().cast("array<string>"))))).alias("generation_members")))


def _owner_commit_checks(events: DataFrame, owners: DataFrame, claims: DataFrame) -> DataFrame:
    """Each member commit (generation >= 0) with its verdict; `consumer_known` is true when it was
    checked against a consumer member's ownership at its member epoch (null otherwise)."""
    member_commits = events.where(_is(OFFSET_COMMIT) & (F.col("generation") >= 0)).select(
        *PARTITION_KEY, "member_id", "offset", "at", event_record().alias("record"))
    known_members = (claims.where(F.col("listed_at").isNotNull()).select(*GENERATION_KEY, "member_id").distinct()
                     .withColumn("consumer_known", F.lit(True)))
    owned_by_consumer = (claims.where(F.col("topic").isNotNull()).select(*PARTITION_KEY, "member_id").distinct()
                         .withColumn("consumer_owned", F.lit(True)))
    no_ids = F.array().cast("array<string>")
    owner_ids = F.coalesce("owners", no_ids)
    owned_by_member = (F.array_contains(owner_ids, F.col("member_id"))
                       | F.arrays_overlap(owner_ids, F.coalesce("inherited", no_ids)))
    revoked_from_member = ((F.size(owner_ids) == 0)
                           & F.array_contains(F.coalesce("previous_owners", no_ids), F.col("member_id"))
                           & F.array_contains(F.coalesce("generation_members", no_ids), F.col("member_id")))
    previous = owners.select(*GENERATION_KEY[:-1], (F.col("generation") + 1).alias("generation"), "topic",
                             "partition", F.col("owners").alias("previous_owners"))
    return (member_commits
            .join(_inherited_ids(events), [*GENERATION_KEY, "member_id"], "left")
            .join(previous, list(PARTITION_KEY), "left")
            .join(_generation_members(events), list(GENERATION_KEY), "left")
            .join(_known_assignments(events), list(GENERATION_KEY), "left")
            .join(owners.select(*PARTITION_KEY, "owners"), list(PARTITION_KEY), "left")
            .join(known_members, [*GENERATION_KEY, "member_id"], "left")
            .join(owned_by_consumer, [*PARTITION_KEY, "member_id"], "left")
            .withColumn("verdict", F.when(F.col("consumer_known"), F.when(F.col("consumer_owned"), F.lit(OK))
                                          .otherwise(F.lit(VIOLATION)))
                        .when(F.col("assignment_known").isNull(), F.lit(UNVERIFIED))
                        .when(owned_by_member | revoked_from_member, F.lit(OK))
                        .otherwise(F.lit(VIOLATION))))


def _owner_commit_violations(checks: DataFrame, completions: DataFrame) -> DataFrame:
    breaches = checks.where(F.col("verdict") == VIOLATION).join(completions, list(GENERATION_KEY))
    detail = F.format_string("member %s committed offset %d to %s/%d in generation %d, which assigns it to %s",
                             "member_id", "offset", "topic", "partition", "generation",
                             F.coalesce(F.array_join("owners", ", "), F.lit("no member")))
    evidence = F.concat("completions", F.array(_evidence(F.col("at"), F.col("record"))))
    return _violation_rows(breaches, OWNER_COMMITS, detail, evidence)


# -- consumer groups: ownership at member epochs ---------------------------------------------

def _claims(events: DataFrame) -> DataFrame:
    """One row per partition a consumer member owns at a member epoch (> 0), by `member_reconciled`:
    (GENERATION_KEY with the member epoch as generation, topic, partition, member_id, owner, at,
    listed_at). `listed_at` is the place of the event that listed the member's assigned partitions
    (this one, or its previous event with a list), null when the journal has no list of them; a
    member whose event owns nothing has one row with a null topic, so its epoch is still known."""
    no_rows = F.array().cast("array<struct<member_id:string,client_id:string,topic:string,partition:int>>")
    so_far = _so_far(Window.partitionBy("group", "incarnation", "member_id").orderBy("at"))
    reconciled = (events.where(_is(MEMBER_RECONCILED) & (F.col("member_epoch") > 0))
                  .withColumn("listed", F.last("assignment", ignorenulls=True).over(so_far))
                  .withColumn("listed_at", F.last(F.when(F.col("assignment").isNotNull(), F.col("at")),
                                                  ignorenulls=True).over(so_far)))
    owned = F.concat(F.coalesce("listed", no_rows), F.coalesce("revoking", no_rows))
    return reconciled.select(
        "group", "incarnation", F.col("member_epoch").alias("generation"), "member_id",
        F.coalesce("instance_id", "member_id").alias("owner"), "at", "listed_at",
        F.explode_outer(owned).alias("entry")).select(
        *GENERATION_KEY, F.col("entry.topic").alias("topic"), F.col("entry.partition").alias("partition"),
        "member_id", "owner", "at", "listed_at")


def _epoch_owners(claims: DataFrame) -> DataFrame:
    """(PARTITION_KEY with the member epoch as generation, owners, evidence_at): the sorted
    distinct owners of each partition at each member epoch, and the places of the events that say so."""
    return (claims.where(F.col("topic").isNotNull())
            .groupBy(*PARTITION_KEY)
            .agg(F.sort_array(F.collect_set("owner")).alias("owners"),
                 F.array_distinct(F.flatten(F.collect_list(F.array_compact(F.array("at", "listed_at")))))
                 .alias("evidence_at")))


def _evidence_at(breaches: DataFrame, key: tuple[str, ...], positions: str, events: DataFrame) -> DataFrame:
    """(key, evidence): each breach's evidence entries for the events at `positions` (an array of places)."""
    records = events.select("group", "at", event_record().alias("record"))
    return (breaches.select(*key, F.explode(positions).alias("at"))
            .join(records, ["group", "at"])
            .groupBy(*key)
            .agg(F.collect_list(_evidence(F.col("at"), F.col("record"))).alias("evidence")))


def _epoch_owner_violations(checks: DataFrame, events: DataFrame) -> DataFrame:
    breaches = checks.where(F.col("verdict") == VIOLATION)
    with_evidence = breaches.join(_evidence_at(breaches, PARTITION_KEY, "evidence_at", events), list(PARTITION_KEY))
    detail = F.format_string("member epoch %d: %s/%d is owned by %d members: %s", "generation", "topic",
                             "partition", F.size("owners"), F.array_join("owners", ", "))
    return _violation_rows(with_evidence, SINGLE_OWNER, detail, F.col("evidence"))


def _consumer_commit_violations(checks: DataFrame, claims: DataFrame, events: DataFrame) -> DataFrame:
    """The commits of consumer members outside what they owned at their member epoch, with the
    member's member_reconciled events at that epoch (and the one that listed its partitions)."""
    member_key = (*GENERATION_KEY, "member_id")
    breaches = checks.where(F.col("verdict") == VIOLATION)
    said = (claims.groupBy(*member_key)
            .agg(F.array_distinct(F.flatten(F.collect_list(F.array_compact(F.array("at", "listed_at")))))
                 .alias("said_at")))
    evidence = _evidence_at(breaches.join(said, list(member_key)), member_key, "said_at", events)
    detail = F.format_string("member %s committed offset %d to %s/%d at member epoch %d, when it did not own it",
                             "member_id", "offset", "topic", "partition", "generation")
    return _violation_rows(breaches.join(evidence, list(member_key)), OWNER_COMMITS, detail,
                           F.concat("evidence", F.array(_evidence(F.col("at"), F.col("record")))))


# -- monotonic_offsets ------------------------------------------------------------------------

def _monotonic_checks(events: DataFrame) -> DataFrame:
    """Each commit that has a previous commit of its partition (in its group's incarnation) and is
    not an explicit reset, with that previous commit as `previous`."""
    partition_order = Window.partitionBy("group", "incarnation", "topic", "partition").orderBy("at")
    previous_commit = F.struct("at", "offset", "generation", "member_id", "record")
    commits = (events.where(F.col("event").isin(OFFSET_COMMIT, OFFSET_DELETE))
               .withColumn("record", event_record())
               .withColumn("deleted_at", _latest(OFFSET_DELETE, F.col("at")).over(_so_far(partition_order)))
               .withColumn("previous", _latest(OFFSET_COMMIT, previous_commit).over(
                   partition_order.rowsBetween(Window.unboundedPreceding, -1)))
               .where(_is(OFFSET_COMMIT)))
    deleted_since_previous = F.coalesce(F.col("deleted_at") > F.col("previous.at"), F.lit(False))
    explicit_reset = (F.col("generation") < 0) | deleted_since_previous
    return (commits.where(F.col("previous").isNotNull() & ~explicit_reset)
            .withColumn("verdict", F.when(F.col("offset") < F.col("previous.offset"), F.lit(VIOLATION))
                        .otherwise(F.lit(OK))))


def _latest(event: str, value: Column) -> Column:
    """The value of the latest `event` row of the window frame (null if none)."""
    return F.last(F.when(_is(event), value), ignorenulls=True)


def _committer(generation: Column, member_id: Column) -> Column:
    return (F.when(generation < 0, F.lit("admin commit"))
            .otherwise(F.format_string("member %s, generation %d", member_id, generation)))


def _monotonic_violations(checks: DataFrame) -> DataFrame:
    breaches = checks.where(F.col("verdict") == VIOLATION)
    detail = F.format_string(
        "committed offset of %s/%d went back from %d (%s) to %d (%s) with no reset in between",
        "topic", "partition", "previous.offset",
        _committer(F.col("previous.generation"), F.col("previous.member_id")),
        "offset", _committer(F.col("generation"), F.col("member_id")))
    evidence = F.array(_evidence(F.col("previous.at"), F.col("previous.record")),
                       _evidence(F.col("at"), F.col("record")))
    return _violation_rows(breaches, MONOTONIC_OFFSETS, detail, evidence)


# -- txn_offsets ------------------------------------------------------------------------------

def _txn_completions(events: DataFrame) -> DataFrame:
    """(PRODUCER_KEY, at, producer_epoch, outcome, partitions, record, previous): each
    txn_offsets_completed, with the producer's previous one in the group (null for its first)."""
    order = Window.partitionBy(*PRODUCER_KEY).orderBy("at")
    return (events.where(_is(TXN_OFFSETS_COMPLETED))
            .select(*PRODUCER_KEY, "at", "producer_epoch", "outcome", "partitions", event_record().alias("record"))
            .withColumn("previous", F.lag(F.struct("at", "outcome", "partitions", "record")).over(order)))


def _txn_held(events: DataFrame) -> DataFrame:
    """(PRODUCER_KEY, at, topic, partition, held): for each completion (its place as `at`), the
    last txn_offset_commit of each partition since the producer's previous completion."""
    following = (Window.partitionBy(*PRODUCER_KEY).orderBy("at")
                 .rowsBetween(Window.currentRow, Window.unboundedFollowing))
    completed_at = F.first(F.when(_is(TXN_OFFSETS_COMPLETED), F.col("at")), ignorenulls=True).over(following)
    return (events.where(F.col("event").isin(TXN_OFFSET_COMMIT, TXN_OFFSETS_COMPLETED))
            .withColumn("completed_at", completed_at)
            .where(_is(TXN_OFFSET_COMMIT) & F.col("completed_at").isNotNull())
            .groupBy(*PRODUCER_KEY, F.col("completed_at").alias("at"), "topic", "partition")
            .agg(F.max_by(F.struct("at", "offset", event_record().alias("record")), "at").alias("held")))


def _lists(partitions: Column, topic: Column, partition: Column, offset: Column) -> Column:
    """Whether a "partition[]" list has the row (topic, partition, offset)."""
    return F.coalesce(F.exists(partitions, lambda row: (row["topic"] == topic) & (row["partition"] == partition)
                               & (row["offset"] == offset)), F.lit(False))


def _txn_completion_checks(events: DataFrame) -> DataFrame:
    """Each partition a txn_offsets_completed lists, against what the journal says its producer held."""
    rows = (_txn_completions(events)
            .select(*PRODUCER_KEY, "at", "producer_epoch", "outcome", "record", "previous",
                    F.explode("partitions").alias("entry"))
            .select("*", F.col("entry.topic").alias("topic"), F.col("entry.partition").alias("partition"),
                    F.col("entry.offset").alias("offset")))
    came_back = ((F.col("previous.outcome") == ABORT)
                 & _lists(F.col("previous.partitions"), F.col("topic"), F.col("partition"), F.col("offset")))
    detail = (F.when(F.col("held").isNotNull(), F.format_string(
                  "producer %d's %s completed offset %d of %s/%d, where it held %d", "producer_id", "outcome",
                  "offset", "topic", "partition", "held.offset"))
              .otherwise(F.format_string(
                  "producer %d's %s completed offset %d of %s/%d, which its previous transaction held and aborted",
                  "producer_id", "outcome", "offset", "topic", "partition")))
    evidence = F.filter(F.array(
        F.when(came_back & F.col("held").isNull(), _evidence(F.col("previous.at"), F.col("previous.record"))),
        F.when(F.col("held").isNotNull(), _evidence(F.col("held.at"), F.col("held.record"))),
        _evidence(F.col("at"), F.col("record"))), lambda entry: entry.isNotNull())
    return (rows.join(_txn_held(events), [*PRODUCER_KEY, "at", "topic", "partition"], "left")
            .withColumn("verdict", F.when(F.col("held.offset") == F.col("offset"), F.lit(OK))
                        .when(F.col("held").isNotNull() | came_back, F.lit(VIOLATION))
                        .otherwise(F.lit(UNVERIFIED)))
            .withColumn("detail", detail)
            .withColumn("evidence", evidence))


def _txn_visible_checks(events: DataFrame) -> DataFrame:
    """Each offset_commit that names a producer, against the producer's last completion in the group."""
    commits = events.where(_is(OFFSET_COMMIT) & F.col("producer_id").isNotNull()).select(
        *PRODUCER_KEY, "at", "topic", "partition", "offset", "producer_epoch", event_record().alias("record"))
    completions = _txn_completions(events).select(
        *PRODUCER_KEY, "at", F.struct("at", "producer_epoch", "outcome", "partitions", "record").alias("completion"))
    so_far = _so_far(Window.partitionBy(*PRODUCER_KEY).orderBy("at"))
    completion = F.col("completion")
    checked = (commits.unionByName(completions, allowMissingColumns=True)
               .withColumn("completion", F.last("completion", ignorenulls=True).over(so_far))
               .where(F.col("record").isNotNull()))
    made_visible = F.format_string("offset %d of %s/%d was made visible for producer %d epoch %d",
                                   "offset", "topic", "partition", "producer_id", "producer_epoch")
    why = (F.when(completion.isNull(), F.lit("with no completion of its transaction before it"))
           .when(completion["outcome"] != COMMIT, F.lit("after its transaction aborted"))
           .when(completion["producer_epoch"] != F.col("producer_epoch"),
                 F.format_string("by a commit of epoch %d", completion["producer_epoch"]))
           .when(~_lists(completion["partitions"], F.col("topic"), F.col("partition"), F.col("offset")),
                 F.lit("by a commit that did not hold it")))
    evidence = F.filter(F.array(F.when(completion.isNotNull(), _evidence(completion["at"], completion["record"])),
                                _evidence(F.col("at"), F.col("record"))), lambda entry: entry.isNotNull())
    return (checked.withColumn("verdict", F.when(why.isNull(), F.lit(OK)).otherwise(F.lit(VIOLATION)))
            .withColumn("detail", F.concat_ws(" ", made_visible, why))
            .withColumn("evidence", evidence))


def _txn_violations(checks: DataFrame) -> DataFrame:
    """The breaches of `checks` (with detail and evidence columns); a transaction has no generation."""
    breaches = checks.where(F.col("verdict") == VIOLATION).withColumn("generation", F.lit(None).cast("int"))
    return _violation_rows(breaches, TXN_OFFSETS, F.col("detail"), F.col("evidence"))
