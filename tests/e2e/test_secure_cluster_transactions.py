"""Transactions between nodes of a secured cluster: two nodes whose only listener is SASL_SSL, with
the authorizer on, reach each other on it (`--inter-node-listener`) as the super user `node`
(`--inter-node-config`, Java client properties), so the transaction coordinator's
WriteTxnMarkers and the partition leaders' AddPartitionsToTxn verification pass ClusterAction.
A transactional confluent-kafka producer, authenticated as alice (who has no ClusterAction),
commits a transaction whose partitions are on both nodes, and a read_committed consumer sees it."""

from __future__ import annotations

import time
from pathlib import Path

import confluent_kafka
import pytest
from kafka import KafkaAdminClient

from groupctl.layout.credentials import encode_credentials
from groupctl.layout.paths import user_path
from groupctl.security.acls import AccessControlEntry, AclBinding, Operation, PatternType, Permission, ResourcePattern
from groupctl.security.acls import ResourceType
from groupctl.security.scram import make_credential
from groupctl.server.config import Listener
from tests.support.certs import make_pki
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.polling import wait_until

pytestmark = pytest.mark.zookeeper

TOPIC = "secure-out"
NODE_PASSWORD, ALICE_PASSWORD = "node-secret", "alice-secret"


def add_user(node: InProcessCoordinator, name: str, password: str) -> None:
    credentials = {m: make_credential(m, password) for m in ("SCRAM-SHA-256", "SCRAM-SHA-512")}
    node.call(node.node.store.create(user_path(name), encode_credentials(credentials), make_parents=True))


def inter_node_properties(path: Path, ca: Path) -> Path:
    path.write_text(
        "sasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n"
        f'    username="node" password="{NODE_PASSWORD}";\n'
        f"ssl.truststore.type=PEM\nssl.truststore.location={ca}\n")
    return path


def client(pki, user: str, password: str) -> dict:
    return {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": user,
            "sasl.password": password, "ssl.ca.location": str(pki.ca)}


@pytest.fixture
def secured_cluster(zk_connect, tmp_path):
    pki = make_pki(tmp_path / "pki")
    properties = inter_node_properties(tmp_path / "inter-node.properties", pki.ca)
    nodes = []
    try:
        for node_id in (0, 1):
            config = node_config(
                node_id=node_id, zk=zk_connect, data_dir=tmp_path / f"node-{node_id}",
                listeners=(Listener("SASL_SSL", "127.0.0.1", 0),), ssl_certfile=pki.server_cert,
                ssl_keyfile=pki.server_key, sasl_enabled_mechanisms=("SCRAM-SHA-256", "SCRAM-SHA-512"),
                authorizer=True, super_users=("User:node",), allow_everyone_if_no_acl_found=True,
                inter_node_listener="SASL_SSL", inter_node_config=properties, zk_session_timeout_s=4.0)
            nodes.append(InProcessCoordinator(config).start())
            if node_id == 0:
                add_user(nodes[0], "node", NODE_PASSWORD)
                add_user(nodes[0], "alice", ALICE_PASSWORD)
                # A Cluster ACL for someone else: alice (found in no ACL otherwise) lacks ClusterAction.
                binding = AclBinding(ResourcePattern(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL),
                                     AccessControlEntry("User:ops", "*", Operation.CLUSTER_ACTION, Permission.ALLOW))
                assert nodes[0].call(nodes[0].node.authorizer.create([binding])) == [None]
        wait_until(lambda: all(len(n.node.live_nodes()) == 2 for n in nodes), timeout=20,
                   message="both nodes see each other")
        bootstrap = ",".join(f"127.0.0.1:{n.server.port_of('SASL_SSL')}" for n in nodes)
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, security_protocol="SASL_SSL",
                                 sasl_mechanism="SCRAM-SHA-512", sasl_plain_username="node",
                                 sasl_plain_password=NODE_PASSWORD, ssl_cafile=str(pki.ca), request_timeout_ms=10000)
        try:
            admin.create_topics({TOPIC: {"assignments": {0: [0], 1: [1]}}})
        finally:
            admin.close()
        yield pki, bootstrap, nodes
    finally:
        for node in reversed(nodes):
            node.stop()


def read_committed(bootstrap: str, pki, partition: int, timeout_s: float = 30) -> list[bytes]:
    settings = {"bootstrap.servers": bootstrap, **client(pki, "alice", ALICE_PASSWORD), "enable.auto.commit": False}
    probe = confluent_kafka.Consumer({**settings, "group.id": "probe"})
    reader = confluent_kafka.Consumer({**settings, "group.id": f"reader-{partition}",
                                       "isolation.level": "read_committed"})
    got: list[bytes] = []
    try:
        reader.assign([confluent_kafka.TopicPartition(TOPIC, partition, 0)])
        position, end = -1, 0
        deadline = time.monotonic() + timeout_s
        while position != end and time.monotonic() < deadline:
            got += [m.value() for m in reader.consume(num_messages=100, timeout=0.5) if m.error() is None]
            position = reader.position([confluent_kafka.TopicPartition(TOPIC, partition)])[0].offset
            _, end = probe.get_watermark_offsets(confluent_kafka.TopicPartition(TOPIC, partition), timeout=30)
    finally:
        reader.close()
        probe.close()
    assert position == end, f"the read_committed consumer of {TOPIC}-{partition} stopped at {position}, not {end}"
    return got


def test_a_transaction_over_both_nodes_of_a_sasl_ssl_cluster_commits_through_the_inter_node_listener(
        secured_cluster):
    pki, bootstrap, _ = secured_cluster
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, **client(pki, "alice", ALICE_PASSWORD),
                                         "transactional.id": "secure-tx"})
    producer.init_transactions(30)
    producer.begin_transaction()
    for partition in (0, 1):
        producer.produce(TOPIC, value=f"committed-{partition}".encode(), partition=partition)
    producer.commit_transaction(30)
    producer.begin_transaction()
    for partition in (0, 1):
        producer.produce(TOPIC, value=f"aborted-{partition}".encode(), partition=partition)
    producer.abort_transaction(30)
    for partition in (0, 1):
        assert read_committed(bootstrap, pki, partition) == [f"committed-{partition}".encode()]
