"""Kafka's ACL authorizer on a node (`coordinator run --authorizer`): the ACLs loaded from the
store at start and kept current by `AclWatch`, the decisions (`groupctl.security.rules`), and
the reads and writes of the ACL APIs (DescribeAcls, CreateAcls, DeleteAcls).

Invariants:
- Every ACL is read from the store before the node listens (`start`): no request is decided
  on a partial set.
- Handlers ask through `groupctl.server.handlers.acl_checks`, which answers "allowed" without a
  call when the node has no authorizer (`RequestContext.authorizer` is None).
- A write answers once this node's own view includes it (`AclWatch.refresh`); other nodes see
  it when their watch fires.
"""

from __future__ import annotations

import logging
from typing import Optional

from groupctl.security.acls import (
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    ResourcePattern,
)
from groupctl.security.rules import Acls, Authorizer
from groupctl.server.acl_watch import AclWatch
from groupctl.security.stored_acls import Entries, pattern_path
from groupctl.store.acls import ensure_acl_paths, read_all_acls, update_acls
from groupctl.store.base import MetadataStore, StoreError

log = logging.getLogger("groupctl.acls")

Outcome = Optional[str]
"""None: done; else why the store did not take the change."""


class NodeAuthorizer:
    def __init__(self, store: MetadataStore, super_users: tuple[str, ...], allow_everyone_if_no_acl_found: bool
                 ) -> None:
        self.store = store
        self.acls = Acls()
        self.rules = Authorizer(self.acls, super_users, allow_everyone_if_no_acl_found)
        self.watch = AclWatch(store, self.acls.replace)
        # The rules' own methods: one call per decision on the request path. Hosts may be given
        # as the request context has them ("/127.0.0.1").
        self.authorize = self.rules.authorize
        self.authorize_any = self.rules.authorize_any

    async def start(self) -> None:
        await ensure_acl_paths(self.store)
        for pattern, entries in (await read_all_acls(self.store)).items():
            self.acls.replace(pattern, entries)
        await self.watch.start()
        log.info("authorizer on: %d ACL(s) loaded, super users: %s", len(self.acls),
                 ", ".join(sorted(self.rules.super_users)) or "none")

    async def close(self) -> None:
        await self.watch.close()

    # -- the ACL APIs ------------------------------------------------------------------------

    def describe(self, where: AclBindingFilter) -> list[AclBinding]:
        return sorted(self.acls.bindings(where))

    async def create(self, bindings: list[AclBinding]) -> list[Outcome]:
        """Add `bindings` (each already valid, `security.acls.creation_error`); one write per
        resource pattern. Per binding, in order: None, or why its pattern's write failed."""
        by_pattern: dict[ResourcePattern, list[int]] = {}
        for index, binding in enumerate(bindings):
            by_pattern.setdefault(binding.pattern, []).append(index)
        outcomes: list[Outcome] = [None] * len(bindings)
        for pattern, indexes in by_pattern.items():
            added = frozenset(bindings[i].entry for i in indexes)
            try:
                await self._update(pattern, lambda entries: entries | added)
            except StoreError as exc:
                for i in indexes:
                    outcomes[i] = str(exc)
        return outcomes

    async def delete(self, filters: list[AclBindingFilter]) -> list[list[tuple[AclBinding, Outcome]]]:
        """Remove every ACL a filter matches; per filter, the bindings it removed (a binding that
        several filters match counts for the first), each with None or why its write failed.
        Candidates are the patterns this node knows plus the one a filter names exactly (so an
        ACL another node has just created is found), as Kafka's AclAuthorizer does."""
        candidates = set(self.acls.patterns())
        candidates.update(p for p in (f.exact_pattern() for f in filters) if p is not None)
        results: list[list[tuple[AclBinding, Outcome]]] = [[] for _ in filters]
        for pattern in sorted(candidates):
            matching = [(i, f) for i, f in enumerate(filters) if f.matches_pattern(pattern)]
            if not matching:
                continue
            claimed: dict[AccessControlEntry, int] = {}

            def without_matches(entries: Entries, matching=matching, claimed=claimed) -> Entries:
                claimed.clear()
                for entry in sorted(entries):
                    owner = next((i for i, f in matching if f.matches_entry(entry)), None)
                    if owner is not None:
                        claimed[entry] = owner
                return entries - claimed.keys()

            try:
                await self._update(pattern, without_matches)
                outcome: Outcome = None
            except StoreError as exc:
                outcome = str(exc)
            for entry, owner in claimed.items():
                results[owner].append((AclBinding(pattern, entry), outcome))
        return results

    async def _update(self, pattern: ResourcePattern, change) -> None:
        before, after = await update_acls(self.store, pattern, change)
        if before != after:
            log.info("ACLs of %s: %d -> %d entries", pattern_path(pattern), len(before), len(after))
        await self.watch.refresh(pattern_path(pattern))
