"""Group documents as ops receives them (from ZooKeeper or a coordinator's extension API): decoded
(`groupctl.layout.any_group`), with the JSON object exactly as stored, which `zk watch` prints
unchanged. A document that does not decode is an OpsError naming its path.

What the watches (`zk watch`, `rebalance watch`) report is a new `milestone`: a classic group's
document is written once per completed rebalance, so each new generation is one; a consumer
group's (KIP-848) is written at every step of a reconciliation, so its milestones are a new
group epoch and the group settling (Stable, or Empty) at that epoch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Optional, Union

from groupctl.errors import OpsError
from groupctl.layout.codec import LayoutError, decode_object
from groupctl.layout.any_group import AnyGroupDocument, group_from_json
from groupctl.layout.consumer_groups import ConsumerGroupDocument
from groupctl.layout.paths import group_path


@dataclass(frozen=True)
class StoredDocument:
    document: AnyGroupDocument
    stored: dict[str, Any]  # the JSON object as stored


def read_group_document(group: str, data: Union[str, bytes, None],
                        where: Optional[str] = None) -> Optional[StoredDocument]:
    """The group's document in `data` (None stays None); `where` names the source in errors
    (the path alone when None)."""
    if data is None:
        return None
    try:
        stored = decode_object(group_path(group), data.encode() if isinstance(data, str) else data)
        return StoredDocument(group_from_json(group, stored), stored)
    except LayoutError as exc:
        raise OpsError(str(exc) if where is None else f"{where}: {exc}") from None


SETTLED_CONSUMER_STATES = ("Stable", "Empty")
"""A consumer group in these states has nothing left to reconcile at its epoch."""

Milestone = tuple[int, bool]


def settled(document: AnyGroupDocument) -> bool:
    """Whether the group has finished moving at its generation: a classic document is only
    written once a rebalance completed; a consumer group has once it is Stable (or Empty)."""
    if isinstance(document, ConsumerGroupDocument):
        return document.state in SETTLED_CONSUMER_STATES
    return True


def milestone(document: AnyGroupDocument) -> Milestone:
    """(generation or group epoch, settled): a watch reports a document whose milestone differs
    from the last one it reported (see the module docstring)."""
    return document.generation, settled(document)


def milestones(documents: Iterable[Optional[StoredDocument]]) -> Iterator[Optional[StoredDocument]]:
    """The first of `documents` (the baseline; None: no document yet), then each whose milestone
    differs from the last one yielded: a new generation or epoch, a consumer group settling at
    its epoch, or None once a document was seen (the group was deleted)."""
    first = True
    last: Optional[Milestone] = None
    for stored in documents:
        reached = milestone(stored.document) if stored is not None else None
        if first or reached != last:
            first, last = False, reached
            yield stored
