"""`groupctl transactions ...`: transactions as kafka-transactions.sh (KIP-664) shows them, through
a cluster (--bootstrap; --command-config for a secured one): `list`, `describe`,
`describe-producers`, `find-hanging`, read-only; and `abort`, the way out of a hanging
transaction, a dry run unless --execute (as `offsets reset`)."""

from __future__ import annotations

from typing import List, Optional

import typer

from groupctl.cli import render
from groupctl.cli.context import env, guard
from groupctl.cli.errors import BadInput

app = typer.Typer(help="List and describe transactions and producers, abort hanging ones (kafka-transactions.sh).",
                  no_args_is_help=True)


@app.command("list")
@guard
def list_(
    ctx: typer.Context,
    state: List[str] = typer.Option([], "--state", help="Only transactions in this state (repeatable): Empty, "
                                    "Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort."),
    producer_id: List[int] = typer.Option([], "--producer-id", help="Only this producer id's (repeatable)."),
    duration_filter: Optional[int] = typer.Option(None, "--duration-filter", metavar="MS",
                                                  help="Only transactions open longer than MS milliseconds."),
) -> None:
    """List the cluster's transactional ids: state, producer, timeout, start, duration, partitions.

    Asks every node (ListTransactions), then describes what each listed. JSON: {transactions,
    unknown_state_filters}, each transaction {transactional_id, coordinator_id, state,
    producer_id, producer_epoch, timeout_ms, start_time_ms, duration_ms, partitions} with
    partitions a list of {topic, partition}."""
    from groupctl.cli.transactions_render import transactions_table
    from groupctl.ops.transactions import list_transactions

    current = env(ctx)
    with current.status("listing transactions"):
        result = list_transactions(current.need_bootstrap(), states=state, producer_ids=producer_id,
                                   duration_ms=duration_filter)
    if current.json:
        render.emit_json(current, result.to_json())
        return
    if result.unknown_state_filters:
        unknown = ", ".join(result.unknown_state_filters)
        current.err.print(f"groupctl: warning: no transaction state is named {unknown}", markup=False, highlight=False)
    render.show(current, transactions_table(result))


@app.command("describe")
@guard
def describe(
    ctx: typer.Context,
    transactional_id: str = typer.Argument(..., help="The transactional id (the producer's transactional.id)."),
) -> None:
    """Describe one transactional id at its coordinator.

    State, producer id and epoch, timeout, start time (UTC) and duration, and the partitions of
    its open transaction. JSON: as `transactions list`'s, with one transaction."""
    from groupctl.cli.transactions_render import transactions_table
    from groupctl.ops.transactions import describe_transaction

    current = env(ctx)
    with current.status(f"describing transactional id {transactional_id}"):
        result = describe_transaction(current.need_bootstrap(), transactional_id)
    _present(current, result, transactions_table)


@app.command("describe-producers")
@guard
def describe_producers(
    ctx: typer.Context,
    topic: str = typer.Option(..., "--topic", help="The topic."),
    partition: int = typer.Option(..., "--partition", help="The partition."),
) -> None:
    """Show the producers a partition's leader remembers, and their open transactions.

    Producer id and epoch, last sequence, last timestamp, coordinator epoch, and the first offset
    of its open transaction there. JSON: {producers}, each {topic, partition, producer_id,
    producer_epoch, last_sequence, last_timestamp_ms, coordinator_epoch,
    current_transaction_start_offset, idle_ms}."""
    from groupctl.cli.transactions_render import producers_table
    from groupctl.ops.transactions import describe_producers as describe

    current = env(ctx)
    with current.status(f"describing the producers of {topic}-{partition}"):
        result = describe(current.need_bootstrap(), topic, partition)
    _present(current, result, producers_table)


