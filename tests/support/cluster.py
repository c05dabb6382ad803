"""A coordinator cluster for end-to-end tests: N `groupctl coordinator run` processes sharing one
ZooKeeper chroot, controlled node by node, and a kazoo view of what they write there.

Node i runs with `--node-id i`, its own `--data-dir` and log file under the test's directory, a
short ZooKeeper session timeout (the test ZooKeeper has tickTime=500, so 1-10 s can be
negotiated) and the handback delay the test asks for. Nodes can be killed (SIGKILL), paused
(SIGSTOP), resumed (SIGCONT) and restarted; a restarted node keeps its port, as a restarted
broker keeps its address, and waits for its previous session to expire before it registers.

The ZooKeeper view is a plain kazoo client, not groupctl's store: the tests judge the product
from outside, through the layout it promises (docs/zookeeper-layout.md).

Invariants: every wait is bounded; processes are ended by their own pid; `running` prints the
tail of every node's log when the test ends, which pytest shows only for a failed test.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

from kafka import KafkaAdminClient, KafkaProducer
from kafka.errors import KafkaError
from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError
from kazoo.recipe.watchers import DataWatch

from groupctl.coordinator.placement import group_partition
from groupctl.coordinator.leadership import preferred_node
from groupctl.layout.paths import encode_name
from groupctl.store.zookeeper import split_connect
from tests.support.polling import wait_until
from tests.support.coordinator import CoordinatorProcess

__all__ = ["Cluster", "SteadyProducer", "create_topic_on", "running", "group_least_preferring", "wait_until"]

SESSION_TIMEOUT_S = 4.0
GROUP_PARTITIONS = 50
NO_HANDBACK_S = 3600.0
"""A handback delay no test outlives: a restarted node does not get its partitions back, so a
group moves only when its coordinator dies."""
START_TIMEOUT_S = 45.0  # a restart waits up to 2 session timeouts for its old registration


class Cluster:
    """Nodes 0..size-1 of one coordinator cluster (see the module docstring)."""

    def __init__(self, zk_connect: str, base_dir: Path, size: int = 3, *,
                 session_timeout_s: float = SESSION_TIMEOUT_S, handback_delay_s: float = NO_HANDBACK_S,
                 group_partitions: int = GROUP_PARTITIONS) -> None:
        self.zk_connect = zk_connect
        self.base_dir = base_dir
        self.size = size
        self.session_timeout_s = session_timeout_s
        self.group_partitions = group_partitions
        self._args = ("--zk", zk_connect, "--zk-session-timeout-s", str(session_timeout_s),
                      "--handback-delay-s", str(handback_delay_s), "--group-partitions", str(group_partitions))
        self.nodes: dict[int, CoordinatorProcess] = {}
        self._ports: dict[int, int] = {}
        self._paused: set[int] = set()
        hosts, chroot = split_connect(zk_connect)
        self.zk = KazooClient(hosts=hosts, timeout=10)
        self._chroot = chroot or ""

    # -- nodes -------------------------------------------------------------------------------

    def start(self) -> "Cluster":
        """Start every node, one after another. The first one leads every group partition until
        the others are live; with a long handback delay it keeps them until it dies."""
        self.zk.start(timeout=10)
        for node_id in range(self.size):
            self.start_node(node_id)
        return self

    def start_node(self, node_id: int, timeout: float = START_TIMEOUT_S) -> CoordinatorProcess:
        """Start (or restart, on its old port) node `node_id` and wait until it is ready."""
        data_dir = self.base_dir / f"node-{node_id}"
        data_dir.mkdir(parents=True, exist_ok=True)
        port = ("--port", str(self._ports[node_id])) if node_id in self._ports else ()
        node = CoordinatorProcess("--node-id", str(node_id), "--data-dir", str(data_dir), *self._args, *port,
                                  log_path=self.log_path(node_id))
        self.nodes[node_id] = node
        node.start(timeout=timeout)
        self._ports[node_id] = node.port
        return node

    def kill(self, node_id: int) -> None:
        """kill -9: the node's session lives on in ZooKeeper until it expires."""
        self.nodes[node_id].kill()
        self._paused.discard(node_id)

    def pause(self, node_id: int) -> None:
        """SIGSTOP: the node neither answers nor heartbeats ZooKeeper until `resume`."""
        self.nodes[node_id].signal(signal.SIGSTOP)
        self._paused.add(node_id)

    def resume(self, node_id: int) -> None:
        self.nodes[node_id].signal(signal.SIGCONT)
        self._paused.discard(node_id)

    def restart(self, node_id: int) -> CoordinatorProcess:
        """Start a killed node again (it registers once its old session has expired)."""
        return self.start_node(node_id)

    def running(self, node_id: int) -> bool:
        node = self.nodes.get(node_id)
        return node is not None and node.proc is not None and node.proc.poll() is None

    @property
    def live(self) -> list[int]:
        """The nodes that are running and not paused."""
        return [n for n in sorted(self.nodes) if self.running(n) and n not in self._paused]

    def bootstrap(self, *only: int) -> str:
        """bootstrap.servers for the live nodes (or just `only`)."""
        ids = only or self.live
        return ",".join(self.nodes[n].bootstrap for n in ids)

    def port(self, node_id: int) -> int:
        return self._ports[node_id]

    def close(self) -> None:
        for node_id in sorted(self.nodes):
            if node_id in self._paused:
                self.resume(node_id)
            self.nodes[node_id].kill()
        self.zk.stop()
        self.zk.close()

    # -- logs --------------------------------------------------------------------------------

    def log_path(self, node_id: int) -> Path:
        return self.base_dir / f"node-{node_id}.log"

    def log(self, node_id: int) -> str:
        try:
            return self.log_path(node_id).read_text(errors="replace")
        except OSError:
            return ""

    def log_tails(self, lines: int = 40) -> str:
        return "\n".join(f"---- node {n} ({self.log_path(n)}) ----\n" + "\n".join(self.log(n).splitlines()[-lines:])
                         for n in sorted(self.nodes))

    # -- ZooKeeper, as the nodes wrote it ----------------------------------------------------

    def _read(self, path: str) -> Optional[dict]:
        try:
            data, _ = self.zk.get(self._chroot + path)
        except NoNodeError:
            return None
        return json.loads(data)

    def partition_of(self, group: str) -> int:
        return group_partition(group, self.group_partitions)

    def group_document(self, group: str) -> Optional[dict]:
        """`/groups/<group>`, or None."""
        return self._read(f"/groups/{encode_name(group)}")

    def group_history(self, group: str) -> list[dict]:
        """A list that collects the group's documents as ZooKeeper's watch reports them from now on
        (a kazoo DataWatch: successive writes closer together than a watch round trip may be
        reported once, as the later one)."""
        history: list[dict] = []

        def collect(data, _stat) -> None:
            if data:
                history.append(json.loads(data))

        DataWatch(self.zk, self._chroot + f"/groups/{encode_name(group)}", collect)
        return history

    def leader_of(self, group: str) -> Optional[int]:
        """The node whose leader znode for the group's partition exists now, or None."""
        leader = self._read(f"/coordinators/partitions/{self.partition_of(group)}/leader")
        return leader["node_id"] if leader is not None else None

    def committed(self, group: str, topic: str) -> dict[int, int]:
        """Partition -> committed offset, from `/groups/<group>/offsets/<topic>`."""
        document = self._read(f"/groups/{encode_name(group)}/offsets/{encode_name(topic)}")
        if document is None:
            return {}
        return {int(p): entry["offset"] for p, entry in document["partitions"].items()}

    def registered(self) -> set[int]:
        """The node ids under `/brokers/ids`."""
        try:
            return {int(c) for c in self.zk.get_children(self._chroot + "/brokers/ids")}
        except NoNodeError:
            return set()

    def topic(self, name: str) -> Optional[dict]:
        return self._read(f"/brokers/topics/{encode_name(name)}")

    def write_topic(self, name: str, document: dict) -> None:
        """Overwrite `/brokers/topics/<name>` (as an operator's tool would)."""
        self.zk.set(self._chroot + f"/brokers/topics/{encode_name(name)}", json.dumps(document).encode())

    def stable_on(self, group: str, node_id: int, *, after_generation: int, members: int) -> Optional[dict]:
        """The group's document if it is Stable with `members` members, a generation above
        `after_generation`, names `node_id` as coordinator, and `node_id` leads its partition."""
        document = self.group_document(group)
        if (document is not None and document["state"] == "Stable" and document["coordinator"] == node_id
                and document["generation"] > after_generation and len(document["members"]) == members
                and self.leader_of(group) == node_id):
            return document
        return None


