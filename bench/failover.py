"""Coordinator failover: from kill -9 of a group's coordinator to the group Stable on another node.

    python -m bench.failover [--repeats 5] [--session-timeout-s 6] [--members 3]

Starts its own ZooKeeper (Debian's package, 127.0.0.1, a temp dir, the test settings:
tickTime=500, forceSync=no) and three `groupctl coordinator run` nodes sharing it
(tests/support/cluster.py; no handback, so a group moves only when its coordinator dies). A
group of kafka-python consumers (session timeout 6 s, heartbeat every 1 s, idle: nothing to
consume) is Stable; the bench kills its coordinator with SIGKILL and times three phases:

- detection: kill -> the leader znode of the group's partition names another node
  (`/coordinators/partitions/<p>/leader`; ZooKeeper must first expire the dead node's session);
- load: -> the new node serves the group: FindCoordinator on it names it, and DescribeGroups on
  it answers neither COORDINATOR_LOAD_IN_PROGRESS nor NOT_COORDINATOR;
- rejoin: -> the group document is Stable with a higher generation and names the new node (the
  members found the new coordinator and completed the takeover rebalance).

Then it restarts the killed node, waits for the group to be Stable, and repeats, killing the
group's coordinator of the moment. Every phase is polled every 10 ms (so figures carry up to
~10 ms of polling delay) and bounded by 60 s.

Baseline, same ZooKeeper, same session timeout: a bare kazoo client process holding an
ephemeral znode is killed with SIGKILL, timed until ZooKeeper deletes the znode. That is the
floor of detection for anything that relies on ZooKeeper sessions.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional

from kafka import KafkaAdminClient
from kafka.protocol.admin.groups import DescribeGroupsRequest
from kafka.protocol.metadata import FindCoordinatorRequest
from kazoo.client import KazooClient

from tests.support.cluster import Cluster, group_least_preferring
from tests.support.consumers import ConsumerProcess
from tests.support.wire import decode_response, read_frame
from tests.support.zookeeper import ZooKeeperServer

TOPIC, PARTITIONS = "failover", 6
TOPIC_NODE = 2  # holds the topic and never coordinates the group (see tests/support/cluster.py)
CONSUMER_SESSION_MS = 6000
POLL_S = 0.01
PHASE_LIMIT_S = 60.0
NOT_SERVING = {14, 15, 16}  # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR


def poll(predicate: Callable[[], object], what: str) -> float:
    """Poll `predicate` every POLL_S until it is truthy; the monotonic time it first was."""
    deadline = time.monotonic() + PHASE_LIMIT_S
    while time.monotonic() < deadline:
        if predicate():
            return time.monotonic()
        time.sleep(POLL_S)
    raise RuntimeError(f"no {what} within {PHASE_LIMIT_S:.0f} s")


def _exchange(port: int, request, version: int):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
            request.with_header(correlation_id=1, client_id="bench-failover")
            sock.sendall(bytes(request.encode(version=version, header=True, framed=True)))
            return decode_response(request, read_frame(sock), version)
    except (OSError, ConnectionError):
        return None


def serves(port: int, node_id: int, group: str) -> bool:
    """FindCoordinator on the node names it, and DescribeGroups on it is answered in full."""
    found = _exchange(port, FindCoordinatorRequest[3](key=group, key_type=0), 3)
    if found is None or found.error_code != 0 or found.node_id != node_id:
        return False
    described = _exchange(port, DescribeGroupsRequest[5](groups=[group], include_authorized_operations=False), 5)
    return described is not None and described.groups[0].error_code not in NOT_SERVING


def stable(cluster: Cluster, group: str, members: int) -> Optional[dict]:
    """The group's document if it is Stable with `members` members on the node leading it."""
    leader = cluster.leader_of(group)
    return cluster.stable_on(group, leader, after_generation=0, members=members) if leader is not None else None


def one_failover(cluster: Cluster, group: str, members: int) -> tuple[float, float, float]:
    """Kill the group's coordinator; (detection, load, rejoin) in seconds; restart the node."""
    before = stable(cluster, group, members)
    victim = before["coordinator"]
    killed_at = time.monotonic()
    cluster.kill(victim)
    elected_at = poll(lambda: cluster.leader_of(group) not in (None, victim), "new leader znode")
    successor = cluster.leader_of(group)
    serving_at = poll(lambda: serves(cluster.port(successor), successor, group), f"node {successor} serving")
    stable_at = poll(lambda: cluster.stable_on(group, successor, after_generation=before["generation"],
                                               members=members), "Stable document on the new node")
    cluster.restart(victim)
    return elected_at - killed_at, serving_at - elected_at, stable_at - serving_at


