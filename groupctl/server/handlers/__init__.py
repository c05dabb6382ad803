"""One module per Kafka API; importing this package registers them all (see
`groupctl.protocol.registry`). The registry is what ApiVersions advertises."""

from groupctl.server.handlers import (  # noqa: F401
    api_versions,
    consumer_group_describe,
    consumer_group_heartbeat,
    create_partitions,
    create_topics,
    delete_groups,
    delete_topics,
    describe_groups,
    fetch,
    find_coordinator,
    groupctl_describe_group,
    groupctl_trigger_rebalance,
    heartbeat,
    init_producer_id,
    join_group,
    leave_group,
    list_groups,
    list_offsets,
    metadata,
    offset_commit,
    offset_delete,
    offset_fetch,
    produce,
    sync_group,
)
