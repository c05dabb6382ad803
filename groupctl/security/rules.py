"""The authorization decision, as Apache Kafka's authorizers make it (StandardAuthorizerData's
`authorize` and the `Authorizer.authorizeByResourceType` default; ZooKeeper's AclAuthorizer
decides the same).

For a request by `principal` from `host` to do `operation` on the resource (type, name):
1. A super user may do anything.
2. The ACLs that apply to the resource are those of its literal pattern, of the literal "*"
   pattern of its type, and of every prefixed pattern its name starts with. When there are none
   at all (whoever they are for), the answer is `allow_everyone_if_no_acl_found`.
3. Of those, an entry matches when its principal is `principal` or "User:*", its host is `host`
   or "*", and its operation is `operation` or All, where an Allow entry for Read, Write, Delete
   or Alter also allows Describe, and one for AlterConfigs also allows DescribeConfigs (a Deny
   entry denies only its own operation, or all with All).
4. Any matching Deny denies; otherwise any matching Allow allows; otherwise denied.

Invariants:
- `Acls` is the node's whole set of ACLs; `Authorizer` answers from it as it is at the call.
  Decisions are cached per (principal, host, operation, resource) until the ACLs change (the
  cache is bounded: it is emptied when full).
- Hosts are compared as bare addresses ("127.0.0.1"), as Kafka compares them; a request's host
  may come in Kafka's "/127.0.0.1" form.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from typing import Iterable, Iterator, Optional

from groupctl.security.acls import (
    WILDCARD,
    WILDCARD_PRINCIPAL,
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    Operation,
    PatternType,
    Permission,
    ResourcePattern,
    ResourceType,
)

IMPLIES_DESCRIBE = frozenset({Operation.DESCRIBE, Operation.READ, Operation.WRITE, Operation.DELETE, Operation.ALTER})
IMPLIES_DESCRIBE_CONFIGS = frozenset({Operation.DESCRIBE_CONFIGS, Operation.ALTER_CONFIGS})
CACHE_LIMIT = 65536
"""Cached decisions at most; the cache starts empty again past it."""
BY_TYPE_PROBE = "hardcode"
"""The literal name Kafka's `authorizeByResourceType` first authorizes (so that super users, and
"*" and matching prefixed ACLs, decide as for any one resource)."""


class Acls:
    """Every ACL, by resource pattern, with the prefixed patterns indexed for matching."""

    def __init__(self) -> None:
        self._entries: dict[ResourcePattern, frozenset[AccessControlEntry]] = {}
        # resource type -> prefix lengths in use (longest first): a name's prefixes to look up
        self._prefix_lengths: dict[ResourceType, tuple[int, ...]] = {}
        self.version = 0  # bumped on every change (decision caches compare it)

    def __len__(self) -> int:
        return sum(len(entries) for entries in self._entries.values())

    def entries(self, pattern: ResourcePattern) -> frozenset[AccessControlEntry]:
        return self._entries.get(pattern, frozenset())

    def patterns(self) -> list[ResourcePattern]:
        return list(self._entries)

    def replace(self, pattern: ResourcePattern, entries: Iterable[AccessControlEntry]) -> None:
        """Make `entries` the pattern's ACLs (none: the pattern has no ACLs)."""
        entries = frozenset(entries)
        if self._entries.get(pattern, frozenset()) == entries:
            return
        if entries:
            self._entries[pattern] = entries
        else:
            self._entries.pop(pattern, None)
        if pattern.pattern_type == PatternType.PREFIXED:
            self._prefix_lengths[pattern.resource_type] = tuple(sorted(
                {len(p.name) for p in self._entries
                 if p.pattern_type == PatternType.PREFIXED and p.resource_type == pattern.resource_type},
                reverse=True))
        self.version += 1

    def bindings(self, where: Optional[AclBindingFilter] = None) -> Iterator[AclBinding]:
        for pattern, entries in self._entries.items():
            if where is None or where.matches_pattern(pattern):
                for entry in entries:
                    if where is None or where.matches_entry(entry):
                        yield AclBinding(pattern, entry)

    def applying_to(self, resource_type: ResourceType, name: str) -> list[frozenset[AccessControlEntry]]:
        """The entry sets of every pattern that applies to the resource (step 2)."""
        found = []
        for pattern_name in (name, WILDCARD):
            entries = self._entries.get(ResourcePattern(resource_type, pattern_name, PatternType.LITERAL))
            if entries:
                found.append(entries)
            if name == WILDCARD:
                break
        for length in self._prefix_lengths.get(resource_type, ()):
            if length <= len(name):
                entries = self._entries.get(ResourcePattern(resource_type, name[:length], PatternType.PREFIXED))
                if entries:
                    found.append(entries)
        return found


