"""Choosing the metadata store from the node's and the CLI's options.

`--zk CONNECT` selects ZooKeeper; otherwise the embedded store keeps its files in
`<data-dir>/metadata` (apart from the partition logs that share the data dir), or in memory only
when there is no data dir. The store is returned unstarted: the caller owns `start()`/`close()`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from groupctl import defaults
from groupctl.store.base import MetadataStore

METADATA_DIR = "metadata"


def open_store(*, zk: Optional[str] = None, data_dir: Optional[Path] = None,
               session_timeout_s: float = defaults.ZK_SESSION_TIMEOUT_S, connect_timeout_s: float = 10.0) -> MetadataStore:
    if zk:
        from groupctl.store.zookeeper import ZooKeeperStore  # kazoo only when ZooKeeper is used

        return ZooKeeperStore(zk, session_timeout_s=session_timeout_s, connect_timeout_s=connect_timeout_s)
    from groupctl.store.embedded import EmbeddedStore

    return EmbeddedStore(Path(data_dir) / METADATA_DIR if data_dir is not None else None)
