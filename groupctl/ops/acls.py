"""Kafka's ACLs (`groupctl acl list|add|remove`) with kafka-acls.sh's options: through any Kafka
cluster with an authorizer, groupctl's node started with --authorizer included (DescribeAcls,
CreateAcls, DeleteAcls), or directly in the ZooKeeper layout groupctl's nodes read, as Kafka's
ZooKeeper authorizer did (`--zk`, like kafka-acls.sh's old `--authorizer-properties
zookeeper.connect=...`).

Invariants:
- `AclOptions` become bindings and filters as kafka-acls.sh (AclCommand) makes them: every
  resource given (--topic, --group, --transactional-id, --cluster) with --resource-pattern-type (literal unless
  given); hosts "*" for the principals given unless --allow-host/--deny-host; operation All unless
  --operation; an operation the resource type does not support is refused as kafka-acls.sh
  refuses it. Malformed input is BadInput before anything is sent.
- --bootstrap wins when both sources are given, as for `user`.
- Waits are bounded by the operator's `--timeout`: over Kafka the Bootstrap carries it, in
  ZooKeeper `timeout_s` (None: the session's default).
- Refusals are one line: a node without an authorizer (SECURITY_DISABLED) says how to start one;
  CLUSTER_AUTHORIZATION_FAILED is NotAuthorized with what the operation needs and the cluster's
  message (groupctl's node names the principal in it); an ACL the cluster refuses is Refused
  naming it.
- With --zk each resource pattern's change is one compare-and-set write, computed again when
  another writer wins, in the node's format (`groupctl.security.stored_acls`); running nodes
  see it through their watch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from groupctl.client.acl_apis import Outcome, create_acls, delete_acls, describe_acls
from groupctl.client.kafka import BootstrapLike, KafkaClient, error_name
from groupctl.client.zookeeper import ZkSession
from groupctl.errors import BadInput, NotAuthorized, OpsError, Refused
from groupctl.layout.codec import LayoutError
from groupctl.security.acls import (
    CLUSTER_NAME,
    SUPPORTED_OPERATIONS,
    WILDCARD,
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclError,
    Operation,
    PatternType,
    Permission,
    ResourcePattern,
    ResourceType,
    kafka_name,
    parse_operation,
    principal_error,
)
from groupctl.security.stored_acls import Entries, decode_entries, encode_entries, pattern_of, pattern_path, type_paths

SECURITY_DISABLED = 54
CLUSTER_AUTHORIZATION_FAILED = 31
NO_AUTHORIZER = "the node has no authorizer (start it with --authorizer)"
MAX_ATTEMPTS = 16
"""Compare-and-set attempts of one --zk change before giving up."""
NO_RESOURCE = "give at least one resource: --topic NAME, --group NAME, --transactional-id ID or --cluster"
PATTERN_TYPES = {"literal": PatternType.LITERAL, "prefixed": PatternType.PREFIXED, "match": PatternType.MATCH,
                 "any": PatternType.ANY}


@dataclass(frozen=True)
class AclOptions:
    """kafka-acls.sh's options, as typed."""

    topics: Sequence[str] = ()
    groups: Sequence[str] = ()
    transactional_ids: Sequence[str] = ()
    cluster: bool = False
    pattern_type: str = "literal"  # literal | prefixed | match | any
    allow_principals: Sequence[str] = ()
    deny_principals: Sequence[str] = ()
    allow_hosts: Sequence[str] = ()
    deny_hosts: Sequence[str] = ()
    operations: Sequence[str] = ()  # none: All
    principals: Sequence[str] = ()  # `list --principal`: only these principals' ACLs


# -- options -> bindings and filters ------------------------------------------------------------


def _pattern_type(options: AclOptions) -> PatternType:
    found = PATTERN_TYPES.get(options.pattern_type.strip().lower())
    if found is None:
        raise BadInput(f"unknown --resource-pattern-type {options.pattern_type!r} (one of: {', '.join(PATTERN_TYPES)})")
    return found


def _resources(options: AclOptions, pattern_type: PatternType) -> list[tuple[ResourceType, str]]:
    if options.cluster and pattern_type == PatternType.PREFIXED:
        raise BadInput("--cluster names the one Cluster resource: it takes no --resource-pattern-type prefixed")
    resources = [(ResourceType.TOPIC, t.strip()) for t in options.topics]
    resources += [(ResourceType.GROUP, g.strip()) for g in options.groups]
    resources += [(ResourceType.TRANSACTIONAL_ID, i.strip()) for i in options.transactional_ids]
    if options.cluster:
        resources.append((ResourceType.CLUSTER, CLUSTER_NAME))
    for resource_type, name in resources:
        if not name:
            raise BadInput(f"a {kafka_name(resource_type).lower()} name must not be empty")
    return list(dict.fromkeys(resources))


def _principals(values: Sequence[str], option: str) -> list[str]:
    principals = [value.strip() for value in values]
    for principal in principals:
        problem = principal_error(principal)
        if problem:
            raise BadInput(f"{option}: {problem}")
    return principals