@app.command("find-hanging")
@guard
def find_hanging(
    ctx: typer.Context,
    topic: Optional[str] = typer.Option(None, "--topic", help="Search this topic's partitions."),
    partition: Optional[int] = typer.Option(None, "--partition", help="Only this partition (needs --topic)."),
    broker_id: Optional[int] = typer.Option(None, "--broker-id", help="Search the partitions this node leads."),
    max_transaction_timeout: int = typer.Option(15, "--max-transaction-timeout", metavar="MINUTES",
                                                help="Open longer than this is suspect (the cluster's "
                                                     "transaction.max.timeout.ms; default 15)."),
) -> None:
    """Find hanging transactions, as kafka-transactions.sh find-hanging does.

    A transaction open on a partition for longer than --max-transaction-timeout (by its
    producer's last timestamp) that its coordinator does not list there: its markers never came,
    and read_committed consumers of the partition wait behind it. JSON: as describe-producers'."""
    from groupctl.cli.transactions_render import producers_table
    from groupctl.ops.transactions import find_hanging as find

    current = env(ctx)
    with current.status("looking for hanging transactions"):
        result = find(current.need_bootstrap(), topic=topic, partition=partition, broker_id=broker_id,
                      max_transaction_timeout_ms=max_transaction_timeout * 60_000)
    _present(current, result, producers_table)


@app.command("abort")
@guard
def abort(
    ctx: typer.Context,
    topic: str = typer.Option(..., "--topic", help="The topic."),
    partition: int = typer.Option(..., "--partition", help="The partition."),
    start_offset: Optional[int] = typer.Option(None, "--start-offset", metavar="OFFSET",
                                               help="The first offset of the transaction (as describe-producers "
                                                    "and find-hanging show it)."),
    producer_id: Optional[int] = typer.Option(None, "--producer-id", help="Instead of --start-offset: the producer "
                                              "id (with --producer-epoch and --coordinator-epoch)."),
    producer_epoch: Optional[int] = typer.Option(None, "--producer-epoch", help="The producer's epoch."),
    coordinator_epoch: Optional[int] = typer.Option(None, "--coordinator-epoch",
                                                    help="The coordinator epoch of the producer's last marker "
                                                         "(-1 for none: sent as 0)."),
    execute: bool = typer.Option(False, "--execute", help="Abort it (without it: a dry run)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Only show what would be aborted (the default)."),
) -> None:
    """Abort a hanging transaction on one partition, as kafka-transactions.sh abort does.

    Writes an abort marker for the producer's open transaction at the partition's leader
    (WriteTxnMarkers; needs ClusterAction on the Cluster), so that read_committed consumers get
    past it. Name the transaction by --start-offset (the producer and its epochs are looked up
    with DescribeProducers) or by --producer-id, --producer-epoch and --coordinator-epoch. A dry
    run unless --execute. JSON: {topic, partition, producer_id, producer_epoch,
    coordinator_epoch, start_offset, aborted}."""
    from groupctl.cli.transactions_render import DRY_RUN
    from groupctl.ops.transactions import abort_transaction, check_abort_request

    if execute and dry_run:
        raise BadInput("give --dry-run or --execute, not both")
    check_abort_request(partition, start_offset, producer_id, producer_epoch, coordinator_epoch)
    current = env(ctx)
    with current.status(f"aborting a transaction on {topic}-{partition}" if execute else
                        f"looking up the transaction on {topic}-{partition}"):
        result = abort_transaction(current.need_bootstrap(), topic, partition, start_offset=start_offset,
                                   producer_id=producer_id, producer_epoch=producer_epoch,
                                   coordinator_epoch=coordinator_epoch, execute=execute)
    if current.json:
        render.emit_json(current, result.to_json())
    else:
        verb = "aborted" if result.aborted else "would abort"
        current.out.print(f"{verb} {result.spec.describe()}", markup=False, highlight=False)
    if not result.aborted:
        current.err.print(DRY_RUN, markup=False, highlight=False)


def _present(current, result, table) -> None:
    """A read command's answer: its JSON document with --output json, else its table."""
    if current.json:
        render.emit_json(current, result.to_json())
    else:
        render.show(current, table(result))
