"""Users' SCRAM credentials in the metadata store (`/config/users/<user>`,
`groupctl.layout.credentials`), as Describe/AlterUserScramCredentials read and change them.

Invariants:
- Every change is one compare-and-set write of one user's document (`layout.credentials.altered`,
  the rule `user add|remove --zk` applies too); a write that loses a race is computed again from
  what the other writer stored, up to MAX_ATTEMPTS times. Changes to different users are
  independent writes, as in Kafka, whose result is per user.
- Nothing here caches: the node reads credentials when it needs them, so a change made through
  ZooKeeper directly (another node, `--zk`) counts at the next read.
"""

from __future__ import annotations

from typing import Collection, Mapping

from groupctl.layout.credentials import ScramCredential, altered, decode_credentials
from groupctl.layout.paths import USERS, decode_name, user_path
from groupctl.store.base import BadVersion, MetadataStore, NodeExists, NoNode

MAX_ATTEMPTS = 16
"""Compare-and-set attempts of one change before giving up (BadVersion): only a storm of
concurrent writers to the same user gets that far."""


async def users(store: MetadataStore) -> list[str]:
    """Every user with a document under /config/users, sorted (credentials or not)."""
    try:
        return sorted(decode_name(child) for child in await store.children(USERS))
    except NoNode:
        return []


async def credentials(store: MetadataStore, user: str) -> dict[str, ScramCredential]:
    """`user`'s credentials by mechanism ({} when none); LayoutError for a malformed document."""
    node = await store.get(user_path(user))
    return decode_credentials(user, node.data) if node is not None else {}


async def alter(store: MetadataStore, user: str, *, delete: Collection[str] = (),
                upsert: Mapping[str, ScramCredential] = {}) -> None:
    """Delete the credentials of the mechanisms `delete` and set `upsert`, in one write.
    MissingCredential (nothing written) when `delete` names a credential the user lacks."""
    path = user_path(user)
    for _ in range(MAX_ATTEMPTS):
        node = await store.get(path)
        data = altered(user, node.data if node is not None else None, delete=delete, upsert=upsert)
        try:
            if node is None:
                if data is not None:
                    await store.create(path, data, make_parents=True)
            elif data is None:
                await store.delete_if_version(path, node.version)
            else:
                await store.set_if_version(path, data, node.version)
            return
        except (BadVersion, NodeExists, NoNode):
            continue  # another writer came first: apply the change to what it stored
    raise BadVersion(f"{path}: changed by other writers {MAX_ATTEMPTS} times in a row")
