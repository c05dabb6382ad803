"""Group documents as ops receives them (from ZooKeeper or a coordinator's extension API): decoded
(`groupctl.layout.groups`), with the JSON object exactly as stored, which `zk watch` prints
unchanged. A document that does not decode is an OpsError naming its path."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Union

from groupctl.errors import OpsError
from groupctl.layout.codec import LayoutError, decode_object
from groupctl.layout.any_group import AnyGroupDocument, group_from_json
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
