"""Rebalance requests left in the store: `/coordinators/rebalance-requests/<group>`.

How `groupctl --zk ... rebalance trigger GROUP` reaches a coordinator without a Kafka connection:
it creates (or rewrites) the znode `<REBALANCE_REQUESTS>/<encode_name(group)>` holding
`{"requested_at_ms": ..., "reason": ...}` (both optional; any other content counts as no
reason). The node watches the children of `REBALANCE_REQUESTS` (created at start), and for each
request triggers the group's rebalance with reason "trigger" and the request's reason, then
deletes the znode at the version it read. A request rewritten in the meantime fails that delete
(BadVersion) and is served again, so no request is lost; one for an unknown or Empty group is
logged and deleted (there is nothing to rebalance).

The watch works the same on the embedded store (same paths), where only this process can write
the requests; from outside it is reachable with ZooKeeper.

In a cluster every node sees every request, and only the group's coordinator serves it (`serves`);
the others leave it alone. A node that takes a group partition over looks again at the requests
left (`rescan`), so a request made while the group was moving is served by its new coordinator.
A trigger that finds the group has just moved away (NOT_COORDINATOR) leaves the znode too.

Deliberate difference from Apache Kafka, which has no such API.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Awaitable, Callable, Optional

from groupctl.coordinator.classic.messages import TriggerRebalanceResult
from groupctl.coordinator.errors import ErrorCode
from groupctl.layout.codec import LayoutError
from groupctl.layout.paths import REBALANCE_REQUESTS, decode_name
from groupctl.layout.rebalance_requests import RebalanceRequest
from groupctl.store.base import BadVersion, MetadataStore, NodeExists, NoNode

log = logging.getLogger("groupctl.rebalance_requests")

MAX_ATTEMPTS = 10
"""How often one request is served again because it was rewritten while being served."""

Trigger = Callable[[str, Optional[str]], Awaitable[TriggerRebalanceResult]]
"""`trigger(group, reason)`: start the group's rebalance (the runtime's core call)."""


def request_reason(group: str, data: bytes) -> Optional[str]:
    """The operator's reason in a request znode's data, if it carries a readable one."""
    try:
        return RebalanceRequest.decode(group, data).reason
    except LayoutError:
        return None


class RebalanceRequests:
    def __init__(self, store: MetadataStore, trigger: Trigger, serves: Callable[[str], bool]) -> None:
        self._store = store
        self._trigger = trigger
        self._serves = serves
        self._names: list[str] = []  # the children last seen
        self._serving: dict[str, asyncio.Task] = {}  # znode name -> the task serving it
        self._unsubscribe: Optional[Callable[[], None]] = None

    async def start(self) -> None:
        """Create the requests' parent node when missing and serve requests from now on
        (including any left from before this node started)."""
        try:
            await self._store.create(REBALANCE_REQUESTS, make_parents=True)
        except NodeExists:
            pass
        self._unsubscribe = self._store.watch_children(REBALANCE_REQUESTS, self._on_children)

    async def close(self) -> None:
        """Stop watching; requests being served are abandoned (their znodes stay for the next
        start)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        tasks = list(self._serving.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def rescan(self) -> None:
        """Serve the requests left for groups this node coordinates now (after a takeover)."""
        self._on_children(self._names)

    def _on_children(self, names: list[str]) -> None:
        if self._unsubscribe is None:
            return
        self._names = names
        for name in names:
            if name not in self._serving and self._serves(decode_name(name)):
                task = asyncio.get_running_loop().create_task(self._serve(name))
                self._serving[name] = task
                task.add_done_callback(lambda _, name=name: self._serving.pop(name, None))

    async def _serve(self, name: str) -> None:
        path = f"{REBALANCE_REQUESTS}/{name}"
        group = decode_name(name)
        try:
            for _ in range(MAX_ATTEMPTS):
                node = await self._store.get(path)
                if node is None:
                    return
                reason = request_reason(group, node.data)
                result = await self._trigger(group, reason)
                if result.error in (ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS):
                    return  # the group moved (or is loading): its coordinator serves the request
                log.info("rebalance request for group %r (reason %r): %s, group was %s%s", group, reason,
                         result.error.name, result.state, "" if result.started else "; nothing started")
                try:
                    await self._store.delete_if_version(path, node.version)
                    return
                except NoNode:
                    return
                except BadVersion:
                    continue  # rewritten while we served it: serve it again
            log.warning("rebalance request %s kept changing; left for the next change", path)
        except Exception as exc:  # noqa: BLE001 - a store or coordinator failure; the znode stays
            log.warning("could not serve rebalance request %s: %s", path, exc)