def create_topic_on(bootstrap: str, topic: str, partitions: int, node_id: int) -> None:
    """A topic whose every partition lives on `node_id` (a manual assignment)."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
    try:
        admin.create_topics({topic: {"assignments": {p: [node_id] for p in range(partitions)}}})
    finally:
        admin.close()


def group_least_preferring(node_id: int, nodes: list[int], prefix: str = "group",
                           partitions: int = GROUP_PARTITIONS) -> str:
    """A group name whose partition ranks `node_id` below every other node of `nodes`: while any
    other node is live, the election never makes `node_id` the group's coordinator (unless the
    preferred node fails to claim within the election's grace period)."""
    others = [n for n in nodes if n != node_id]
    for i in range(1000):
        name = f"{prefix}-{i}"
        p = group_partition(name, partitions)
        if all(preferred_node(p, {node_id, other}) == other for other in others):
            return name
    raise AssertionError(f"no group name with prefix {prefix!r} ranks node {node_id} last")


@contextmanager
def running(zk_connect: str, base_dir: Path, size: int = 3, **options) -> Iterator[Cluster]:
    """A started cluster, closed (every node killed) at exit; node log tails are printed then,
    so a failing test shows them."""
    cluster = Cluster(zk_connect, base_dir, size, **options)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.close()
        print(cluster.log_tails())



class SteadyProducer:
    """A thread producing to every partition of a topic in turn, `rate` messages a second, until
    `stop`. `acknowledged` maps each value the cluster acknowledged to (partition, offset); a send
    that failed (its partition's node down) is counted in `failures` and not retried: its value
    may or may not be in the log."""

    def __init__(self, bootstrap: str, topic: str, partitions: int, *, rate: float = 100.0,
                 max_seconds: float = 300.0) -> None:
        self.topic = topic
        self.partitions = partitions
        self.acknowledged: dict[str, tuple[int, int]] = {}
        self.failures = 0
        self._interval = 1.0 / rate
        self._max_seconds = max_seconds
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=0, retries=0,
                                       request_timeout_ms=5000, max_block_ms=5000)
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"producer-{topic}")
        self._thread.start()

    def _run(self) -> None:
        deadline = time.monotonic() + self._max_seconds
        sent = 0
        while not self._stop.is_set() and time.monotonic() < deadline:
            value = f"{self.topic}-{sent}"
            future = self._producer.send(self.topic, value=value.encode(), partition=sent % self.partitions)
            sent += 1
            try:
                metadata = future.get(timeout=10)
            except KafkaError:
                with self._lock:
                    self.failures += 1
            else:
                with self._lock:
                    self.acknowledged[value] = (metadata.partition, metadata.offset)
            self._stop.wait(self._interval)

    def values(self) -> set[str]:
        with self._lock:
            return set(self.acknowledged)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)
        self._producer.close(timeout=10)
