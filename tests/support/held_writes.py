"""A node's store writes held at a gate, for tests of what happens while a write is pending
and when it fails."""

from __future__ import annotations

import asyncio

from groupctl.server.runtime import Node
from groupctl.store.base import StoreUnavailable


class HeldWrites:
    """Wraps the node's writer: each write waits for `release`, then succeeds or (with `fail`)
    raises StoreUnavailable."""

    def __init__(self, node: Node) -> None:
        self.real = node.writer.write
        self.release = asyncio.Event()
        self.fail = False
        node.writer.write = self.write

    async def write(self, records, checks=()):
        await self.release.wait()
        if self.fail:
            raise StoreUnavailable("injected store failure")
        await self.real(records, checks)