def _operations(options: AclOptions) -> list[Operation]:
    try:
        return list(dict.fromkeys(parse_operation(op) for op in options.operations)) or [Operation.ALL]
    except AclError as exc:
        raise BadInput(f"--operation: {exc}") from None


def _entries(options: AclOptions) -> list[AccessControlEntry]:
    """Every (principal, host, operation, permission) the options ask for (kafka-acls.sh's getAcl)."""
    operations = _operations(options)
    entries = []
    for permission, principals, hosts, option in (
            (Permission.ALLOW, options.allow_principals, options.allow_hosts, "--allow-principal"),
            (Permission.DENY, options.deny_principals, options.deny_hosts, "--deny-principal")):
        hosts = [h.strip() for h in hosts] or [WILDCARD]
        if any(not host for host in hosts):
            raise BadInput("a host must not be empty (use * for any host)")
        for principal in _principals(principals, option):
            for operation in operations:
                for host in hosts:
                    entries.append(AccessControlEntry(principal, host, operation, permission))
    return entries


def _check_operations(resources: list[tuple[ResourceType, str]], entries: list[AccessControlEntry]) -> None:
    for resource_type, _ in resources:
        valid = SUPPORTED_OPERATIONS[resource_type] | {Operation.ALL}
        if any(entry.operation not in valid for entry in entries):
            names = ", ".join(sorted(kafka_name(op) for op in valid))
            raise BadInput(f"resource type {kafka_name(resource_type)} only supports operations {names}")


def bindings_to_add(options: AclOptions) -> list[AclBinding]:
    pattern_type = _pattern_type(options)
    if pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        raise BadInput(f"--resource-pattern-type {options.pattern_type} is not valid when adding ACLs "
                       "(literal or prefixed)")
    resources = _resources(options, pattern_type)
    if not resources:
        raise BadInput(NO_RESOURCE)
    entries = _entries(options)
    if not entries:
        raise BadInput("give --allow-principal or --deny-principal when adding ACLs")
    _check_operations(resources, entries)
    return [AclBinding(ResourcePattern(resource_type, name, pattern_type), entry)
            for resource_type, name in resources for entry in entries]


def filters_to_remove(options: AclOptions) -> list[AclBindingFilter]:
    """One filter per resource when no principal is given (every ACL of the resource), else one
    per resource and entry asked for."""
    pattern_type = _pattern_type(options)
    resources = _resources(options, pattern_type)
    if not resources:
        raise BadInput(NO_RESOURCE)
    entries = _entries(options)
    _check_operations(resources, entries)
    if not entries:
        return [AclBindingFilter(resource_type, name, pattern_type) for resource_type, name in resources]
    return [AclBindingFilter(resource_type, name, pattern_type, e.principal, e.host, e.operation, e.permission)
            for resource_type, name in resources for e in entries]


def filters_to_list(options: AclOptions) -> list[AclBindingFilter]:
    """One filter per resource and principal given (none: any)."""
    pattern_type = _pattern_type(options)
    resources: list[tuple[ResourceType, Optional[str]]] = list(_resources(options, pattern_type))
    principals: list[Optional[str]] = list(_principals(options.principals, "--principal")) or [None]
    if not resources:
        resources, pattern_type = [(ResourceType.ANY, None)], PatternType.ANY
    return [AclBindingFilter(resource_type, name, pattern_type, principal=principal)
            for resource_type, name in resources for principal in principals]


# -- the operations -------------------------------------------------------------------------------


def list_acls(options: AclOptions, *, bootstrap: Optional[BootstrapLike] = None, zk: Optional[str] = None,
              zk_auth: Optional[str] = None, timeout_s: Optional[float] = None) -> list[AclBinding]:
    """The ACLs the options select, sorted by resource."""
    _check_source(bootstrap, zk)
    filters = filters_to_list(options)
    found: set[AclBinding] = set()
    if bootstrap:
        with KafkaClient(bootstrap) as client:
            for where in filters:
                outcome, bindings = describe_acls(client, where)
                _check(outcome, "list ACLs", "Describe")
                found.update(bindings)
    else:
        with ZkSession(zk, auth=zk_auth, timeout_s=timeout_s) as session:
            found.update(b for b in _stored_bindings(session) if any(f.matches(b) for f in filters))
    return sorted(found)


