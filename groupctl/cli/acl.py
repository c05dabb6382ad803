"""`groupctl acl ...`: Kafka's ACLs with kafka-acls.sh's options, through a cluster (--bootstrap:
DescribeAcls/CreateAcls/DeleteAcls) or in ZooKeeper (--zk).

`remove` asks before removing, as kafka-acls.sh does, unless --force; off a terminal it refuses
to guess (exit 2).
"""

from __future__ import annotations

import sys
from enum import Enum
from typing import List

import typer

from groupctl.cli import render
from groupctl.cli.context import CliEnv, env, guard
from groupctl.cli.errors import BadInput

app = typer.Typer(help="List, add and remove Kafka ACLs (kafka-acls.sh's options).", no_args_is_help=True)


class PatternTypeChoice(str, Enum):
    literal = "literal"
    prefixed = "prefixed"
    match = "match"
    any = "any"


TOPICS = typer.Option([], "--topic", help="A topic (repeatable); * is every topic.")
GROUPS = typer.Option([], "--group", help="A consumer group (repeatable); * is every group.")
TRANSACTIONAL_IDS = typer.Option([], "--transactional-id", help="A producer's transactional.id (repeatable); * is "
                                 "every one.")
CLUSTER = typer.Option(False, "--cluster", help="The Cluster resource (kafka-cluster).")
ALLOW_PRINCIPALS = typer.Option([], "--allow-principal", help="Type:name, e.g. User:alice; User:* is every user "
                                "(repeatable).")
DENY_PRINCIPALS = typer.Option([], "--deny-principal", help="Type:name (repeatable). Deny wins over allow.")
ALLOW_HOSTS = typer.Option([], "--allow-host", help="Host (IP) the allowed principals connect from (repeatable; "
                           "default *).")
DENY_HOSTS = typer.Option([], "--deny-host", help="Host (IP) the denied principals connect from (repeatable; "
                          "default *).")
OPERATIONS = typer.Option([], "--operation", help="Read, Write, Create, Delete, Alter, Describe, ClusterAction, "
                          "DescribeConfigs, AlterConfigs, IdempotentWrite or All (repeatable; default All).")


def _pattern_option(default: PatternTypeChoice, detail: str) -> typer.models.OptionInfo:
    return typer.Option(default, "--resource-pattern-type", case_sensitive=False, help=detail)


@app.command("list")
@guard
def list_(
    ctx: typer.Context,
    topic: List[str] = TOPICS,
    group: List[str] = GROUPS,
    transactional_id: List[str] = TRANSACTIONAL_IDS,
    cluster: bool = CLUSTER,
    resource_pattern_type: PatternTypeChoice = _pattern_option(
        PatternTypeChoice.literal, "literal or prefixed: ACLs of exactly that pattern; any: of either pattern "
        "type with exactly the name given; match: every ACL that applies to the resource."),
    principal: List[str] = typer.Option([], "--principal", help="Only ACLs of this principal (repeatable)."),
) -> None:
    """List ACLs: of the resources given, or all of them. JSON: a list of {resource_type, name,
    pattern_type, principal, host, operation, permission_type}."""
    from groupctl.ops.acls import AclOptions, list_acls

    current = env(ctx)
    options = AclOptions(topics=topic, groups=group, transactional_ids=transactional_id, cluster=cluster,
                         pattern_type=resource_pattern_type.value, principals=principal)
    with current.status("listing ACLs"):
        bindings = _run(current, list_acls, options)
    if current.json:
        render.emit_json(current, [b.to_json() for b in bindings])
        return
    render.show(current, render.table(
        ["RESOURCE-TYPE", "NAME", "PATTERN-TYPE", "PRINCIPAL", "HOST", "OPERATION", "PERMISSION"],
        [(d["resource_type"], d["name"], d["pattern_type"], d["principal"], d["host"], d["operation"],
          d["permission_type"]) for d in (b.to_json() for b in bindings)]))


