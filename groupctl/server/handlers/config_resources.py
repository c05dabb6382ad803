"""What DescribeConfigs, AlterConfigs and IncrementalAlterConfigs check of a resource before
acting on it, as Kafka's ConfigHelper and ConfigAdminManager check it: its type, the principal's
authorization, that a topic exists and that a broker is this node (or "", the cluster-wide
defaults); and `alter`, the one way these handlers change a stored config.

Each check raises ResourceError, which the handler answers for that resource alone. A config
value is never null: the handlers refuse nulls before `alter` (`refuse_nulls`), and `validated` judges every key
whose value is new, None included.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from groupctl.configs.catalog import InvalidConfig, ResourceType
from groupctl.configs.resolve import DEFAULT_BROKER, checked
from groupctl.coordinator.errors import ErrorCode
from groupctl.layout.codec import LayoutError
from groupctl.security.acls import CLUSTER_NAME, Operation
from groupctl.server.handlers.acl_checks import CLUSTER, GROUP, TOPIC, allowed
from groupctl.server.topics import topic_name_error
from groupctl.store.base import StoreError

DENIED = {
    ResourceType.TOPIC: (TOPIC, ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed."),
    ResourceType.BROKER: (CLUSTER, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed."),
    ResourceType.GROUP: (GROUP, ErrorCode.GROUP_AUTHORIZATION_FAILED, "Group authorization failed."),
}

Config = dict[str, str]


class ResourceError(Exception):
    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code


def resource_type(code: int) -> ResourceType:
    """The type of a request's resource; INVALID_REQUEST for one groupctl has no configs of."""
    kind = ResourceType(code) if code in {int(k) for k in DENIED} else None
    if kind is None:
        raise ResourceError(ErrorCode.INVALID_REQUEST, f"Unsupported resource type: {code}")
    return kind


def authorize(ctx: Any, kind: ResourceType, name: str, operation: Operation) -> None:
    """Raise the resource's authorization error unless `operation` is allowed on it."""
    acl_type, code, message = DENIED[kind]
    if not allowed(ctx, operation, acl_type, CLUSTER_NAME if kind is ResourceType.BROKER else name):
        raise ResourceError(code, message)


def broker_id(ctx: Any, name: str) -> Optional[int]:
    """This node's id for its name, None for "" (the cluster-wide defaults); INVALID_REQUEST
    otherwise, as Kafka's `resourceNameToBrokerId` and its check of the id."""
    if name == "":
        return None
    try:
        node_id = int(name)
    except ValueError:
        raise ResourceError(ErrorCode.INVALID_REQUEST, f"Broker id must be an integer, but it is: {name}") from None
    if node_id != ctx.node.config.node_id:
        raise ResourceError(ErrorCode.INVALID_REQUEST, f"Unexpected broker id, expected "
                                                       f"{ctx.node.config.node_id} or empty string, but received {name}")
    return node_id


def existing_topic(ctx: Any, name: str) -> None:
    problem = topic_name_error(name)
    if problem:
        raise ResourceError(ErrorCode.INVALID_TOPIC_EXCEPTION, problem)
    if ctx.node.topics.get(name) is None:
        raise ResourceError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist.")


def stored_name(ctx: Any, kind: ResourceType, name: str) -> str:
    """The name the resource's config is stored under, once the resource checks out."""
    if kind is ResourceType.TOPIC:
        existing_topic(ctx, name)
        return name
    if kind is ResourceType.BROKER:
        return DEFAULT_BROKER if broker_id(ctx, name) is None else name
    if not name:
        raise ResourceError(ErrorCode.INVALID_REQUEST, "Group name must not be empty")
    return name


def refuse_nulls(names: list[str]) -> None:
    """INVALID_REQUEST when a request sets any of `names` (keys whose value is null), as Kafka's
    ConfigAdminManager.preprocess refuses them before authorization."""
    if names:
        raise ResourceError(ErrorCode.INVALID_REQUEST, f"Null value not supported for : {', '.join(names)}")


def validated(ctx: Any, kind: ResourceType, wanted: Config, before: Config) -> Config:
    """`wanted` in canonical text; INVALID_CONFIG when a key it sets or changes is unknown,
    read-only or badly valued (keys it keeps as they were are not judged again)."""
    changed = {k: v for k, v in wanted.items() if k not in before or before[k] != v}
    try:
        canonical = checked(ctx.node.config, kind, changed, context=wanted)
    except InvalidConfig as exc:
        raise ResourceError(ErrorCode.INVALID_CONFIG, str(exc)) from None
    return {**wanted, **canonical}


async def alter(ctx: Any, code: int, name: str, change: Callable[[Config], Config], validate_only: bool,
                replaces: bool = False) -> None:
    """Check the resource, then store `change(current config)`, validated (nothing is written
    with `validate_only`). `change` may raise ResourceError. A stored document that does not
    decode is UNKNOWN_SERVER_ERROR for the resource, unless the change `replaces` the whole
    config (AlterConfigs), which is written over it (`DynamicConfigs.alter`)."""
    kind = resource_type(code)
    authorize(ctx, kind, name, Operation.ALTER_CONFIGS)
    stored = stored_name(ctx, kind, name)
    configs = ctx.node.configs

    def apply(current: Config) -> Config:
        return validated(ctx, kind, change(current), current)

    if validate_only:
        apply(dict(configs.stored.of(kind, stored)))
        return
    try:
        await configs.alter(kind, stored, apply, replaces=replaces)
    except LayoutError as exc:
        raise ResourceError(ErrorCode.UNKNOWN_SERVER_ERROR, f"the stored configs do not decode: {exc}") from None
    except StoreError as exc:
        raise ResourceError(ErrorCode.UNKNOWN_SERVER_ERROR, f"the configs could not be stored: {exc}") from None