FLOOR_CHILD = """
import logging, sys, time
from kazoo.client import KazooClient
logging.getLogger("kazoo").setLevel(logging.ERROR)
client = KazooClient(hosts=sys.argv[1], timeout=float(sys.argv[2]))
client.start(timeout=10)
client.create(sys.argv[3], ephemeral=True, makepath=True)
print("ready", flush=True)
time.sleep(600)
"""


def session_expiry_floor(connect: str, session_timeout_s: float, index: int) -> float:
    """kill -9 of a kazoo client holding an ephemeral znode -> the znode is gone, in seconds."""
    path = f"/bench-floor/n{index}"
    child = subprocess.Popen([sys.executable, "-c", FLOOR_CHILD, connect, str(session_timeout_s), path],
                             stdout=subprocess.PIPE, text=True)
    watcher = KazooClient(hosts=connect)
    watcher.start(timeout=10)
    try:
        if child.stdout.readline().strip() != "ready":
            raise RuntimeError("the kazoo child did not create its ephemeral znode")
        killed_at = time.monotonic()
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
        return poll(lambda: watcher.exists(path) is None, "ephemeral znode deleted") - killed_at
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
            child.wait(10)
        watcher.stop()
        watcher.close()


def create_topic(bootstrap: str) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
    try:
        admin.create_topics({TOPIC: {"assignments": {p: [TOPIC_NODE] for p in range(PARTITIONS)}}})
    finally:
        admin.close()


def row(name: str, values: list[float]) -> str:
    return (f"{name:<52} {statistics.median(values):>8.2f} {min(values):>8.2f} {max(values):>8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--session-timeout-s", type=float, default=6.0)
    parser.add_argument("--members", type=int, default=3)
    args = parser.parse_args()
    logging.getLogger("kazoo").setLevel(logging.ERROR)  # connection drops at shutdown are expected

    with tempfile.TemporaryDirectory() as tmp:
        zookeeper = ZooKeeperServer(Path(tmp) / "zk").start()
        cluster = Cluster(f"{zookeeper.connect}/bench", Path(tmp), 3, session_timeout_s=args.session_timeout_s)
        consumers: list[ConsumerProcess] = []
        try:
            floor = [session_expiry_floor(zookeeper.connect, args.session_timeout_s, i) for i in range(args.repeats)]
            cluster.start()
            group = group_least_preferring(TOPIC_NODE, [0, 1, 2], "failover")
            create_topic(cluster.bootstrap())
            consumers = [ConsumerProcess("kafka-python", cluster.bootstrap(), group, TOPIC,
                                         client_id=f"bench-{i}", session_timeout_ms=CONSUMER_SESSION_MS,
                                         max_seconds=60 + args.repeats * 4 * args.session_timeout_s)
                         for i in range(args.members)]
            phases = []
            for _ in range(args.repeats):
                poll(lambda: stable(cluster, group, args.members), "a Stable group before the kill")
                phases.append(one_failover(cluster, group, args.members))
            detection, load, rejoin = (list(p) for p in zip(*phases))
            total = [sum(p) for p in phases]
            print(f"ZooKeeper session timeout {args.session_timeout_s:g} s (tickTime 500 ms); "
                  f"{args.members} kafka-python members, session timeout {CONSUMER_SESSION_MS / 1000:g} s, "
                  f"heartbeat {CONSUMER_SESSION_MS / 6000:g} s")
            print(f"{'phase (seconds)':<52} {'median':>8} {'min':>8} {'max':>8}")
            print(row("detection: kill -> new leader znode", detection))
            print(row("load: -> new node serves the group", load))
            print(row("rejoin: -> Stable, higher generation, new node", rejoin))
            print(row("total: kill -> Stable on the new node", total))
            print(row("baseline: kill -9'd kazoo client's ephemeral gone", floor))
            print(f"(median of {args.repeats} failovers; detection / baseline = "
                  f"{statistics.median(detection) / statistics.median(floor):.2f})")
        finally:
            for consumer in consumers:
                consumer.stop()
            cluster.close()
            zookeeper.stop()


if __name__ == "__main__":
    main()