@lru_cache(maxsize=1024)
def same_address(written: str, peer: str) -> bool:
    """Whether two spellings name one IP address: an IPv6 host written as Java prints it
    (`0:0:0:0:0:0:0:1`, what Kafka compares) matches the peer Python reports (`::1`)."""
    try:
        return ipaddress.ip_address(written) == ipaddress.ip_address(peer)
    except ValueError:
        return False


def matches(entry: AccessControlEntry, principal: str, host: str, operation: Operation) -> bool:
    """Whether `entry` speaks about this request (step 3; StandardAuthorizerData.findResult)."""
    if entry.principal != principal and entry.principal != WILDCARD_PRINCIPAL:
        return False
    if entry.host != WILDCARD and entry.host != host and not same_address(entry.host, host):
        return False
    if entry.operation == Operation.ALL or entry.operation == operation:
        return True
    if entry.permission != Permission.ALLOW:
        return False
    if operation == Operation.DESCRIBE:
        return entry.operation in IMPLIES_DESCRIBE
    if operation == Operation.DESCRIBE_CONFIGS:
        return entry.operation in IMPLIES_DESCRIBE_CONFIGS
    return False


class Authorizer:
    """Decisions over `acls` for `super_users` ("User:admin", ...) and Kafka's
    allow.everyone.if.no.acl.found."""

    def __init__(self, acls: Acls, super_users: Iterable[str] = (), allow_everyone_if_no_acl_found: bool = False
                 ) -> None:
        self.acls = acls
        self.super_users = frozenset(super_users)
        self.allow_everyone_if_no_acl_found = allow_everyone_if_no_acl_found
        self._cache: dict[tuple, bool] = {}
        self._cached_version = acls.version

    def authorize(self, principal: str, host: str, operation: Operation, resource_type: ResourceType,
                  name: str) -> bool:
        if self._cached_version != self.acls.version:
            self._cache.clear()
            self._cached_version = self.acls.version
        # Keyed by the enums' plain values: hashing an Enum runs Python code, an int does not.
        key = (principal, host, operation._value_, resource_type._value_, name)
        decision = self._cache.get(key)
        if decision is None:
            if len(self._cache) >= CACHE_LIMIT:
                self._cache.clear()
            # A null name (a malformed request) is decided as "", which only "*" ACLs apply to.
            decision = self._cache[key] = self._decide(principal, host.lstrip("/"), operation, resource_type,
                                                       name or "")
        return decision

    def _decide(self, principal: str, host: str, operation: Operation, resource_type: ResourceType,
                name: str) -> bool:
        if principal in self.super_users:
            return True
        applying = self.acls.applying_to(resource_type, name)
        if not applying:
            return self.allow_everyone_if_no_acl_found
        allowed = False
        for entries in applying:
            for entry in entries:
                if matches(entry, principal, host, operation):
                    if entry.permission == Permission.DENY:
                        return False
                    allowed = True
        return allowed

    def authorize_any(self, principal: str, host: str, operation: Operation, resource_type: ResourceType) -> bool:
        """Whether `principal` may do `operation` on some resource of the type: Kafka's
        `authorizeByResourceType` (InitProducerId asks it for Write on any topic). Allowed by an
        Allow entry (exact operation or All) on "*", or on a literal or prefixed pattern that no
        Deny entry on the same literal or on a prefix of its name overrides; a Deny on "*" denies."""
        if self.authorize(principal, host, operation, resource_type, BY_TYPE_PROBE):
            return True
        host = host.lstrip("/")
        denied: dict[PatternType, set[str]] = {PatternType.LITERAL: set(), PatternType.PREFIXED: set()}
        allowed: dict[PatternType, set[str]] = {PatternType.LITERAL: set(), PatternType.PREFIXED: set()}
        wildcard_allowed = False
        for binding in self.acls.bindings(AclBindingFilter(resource_type=resource_type)):
            entry, pattern = binding.entry, binding.pattern
            if (entry.host not in (host, WILDCARD) and not same_address(entry.host, host)) \
                    or entry.principal not in (principal, WILDCARD_PRINCIPAL):
                continue
            if entry.operation not in (operation, Operation.ALL):
                continue
            if entry.permission == Permission.DENY:
                if pattern.pattern_type == PatternType.LITERAL and pattern.name == WILDCARD:
                    return False
                denied[pattern.pattern_type].add(pattern.name)
            elif pattern.pattern_type == PatternType.LITERAL and pattern.name == WILDCARD:
                wildcard_allowed = True  # unless a Deny on "*" comes later
            else:
                allowed[pattern.pattern_type].add(pattern.name)
        if wildcard_allowed:
            return True
        for pattern_type, names in allowed.items():
            for name in names:
                if pattern_type == PatternType.LITERAL and name in denied[PatternType.LITERAL]:
                    continue
                if not any(name[:i] in denied[PatternType.PREFIXED] for i in range(1, len(name) + 1)):
                    return True
        return False
