"""An audit of the coordinator's invariants over its event journal, with the evidence of each breach.

`audit_violations` and `audit_summary` are pure transforms of journal events
(schemas.JOURNAL_SCHEMA) in any order; event order is (ts, node, seq), see `events`. Events are audited per incarnation of
a group (the group_deleted events before them): a deleted group that comes back starts again at
generation 0 with no offsets, so two incarnations are never compared.

Invariants (docs/lag-and-rebalances.md, "analyze audit", states them for users):
- single_owner: per (group, generation, topic, partition) over every rebalance_completed of the
  generation, so two nodes completing one generation differently (split brain) are caught too.
- owner_commits: an offset_commit with generation >= 0 is by an owner of the partition in that
  generation: an assigned member; a static member restarted within it (member_joined's
  replaced_member_id), which owns what its instance's earlier ids owned; or, for a partition the
  generation assigns to nobody, a member of it that owned the partition in the generation before
  (a cooperative consumer committing what it was just revoked). A generation whose assignment the
  journal does not hold (rotated away, or a non-"consumer" protocol recorded empty) makes the
  commit `unverified`, never a violation; an Empty generation assigns nothing.
- monotonic_offsets: a committed offset never goes back, except by an explicit reset: a commit
  with generation < 0, or the first commit after an offset_delete of the partition. A member's
  commit after an admin reset is compared with the reset.

A violation row's `records` are its evidence events as compact JSON lines, in event order.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, DataFrame, Window, WindowSpec
from pyspark.sql import functions as F

from groupctl.analytics.events import (
    GROUP_DELETED,
    MEMBER_JOINED,
    OFFSET_COMMIT,
    OFFSET_DELETE,
    REBALANCE_COMPLETED,
    event_record,
    position,
    record_json,
)

SINGLE_OWNER = "single_owner"
OWNER_COMMITS = "owner_commits"
MONOTONIC_OFFSETS = "monotonic_offsets"
INVARIANTS = (SINGLE_OWNER, OWNER_COMMITS, MONOTONIC_OFFSETS)

OK, VIOLATION, UNVERIFIED = "ok", "violation", "unverified"

VIOLATION_COLUMNS = ("invariant", "group", "generation", "topic", "partition", "detail", "records")
GENERATION_KEY = ("group", "incarnation", "generation")
PARTITION_KEY = (*GENERATION_KEY, "topic", "partition")


def audit_violations(journal: DataFrame) -> DataFrame:
    """Every breach of INVARIANTS, one row each, with the columns of VIOLATION_COLUMNS."""
    events = _audited_events(journal)
    owners = _owners(events)
    completions = _completions(events)
    found = [
        _single_owner_violations(_single_owner_checks(owners), completions),
        _owner_commit_violations(_owner_commit_checks(events, owners), completions),
        _monotonic_violations(_monotonic_checks(events)),
    ]
    return (reduce(DataFrame.unionByName, found)
            .orderBy("last_record_at", "invariant", "group", "topic", "partition")
            .select(*VIOLATION_COLUMNS))


def audit_summary(journal: DataFrame) -> DataFrame:
    """Per invariant (in INVARIANTS order): invariant, checked, violations, unverified (longs)."""
    events = _audited_events(journal)
    owners = _owners(events)
    checks = {
        SINGLE_OWNER: _single_owner_checks(owners),
        OWNER_COMMITS: _owner_commit_checks(events, owners),
        MONOTONIC_OFFSETS: _monotonic_checks(events),
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
    events of the group so far). Their `event_record()` is built where it becomes evidence, after the
    window's shuffle, so the shuffle does not carry every event twice."""
    deletions_so_far = F.sum(F.when(F.col("event") == GROUP_DELETED, 1).otherwise(0)).over(
        _so_far(Window.partitionBy("group").orderBy("at")))
    audited = (REBALANCE_COMPLETED, MEMBER_JOINED, OFFSET_COMMIT, OFFSET_DELETE, GROUP_DELETED)
    return (journal.where(F.col("event").isin(*audited))
            .withColumn("at", position())
            .withColumn("incarnation", deletions_so_far))


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


def _owner_commit_checks(events: DataFrame, owners: DataFrame) -> DataFrame:
    member_commits = events.where(_is(OFFSET_COMMIT) & (F.col("generation") >= 0)).select(
        *PARTITION_KEY, "member_id", "offset", "at", event_record().alias("record"))
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
            .withColumn("verdict", F.when(F.col("assignment_known").isNull(), F.lit(UNVERIFIED))
                        .when(owned_by_member | revoked_from_member, F.lit(OK))
                        .otherwise(F.lit(VIOLATION))))


def _owner_commit_violations(checks: DataFrame, completions: DataFrame) -> DataFrame:
    breaches = checks.where(F.col("verdict") == VIOLATION).join(completions, list(GENERATION_KEY))
    detail = F.format_string("member %s committed offset %d to %s/%d in generation %d, which assigns it to %s",
                             "member_id", "offset", "topic", "partition", "generation",
                             F.coalesce(F.array_join("owners", ", "), F.lit("no member")))
    evidence = F.concat("completions", F.array(_evidence(F.col("at"), F.col("record"))))
    return _violation_rows(breaches, OWNER_COMMITS, detail, evidence)


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
