"""Group documents as ops receives them (from ZooKeeper or a coordinator's extension API)."""

from __future__ import annotations

import json
from typing import Any, Optional, Union

from groupctl.ops.errors import OpsError


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
