"""The metadata store protocol: a narrow, ZooKeeper-shaped interface.

Two implementations share it: `ZooKeeperStore` (kazoo, used with `--zk`) and `EmbeddedStore`
(a write-ahead file under `--data-dir`, used without ZooKeeper). Both hold the same documents at
the same paths (docs/zookeeper-layout.md), so everything above this module is store-agnostic.

Invariants:
- Every write is compare-and-set on the node version (`create` succeeds only if the node is
  absent; `set_if_version`/`delete_if_version` only at the given version) or part of a
  `transaction`, which applies all of its operations or none.
- A write that returned is durable (ZooKeeper quorum commit / fsync of the embedded log).
- Paths are absolute, '/'-separated, without a trailing slash; data is bytes.
- All methods are coroutines on the caller's event loop; implementations that block (kazoo's
  threads, fsync) bridge to the loop explicitly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Protocol, Union


class StoreError(Exception):
    """Base of the store's expected failures."""


class NoNode(StoreError):
    """The node (or a parent needed to create it) does not exist."""


class NodeExists(StoreError):
    """`create` found the node already there."""


class BadVersion(StoreError):
    """A compare-and-set write found a different version: someone else wrote first."""


class NotEmpty(StoreError):
    """A delete of a node that still has children."""


class AccessDenied(StoreError):
    """The store refused the request to this identity (ZooKeeper's NoAuth): retrying will not
    help until someone changes the node's ACL or the credentials given."""


class StoreUnavailable(StoreError):
    """The store cannot be reached (connection lost, session expired, closed)."""


@dataclass(frozen=True)
class Node:
    data: bytes
    version: int


@dataclass(frozen=True)
class Create:
    path: str
    data: bytes = b""
    ephemeral: bool = False


@dataclass(frozen=True)
class SetData:
    path: str
    data: bytes
    version: int  # -1: any version (use only for nodes this process alone writes)


@dataclass(frozen=True)
class Delete:
    path: str
    version: int = -1


@dataclass(frozen=True)
class CheckVersion:
    path: str
    version: int


Op = Union[Create, SetData, Delete, CheckVersion]

WatchCallback = Callable[[Optional[Node]], None]
"""Called on the event loop with the node's new state (None: deleted) after each change."""

ChildrenCallback = Callable[[list[str]], None]
"""Called on the event loop with a node's sorted child names after each change of the set."""


class MetadataStore(Protocol):
    async def start(self) -> None: ...

    async def close(self) -> None:
        """Flush and release; ephemeral nodes of this session go away."""

    async def get(self, path: str) -> Optional[Node]: ...

    async def children(self, path: str) -> list[str]:
        """Sorted child names; raises NoNode if `path` does not exist."""

    async def create(self, path: str, data: bytes = b"", *, ephemeral: bool = False,
                     make_parents: bool = False) -> int:
        """Create and return the new version (0). NodeExists if present."""

    async def set_if_version(self, path: str, data: bytes, version: int) -> int:
        """Write and return the new version. BadVersion / NoNode."""

    async def delete_if_version(self, path: str, version: int = -1) -> None: ...

    async def transaction(self, ops: list[Op]) -> list[int]:
        """Apply all ops or none; returns each op's resulting version (-1 for deletes/checks).
        Raises BadVersion / NodeExists / NoNode naming the first failing op."""

    def watch(self, path: str, callback: WatchCallback) -> Callable[[], None]:
        """Call `callback` now and on every change of `path`; returns an unsubscribe function."""

    def watch_children(self, path: str, callback: ChildrenCallback) -> Callable[[], None]:
        """Call `callback` with the children of `path` now and whenever a child is created or
        deleted (changes in quick succession may be seen as one, and the same set may come
        again); returns an unsubscribe function. `path` must exist: like kazoo's
        ChildrenWatch, the watch ends silently when it does not or once it is deleted."""
