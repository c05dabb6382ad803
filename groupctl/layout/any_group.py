"""A group document of either type, `/groups/<group>`: the classic one (`groups`) or the
consumer group protocol's (`consumer_groups`), told apart by "type" (absent: classic).

Readers that serve both types decode through here; both types have `group`, `generation` (a
consumer group's is its group epoch), `state`, `members` (each with `member_id` and
`client_id`), `ownership`, `rebalance` (None for a consumer group) and `coordinator`.
"""

from __future__ import annotations

from typing import Any, Optional, Union

from groupctl.layout.codec import LayoutError, decode_object
from groupctl.layout.consumer_groups import CONSUMER, ConsumerGroupDocument
from groupctl.layout.groups import GroupDocument, group_type
from groupctl.layout.paths import group_path

AnyGroupDocument = Union[GroupDocument, ConsumerGroupDocument]


def group_from_json(group: str, document: Any) -> AnyGroupDocument:
    path = group_path(group)
    if not isinstance(document, dict):
        raise LayoutError(path, f"not a JSON object but {type(document).__name__}")
    if group_type(path, document) == CONSUMER:
        return ConsumerGroupDocument.from_json(group, document)
    return GroupDocument.from_json(group, document)


def decode_group(group: str, data: Optional[bytes]) -> AnyGroupDocument:
    return group_from_json(group, decode_object(group_path(group), data))
