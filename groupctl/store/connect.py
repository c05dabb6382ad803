"""Choosing the metadata store from the node's and the CLI's options.

`--zk CONNECT` selects ZooKeeper, with `--zk-auth` credentials (`groupctl.store.zk_auth`) and
the ACLs they put on the znodes the node creates (`--zk-world-readable`: anyone may read them);
otherwise the embedded store keeps its files in `<data-dir>/metadata` (apart from the partition
logs that share the data dir), or in memory only when there is no data dir; it has no ACLs and
ignores the ZooKeeper options. The store is returned unstarted: the caller owns
`start()`/`close()`. Credentials that cannot be used are a StoreError (one line, no secret).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from groupctl import defaults
from groupctl.store.base import MetadataStore, StoreError
from groupctl.store.zk_auth import BadZkAuth, parse_zk_auth

METADATA_DIR = "metadata"


def open_store(*, zk: Optional[str] = None, data_dir: Optional[Path] = None,
               session_timeout_s: float = defaults.ZK_SESSION_TIMEOUT_S, connect_timeout_s: float = 10.0,
               zk_auth: Optional[str] = None, zk_world_readable: bool = False) -> MetadataStore:
    if zk:
        from groupctl.store.zookeeper import ZooKeeperStore  # kazoo only when ZooKeeper is used

        try:
            auth = parse_zk_auth(zk_auth) if zk_auth else None
        except BadZkAuth as exc:
            raise StoreError(str(exc)) from None
        return ZooKeeperStore(zk, auth=auth, world_readable=zk_world_readable,
                              session_timeout_s=session_timeout_s, connect_timeout_s=connect_timeout_s)
    from groupctl.store.embedded import EmbeddedStore

    return EmbeddedStore(Path(data_dir) / METADATA_DIR if data_dir is not None else None)