def add_acls(options: AclOptions, *, bootstrap: Optional[BootstrapLike] = None, zk: Optional[str] = None,
             zk_auth: Optional[str] = None, timeout_s: Optional[float] = None) -> list[AclBinding]:
    """Add the ACLs the options describe (adding one that exists changes nothing); the ACLs."""
    _check_source(bootstrap, zk)
    bindings = bindings_to_add(options)
    if bootstrap:
        with KafkaClient(bootstrap) as client:
            outcomes = create_acls(client, bindings)
        failed = [(b, o) for b, o in zip(bindings, outcomes) if o.error_code]
        if failed:
            binding, outcome = failed[0]
            _check(outcome, "add ACLs", "Alter")
            added = len(bindings) - len(failed)
            raise Refused(f"cannot add {binding.summary()}: {_reason(outcome)}"
                          + (f" ({added} other ACL(s) were added)" if added else ""))
        return bindings
    by_pattern: dict[ResourcePattern, set[AccessControlEntry]] = {}
    for binding in bindings:
        by_pattern.setdefault(binding.pattern, set()).add(binding.entry)
    with ZkSession(zk, auth=zk_auth, timeout_s=timeout_s) as session:
        for pattern, entries in by_pattern.items():
            _update_in_zk(session, pattern, lambda current, entries=entries: current | entries)
    return bindings


def remove_acls(options: AclOptions, *, bootstrap: Optional[BootstrapLike] = None, zk: Optional[str] = None,
                zk_auth: Optional[str] = None, timeout_s: Optional[float] = None) -> list[AclBinding]:
    """Remove the ACLs the options select; the ACLs removed, sorted (none matched: empty)."""
    _check_source(bootstrap, zk)
    filters = filters_to_remove(options)
    removed: set[AclBinding] = set()
    if bootstrap:
        with KafkaClient(bootstrap) as client:
            results = delete_acls(client, filters)
        for outcome, deleted in results:
            _check(outcome, "remove ACLs", "Alter")
            for binding, result in deleted:
                if result.error_code:
                    raise Refused(f"cannot remove {binding.summary()}: {_reason(result)}")
                removed.add(binding)
        return sorted(removed)
    with ZkSession(zk, auth=zk_auth, timeout_s=timeout_s) as session:
        patterns = {b.pattern for b in _stored_bindings(session) if any(f.matches_pattern(b.pattern) for f in filters)}
        for pattern in sorted(patterns):
            matching = [f for f in filters if f.matches_pattern(pattern)]
            before, after = _update_in_zk(session, pattern, lambda current, matching=matching: frozenset(
                e for e in current if not any(f.matches_entry(e) for f in matching)))
            removed.update(AclBinding(pattern, entry) for entry in before - after)
    return sorted(removed)


# -- through a cluster ------------------------------------------------------------------------------


def _check(outcome: Outcome, doing: str, needs: str) -> None:
    """Refused / NotAuthorized for an error that concerns the whole request."""
    if outcome.error_code == SECURITY_DISABLED:
        raise Refused(NO_AUTHORIZER)
    if outcome.error_code == CLUSTER_AUTHORIZATION_FAILED:
        raise NotAuthorized(f"not authorized to {doing} (needs {needs} on the Cluster): "
                            f"{outcome.error_message or error_name(outcome.error_code)}")
    if outcome.error_code:
        raise Refused(f"cannot {doing}: {_reason(outcome)}")


def _reason(outcome: Outcome) -> str:
    name = error_name(outcome.error_code)
    return f"{name} ({outcome.error_message})" if outcome.error_message else name


# -- directly in ZooKeeper -------------------------------------------------------------------------


def _stored_bindings(session: ZkSession) -> list[AclBinding]:
    """Every ACL stored under the resource type paths groupctl reads."""
    paths = [(parent, child) for parent in type_paths() for child in session.children(parent) or ()]
    bindings = []
    for (parent, child), node in zip(paths, session.get_many([f"{p}/{c}" for p, c in paths])):
        if node is not None:
            pattern = pattern_of(parent, child)
            bindings += [AclBinding(pattern, entry) for entry in _decode(node.path, node.data)]
    return bindings


def _update_in_zk(session: ZkSession, pattern: ResourcePattern,
                  change: Callable[[Entries], Entries]) -> tuple[Entries, Entries]:
    """Apply `change` to the pattern's entries with compare-and-set; (before, after)."""
    path = pattern_path(pattern)
    for _ in range(MAX_ATTEMPTS):
        node = session.get(path)
        current = _decode(path, node.data) if node is not None else frozenset()
        wanted = frozenset(change(current))
        if wanted == current:
            written = True
        elif node is None:
            written = session.create(path, encode_entries(wanted))
        elif not wanted:
            written = session.delete_if_version(path, node.stat.version)
        else:
            written = session.set_if_version(path, encode_entries(wanted), node.stat.version)
        if written:
            return current, wanted
    raise Refused(f"{path} was changed by other writers {MAX_ATTEMPTS} times in a row; try again")


def _decode(path: str, data: Optional[bytes]) -> Entries:
    try:
        return decode_entries(path, data)[0]
    except LayoutError as exc:
        raise OpsError(str(exc)) from None


def _check_source(bootstrap: Optional[BootstrapLike], zk: Optional[str]) -> None:
    if not bootstrap and not zk:
        raise BadInput("this command needs --bootstrap HOST:PORT or --zk HOST:PORT[/chroot]")
