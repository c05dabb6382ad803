"""Metadata stores (ZooKeeper, embedded) behind one protocol; see `base` for the contract.

Implementations are imported from their modules (`groupctl.store.zookeeper`,
`groupctl.store.embedded`) or chosen by `open_store`, so importing this package stays cheap.
"""

from groupctl.store.base import (
    BadVersion,
    CheckVersion,
    Create,
    Delete,
    MetadataStore,
    Node,
    NodeExists,
    NoNode,
    NotEmpty,
    Op,
    SetData,
    StoreError,
    StoreUnavailable,
    WatchCallback,
)
from groupctl.store.connect import open_store

__all__ = [
    "BadVersion", "CheckVersion", "Create", "Delete", "MetadataStore", "Node", "NodeExists", "NoNode",
    "NotEmpty", "Op", "SetData", "StoreError", "StoreUnavailable", "WatchCallback", "open_store",
]
