"""DescribeLogDirs (35), v1-5: the node's log directory, its partitions' sizes and its volume.

Version notes: v2 is flexible; v3 adds a top-level error code; v4 the volume's total and usable
bytes; v5 `is_cordoned` (never: a log directory is not cordoned here).

Semantics, as Kafka's `ReplicaManager.describeLogDirs` on a broker with one log directory: the
node's log directory is the absolute path of the directory holding the partition directories
(`<data-dir>/log`). Its topics list the logs of the partitions this node leads (with one replica
per partition, every replica the node hosts), each with its size in bytes (the sum of its
segments), `offset_lag` 0 (the log end offset is the high watermark) and `is_future_key` false
(logs never move between directories). A null topic list means every such partition; otherwise
only the named ones this node hosts are listed, and a topic left with no partition is left out.
Total and usable bytes come from `os.statvfs` of the directory, as Java's FileStore reports them.
Sizes never open a log (`LogManager.sizes`): an open log is sized from memory, one not open yet
by stat'ing its segment files in a worker thread, so describing the directory costs no log
recovery and leaves untouched partitions untouched (a Kafka broker has every log open anyway).
A node without a data dir keeps its logs in memory and has no log directory: the answer lists
none, as a broker without log dirs would.

Authorization (`--authorizer`), as Kafka: Describe on the Cluster, else the top-level error
CLUSTER_AUTHORIZATION_FAILED (v3+) and no directories.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path
from typing import Optional

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.handlers.acl_checks import cluster_allowed


def log_dir(ctx) -> Optional[Path]:
    """The node's one log directory (absolute), or None when its logs live in memory."""
    directory = ctx.node.logs.data_dir
    return None if directory is None else Path(os.path.abspath(directory))


def hosted(ctx) -> list[tuple[str, int]]:
    """(topic, partition) of every partition whose log this node keeps: those it leads."""
    node_id = ctx.node.config.node_id
    return [(record.name, p) for record in ctx.node.topics.all()
            for p, replicas in sorted(record.replicas.items()) if replicas and replicas[0] == node_id]


def _volume(directory: Path) -> tuple[int, int]:
    """(total, usable) bytes of the file system holding `directory`."""
    stats = os.statvfs(directory)
    return stats.f_blocks * stats.f_frsize, stats.f_bavail * stats.f_frsize


async def _sizes(ctx, partitions: list[tuple[str, int]]) -> dict[str, list[tuple[int, int]]]:
    """topic -> [(partition, size in bytes)] of `partitions`."""
    sizes: dict[str, list[tuple[int, int]]] = defaultdict(list)
    found = await ctx.node.logs.sizes(partitions)
    for topic, p in partitions:
        sizes[topic].append((p, found[(topic, p)]))
    return sizes


@api(key=35, versions=(1, 5))
async def handle_describe_log_dirs(ctx, request):
    if not cluster_allowed(ctx, Operation.DESCRIBE):
        return ctx.respond(throttle_time_ms=0, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, results=[])
    directory = log_dir(ctx)
    if directory is None:
        return ctx.respond(throttle_time_ms=0, error_code=0, results=[])
    partitions = hosted(ctx)
    if request.topics is not None:
        named = {(t.topic, p) for t in request.topics for p in t.partitions}
        partitions = [key for key in partitions if key in named]
    result = ctx.response_class.DescribeLogDirsResult
    topic_cls = result.DescribeLogDirsTopic
    partition_cls = topic_cls.DescribeLogDirsPartition
    topics = [
        topic_cls(name=topic, partitions=[partition_cls(partition_index=p, partition_size=size, offset_lag=0,
                                                        is_future_key=False) for p, size in entries])
        for topic, entries in (await _sizes(ctx, partitions)).items()
    ]
    total, usable = _volume(directory)
    return ctx.respond(throttle_time_ms=0, error_code=0, results=[
        result(error_code=0, log_dir=str(directory), topics=topics, total_bytes=total, usable_bytes=usable,
               is_cordoned=False)])