@app.command("add")
@guard
def add(
    ctx: typer.Context,
    allow_principal: List[str] = ALLOW_PRINCIPALS,
    deny_principal: List[str] = DENY_PRINCIPALS,
    allow_host: List[str] = ALLOW_HOSTS,
    deny_host: List[str] = DENY_HOSTS,
    operation: List[str] = OPERATIONS,
    topic: List[str] = TOPICS,
    group: List[str] = GROUPS,
    transactional_id: List[str] = TRANSACTIONAL_IDS,
    cluster: bool = CLUSTER,
    resource_pattern_type: PatternTypeChoice = _pattern_option(
        PatternTypeChoice.literal, "literal (the resource named) or prefixed (every resource whose name "
        "starts with it)."),
) -> None:
    """Add ACLs: each principal given, each operation, on each resource given.

    For example `groupctl acl add --allow-principal User:alice --operation Read --group app
    --topic orders`. Adding an ACL that exists changes nothing."""
    from groupctl.ops.acls import AclOptions, add_acls

    current = env(ctx)
    options = AclOptions(topics=topic, groups=group, transactional_ids=transactional_id, cluster=cluster,
                         pattern_type=resource_pattern_type.value,
                         allow_principals=allow_principal, deny_principals=deny_principal,
                         allow_hosts=allow_host, deny_hosts=deny_host, operations=operation)
    with current.status("adding ACLs"):
        added = _run(current, add_acls, options)
    if current.json:
        render.emit_json(current, {"added": [b.to_json() for b in added]})
        return
    for binding in added:
        _say(current, f"added: {binding.summary()}")


@app.command("remove")
@guard
def remove(
    ctx: typer.Context,
    allow_principal: List[str] = ALLOW_PRINCIPALS,
    deny_principal: List[str] = DENY_PRINCIPALS,
    allow_host: List[str] = ALLOW_HOSTS,
    deny_host: List[str] = DENY_HOSTS,
    operation: List[str] = OPERATIONS,
    topic: List[str] = TOPICS,
    group: List[str] = GROUPS,
    transactional_id: List[str] = TRANSACTIONAL_IDS,
    cluster: bool = CLUSTER,
    resource_pattern_type: PatternTypeChoice = _pattern_option(
        PatternTypeChoice.literal, "literal or prefixed: ACLs of that pattern; any: of either pattern type with "
        "exactly the name given; match: every ACL that applies to the resource (with care)."),
    force: bool = typer.Option(False, "--force", help="Do not ask for confirmation."),
) -> None:
    """Remove ACLs from the resources given: those of the principals given, or every ACL of the
    resources when no principal is given."""
    from groupctl.ops.acls import AclOptions, filters_to_remove, remove_acls

    current = env(ctx)
    options = AclOptions(topics=topic, groups=group, transactional_ids=transactional_id, cluster=cluster,
                         pattern_type=resource_pattern_type.value,
                         allow_principals=allow_principal, deny_principals=deny_principal,
                         allow_hosts=allow_host, deny_hosts=deny_host, operations=operation)
    filters_to_remove(options)  # bad input fails before any question
    if not force:
        _confirm(options)
    with current.status("removing ACLs"):
        removed = _run(current, remove_acls, options)
    if current.json:
        render.emit_json(current, {"removed": [b.to_json() for b in removed]})
        return
    for binding in removed:
        _say(current, f"removed: {binding.summary()}")
    if not removed:
        _say(current, "no ACL matched")


def _run(current: CliEnv, operation, options):
    current.need_source()
    return operation(options, bootstrap=current.kafka(), zk=current.zk, zk_auth=current.zk_auth,
                     timeout_s=current.timeout_s)


def _confirm(options) -> None:
    resources = [f"topic {t}" for t in options.topics] + [f"group {g}" for g in options.groups]
    resources += [f"transactional id {i}" for i in options.transactional_ids]
    resources += ["the cluster"] if options.cluster else []
    which = ("the ACLs given" if options.allow_principals or options.deny_principals
             else "every ACL")
    if not sys.stdin.isatty():
        raise BadInput("acl remove asks for confirmation: run it on a terminal, or add --force")
    if not typer.confirm(f"Remove {which} of {', '.join(resources)} ({options.pattern_type})?", err=True):
        raise typer.Exit(1)


def _say(current: CliEnv, line: str) -> None:
    current.out.print(line, markup=False, highlight=False)
