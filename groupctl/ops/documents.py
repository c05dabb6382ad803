"""Group documents as ops receives them (from ZooKeeper or a coordinator's extension API)."""

from __future__ import annotations

import json
from typing import Any, Optional, Union

from groupctl.errors import OpsError


def parse_group_document(data: Union[str, bytes, None], where: str) -> Optional[dict[str, Any]]:
    """The JSON object in `data` (None stays None); `where` names the source in errors."""
    if data is None:
        return None
    try:
        document = json.loads(data)
    except ValueError:
        raise OpsError(f"{where} does not hold a JSON group document") from None
    if not isinstance(document, dict):
        raise OpsError(f"{where} does not hold a group document (a JSON object)")
    return document


def document_generation(document: Optional[dict[str, Any]]) -> Optional[int]:
    """A group document's generation (classic) or group epoch (KIP-848); None without one."""
    if not isinstance(document, dict):
        return None
    return int_or_none(document.get("generation", document.get("group_epoch")))


def int_or_none(value: Any) -> Optional[int]:
    """`value` when it is an int (not a bool), else None: a document field read defensively."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
