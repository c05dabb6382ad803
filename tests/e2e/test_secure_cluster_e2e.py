"""A node with TLS and SASL listeners, judged by real clients: kafka-python producing with PLAIN,
confluent-kafka consuming in a group with SCRAM-SHA-256, and the CLI through --command-config in
the Java client's spelling and in librdkafka's. Failures an operator meets on a secured cluster
(a wrong password, an untrusted certificate, a host the certificate does not name, a plaintext
client at a TLS listener) fail one connection with one clear line and leave the node serving.

Certificates are made by the tests (`tests/support/certs.py`); users are stored the way
`groupctl user add` stores them (SCRAM credentials in `/config/users`)."""

from __future__ import annotations

import json
import socket
import struct
import time
from pathlib import Path

import confluent_kafka
import kafka
import kafka.errors
import pytest
from typer.testing import CliRunner

from groupctl.cli.app import app
from groupctl.layout.credentials import encode_credentials
from groupctl.layout.paths import user_path
from groupctl.security.scram import make_credential
from groupctl.server.config import Listener
from tests.support.certs import make_pki
from tests.support.cli import assert_one_line_error
from tests.support.coordinator import InProcessCoordinator, node_config

PASSWORD = "alice-secret"
TOPIC = "payments"


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return make_pki(tmp_path_factory.mktemp("pki"))


def add_user(node: InProcessCoordinator, name: str, password: str) -> None:
    credentials = {m: make_credential(m, password) for m in ("SCRAM-SHA-256", "SCRAM-SHA-512")}
    node.call(node.node.store.create(user_path(name), encode_credentials(credentials), make_parents=True))


@pytest.fixture(scope="module")
def secured(pki):
    """A node with PLAINTEXT, SSL (client certificates requested), SASL_PLAINTEXT and SASL_SSL
    listeners, a topic and the user alice."""
    config = node_config(
        listeners=tuple(Listener(name, "127.0.0.1", 0) for name in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")),
        ssl_certfile=pki.server_cert, ssl_keyfile=pki.server_key, ssl_cafile=pki.ca, ssl_client_auth="requested",
        topics=((TOPIC, 2),))
    node = InProcessCoordinator(config).start()
    add_user(node, "alice", PASSWORD)
    try:
        yield node
    finally:
        node.stop()


def address(node: InProcessCoordinator, listener: str) -> str:
    return f"127.0.0.1:{node.server.port_of(listener)}"


def cli(args: list[str], **env: str):
    return CliRunner().invoke(app, args, env={"GROUPCTL_BOOTSTRAP": None, "GROUPCTL_ZK": None,
                                              "GROUPCTL_COMMAND_CONFIG": None, **env}, catch_exceptions=False)


def java_config(path: Path, pki, *, password: str = PASSWORD, mechanism: str = "SCRAM-SHA-512",
                ca: Path | None = None) -> Path:
    module = "plain.PlainLoginModule" if mechanism == "PLAIN" else "scram.ScramLoginModule"
    path.write_text(
        "# kafka-consumer-groups.sh --command-config, Java client spelling\n"
        "security.protocol=SASL_SSL\n"
        f"sasl.mechanism={mechanism}\n"
        f"sasl.jaas.config=org.apache.kafka.common.security.{module} required \\\n"
        f'    username="alice" password="{password}";\n'
        "ssl.truststore.type=PEM\n"
        f"ssl.truststore.location={ca or pki.ca}\n")
    return path


def librdkafka_config(path: Path, pki) -> Path:
    path.write_text(
        "security.protocol=SASL_SSL\nsasl.mechanisms=SCRAM-SHA-256\n"
        f"sasl.username=alice\nsasl.password={PASSWORD}\nssl.ca.location={pki.ca}\n")
    return path


def test_kafka_python_plain_producer_and_confluent_scram_consumer_share_a_group_over_sasl_ssl(secured, pki):
    producer = kafka.KafkaProducer(
        bootstrap_servers=address(secured, "SASL_SSL"), security_protocol="SASL_SSL", sasl_mechanism="PLAIN",
        sasl_plain_username="alice", sasl_plain_password=PASSWORD, ssl_cafile=str(pki.ca))
    try:
        for i in range(4):
            producer.send(TOPIC, f"m{i}".encode(), partition=i % 2).get(timeout=10)
    finally:
        producer.close()
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": address(secured, "SASL_SSL"), "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": "alice", "sasl.password": PASSWORD,
        "ssl.ca.location": str(pki.ca), "group.id": "secured-readers", "auto.offset.reset": "earliest",
        "enable.auto.commit": False})
    received = []
    try:
        consumer.subscribe([TOPIC])
        deadline = time.monotonic() + 30
        while len(received) < 4 and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and not message.error():
                received.append(message.value())
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    assert sorted(received) == [b"m0", b"m1", b"m2", b"m3"]


def test_the_cli_reads_a_group_through_a_java_style_command_config(secured, pki, tmp_path):
    config = java_config(tmp_path / "client.properties", pki)
    result = cli(["--bootstrap", address(secured, "SASL_SSL"), "--command-config", str(config),
                  "--output", "json", "group", "list"])
    assert result.exit_code == 0, result.output
    result = cli(["--bootstrap", address(secured, "SASL_SSL"), "group", "describe", "secured-readers",
                  "--command-config", str(config), "--output", "json"])
    assert result.exit_code == 0, result.output
    assert '"group": "secured-readers"' in result.stdout


def test_the_cli_lists_and_describes_a_transaction_through_a_command_config(secured, pki, tmp_path):
    producer = confluent_kafka.Producer({
        "bootstrap.servers": address(secured, "SASL_SSL"), "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": "alice", "sasl.password": PASSWORD,
        "ssl.ca.location": str(pki.ca), "transactional.id": "secured-tx"})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(TOPIC, value=b"pending", partition=1)
    producer.flush(30)
    config = java_config(tmp_path / "client.properties", pki)
    boot = ["--bootstrap", address(secured, "SASL_SSL"), "--command-config", str(config), "--output", "json"]
    try:
        listed = cli([*boot, "transactions", "list", "--state", "Ongoing"])
        assert listed.exit_code == 0, listed.output
        assert [t["transactional_id"] for t in json.loads(listed.stdout)["transactions"]] == ["secured-tx"]
        described = cli([*boot, "transactions", "describe", "secured-tx"])
        assert json.loads(described.stdout)["transactions"][0]["partitions"] == [{"topic": TOPIC, "partition": 1}]
    finally:
        producer.abort_transaction(30)


def test_the_cli_commits_offsets_through_a_librdkafka_style_command_config_from_the_environment(secured, pki, tmp_path):
    config = librdkafka_config(tmp_path / "rdkafka.conf", pki)
    result = cli(["offsets", "commit", "cli-committed", f"{TOPIC}:0=1"],
                 GROUPCTL_BOOTSTRAP=address(secured, "SASL_SSL"), GROUPCTL_COMMAND_CONFIG=str(config))
    assert result.exit_code == 0, result.output
    result = cli(["offsets", "show", "cli-committed", "--output", "json"],
                 GROUPCTL_BOOTSTRAP=address(secured, "SASL_SSL"), GROUPCTL_COMMAND_CONFIG=str(config))
    assert result.exit_code == 0, result.output
    assert '"committed_offset": 1' in result.stdout


def test_a_password_from_the_environment_completes_a_file_without_one(secured, pki, tmp_path):
    config = tmp_path / "no-secret.properties"
    config.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\nsasl.username=alice\n")
    result = cli(["group", "list"], GROUPCTL_BOOTSTRAP=address(secured, "SASL_PLAINTEXT"),
                 GROUPCTL_COMMAND_CONFIG=str(config), GROUPCTL_KAFKA_SASL_PASSWORD=PASSWORD)
    assert result.exit_code == 0, result.output


def test_a_wrong_password_is_one_line_naming_the_user_and_the_node_keeps_serving(secured, pki, tmp_path):
    config = java_config(tmp_path / "wrong.properties", pki, password="not-it")
    result = cli(["--bootstrap", address(secured, "SASL_SSL"), "--command-config", str(config), "group", "list"])
    message = assert_one_line_error(result, 1, "authentication as 'alice'", "invalid credentials")
    assert "not-it" not in message
    config = java_config(tmp_path / "right.properties", pki, mechanism="PLAIN")
    result = cli(["--bootstrap", address(secured, "SASL_SSL"), "--command-config", str(config), "group", "list"])
    assert result.exit_code == 0, result.output


def test_an_untrusted_certificate_is_one_line_saying_so(secured, pki, tmp_path):
    config = java_config(tmp_path / "other-ca.properties", pki, ca=pki.other_ca)
    result = cli(["--bootstrap", address(secured, "SASL_SSL"), "--command-config", str(config), "group", "list"])
    assert_one_line_error(result, 1, "TLS handshake", "certificate verify failed", "ssl.truststore.location")


def test_a_certificate_for_another_host_is_a_hostname_mismatch(pki, tmp_path):
    other = make_pki(tmp_path / "elsewhere", server_names=("broker.example.com",))
    node = InProcessCoordinator(node_config(listeners=(Listener("SSL", "127.0.0.1", 0),),
                                            ssl_certfile=other.server_cert, ssl_keyfile=other.server_key)).start()
    try:
        config = tmp_path / "ssl.properties"
        config.write_text(f"security.protocol=SSL\nssl.truststore.location={other.ca}\n")
        result = cli(["--bootstrap", address(node, "SSL"), "--command-config", str(config), "group", "list"])
        assert_one_line_error(result, 1, "TLS handshake", "mismatch", "does not name this host")
        config.write_text(f"security.protocol=SSL\nssl.truststore.location={other.ca}\n"
                          "ssl.endpoint.identification.algorithm=\n")
        result = cli(["--bootstrap", address(node, "SSL"), "--command-config", str(config), "group", "list"])
        assert result.exit_code == 0, result.output
    finally:
        node.stop()


def test_mutual_tls_with_a_pem_keystore_reaches_the_ssl_listener(secured, pki, tmp_path):
    config = tmp_path / "mtls.properties"
    config.write_text(f"security.protocol=SSL\nssl.truststore.location={pki.ca}\n"
                      f"ssl.keystore.type=PEM\nssl.keystore.certificate.location={pki.client_cert}\n"
                      f"ssl.key.location={pki.client_key}\n")
    result = cli(["--bootstrap", address(secured, "SSL"), "--command-config", str(config), "group", "list"])
    assert result.exit_code == 0, result.output


def test_a_client_certificate_is_required_when_the_node_says_so(pki, tmp_path):
    node = InProcessCoordinator(node_config(listeners=(Listener("SSL", "127.0.0.1", 0),),
                                            ssl_certfile=pki.server_cert, ssl_keyfile=pki.server_key,
                                            ssl_cafile=pki.ca, ssl_client_auth="required")).start()
    try:
        without = tmp_path / "no-cert.properties"
        without.write_text(f"security.protocol=SSL\nssl.truststore.location={pki.ca}\n")
        result = cli(["--bootstrap", address(node, "SSL"), "--command-config", str(without), "group", "list"])
        assert result.exit_code == 1 and len(result.stderr.strip().splitlines()) == 1, result.output
        with_cert = tmp_path / "cert.properties"
        with_cert.write_text(f"security.protocol=SSL\nssl.ca.location={pki.ca}\n"
                             f"ssl.certificate.location={pki.client_cert}\nssl.key.location={pki.client_key}\n")
        result = cli(["--bootstrap", address(node, "SSL"), "--command-config", str(with_cert), "group", "list"])
        assert result.exit_code == 0, result.output
    finally:
        node.stop()


def test_a_plaintext_client_at_the_tls_listener_fails_and_the_node_keeps_serving(secured, pki):
    with pytest.raises(kafka.errors.KafkaError):
        kafka.KafkaAdminClient(bootstrap_servers=address(secured, "SASL_SSL"), request_timeout_ms=3000,
                               api_version_auto_timeout_ms=3000)
    result = cli(["--bootstrap", address(secured, "SSL"), "group", "list"])
    assert result.exit_code == 1, result.output
    admin = kafka.KafkaAdminClient(bootstrap_servers=address(secured, "PLAINTEXT"))
    try:
        assert admin.describe_cluster()["brokers"]
    finally:
        admin.close()


def test_each_listener_advertises_its_own_addresses(secured, pki):
    admin = kafka.KafkaAdminClient(bootstrap_servers=address(secured, "SASL_PLAINTEXT"),
                                   security_protocol="SASL_PLAINTEXT", sasl_mechanism="SCRAM-SHA-512",
                                   sasl_plain_username="alice", sasl_plain_password=PASSWORD)
    try:
        brokers = admin.describe_cluster()["brokers"]
    finally:
        admin.close()
    assert [(b["host"], b["port"]) for b in brokers] == [("127.0.0.1", secured.server.port_of("SASL_PLAINTEXT"))]


def frame(api_key: int, version: int, body: bytes = b"", correlation_id: int = 1) -> bytes:
    header = struct.pack(">hhih", api_key, version, correlation_id, 4) + b"test"
    return struct.pack(">i", len(header) + len(body)) + header + body


def closed_after(sock: socket.socket, data: bytes) -> bool:
    """Send `data`; True once the node closes the connection (within 5 s)."""
    sock.settimeout(5)
    sock.sendall(data)
    try:
        while sock.recv(65536):
            pass
    except (ConnectionResetError, socket.timeout):
        return False
    return True


def test_an_unauthenticated_connection_may_not_send_other_requests(secured):
    metadata_v1 = frame(3, 1, struct.pack(">i", -1))
    with socket.create_connection(("127.0.0.1", secured.server.port_of("SASL_PLAINTEXT"))) as sock:
        assert closed_after(sock, metadata_v1)


def test_an_unauthenticated_connection_may_not_send_a_large_frame(secured):
    with socket.create_connection(("127.0.0.1", secured.server.port_of("SASL_PLAINTEXT"))) as sock:
        assert closed_after(sock, struct.pack(">i", 1024 * 1024) + b"\0" * 1024)


def test_an_unauthenticated_connection_may_not_send_many_requests(secured):
    api_versions_v0 = frame(18, 0)
    with socket.create_connection(("127.0.0.1", secured.server.port_of("SASL_PLAINTEXT"))) as sock:
        assert closed_after(sock, api_versions_v0 * 40)


def test_members_simulate_runs_its_members_over_sasl_ssl(secured, pki, tmp_path):
    config = librdkafka_config(tmp_path / "simulate.conf", pki)
    result = cli(["members", "simulate", "--group", "rehearsal", "--count", "3", "--topic", TOPIC, "--duration", "3",
                  "--output", "json"],
                 GROUPCTL_BOOTSTRAP=address(secured, "SASL_SSL"), GROUPCTL_COMMAND_CONFIG=str(config))
    assert result.exit_code == 0, result.output
    assert '"time_to_stable_s"' in result.stdout


def test_no_password_reaches_the_node_log_even_at_debug_level(pki, tmp_path):
    import re
    import subprocess

    from tests.e2e.test_cli_e2e import installed_groupctl
    from tests.support.coordinator import CoordinatorProcess

    log = tmp_path / "node.log"
    node = CoordinatorProcess(
        "--listener", "PLAINTEXT://127.0.0.1:0", "--listener", "SASL_SSL://127.0.0.1:0", "--topic", f"{TOPIC}:1",
        "--ssl-certfile", str(pki.server_cert), "--ssl-keyfile", str(pki.server_key), "--log-level", "debug",
        log_path=log).start()
    try:
        added = subprocess.run([installed_groupctl(), "--bootstrap", node.bootstrap, "user", "add", "carol",
                                "--mechanism", "SCRAM-SHA-256", "--password-stdin"],
                               input="carol-very-secret\n", capture_output=True, text=True, timeout=30)
        assert added.returncode == 0, added.stderr
        sasl_port = re.search(r"listening for SASL_SSL on \S+ \(advertised 127\.0\.0\.1:(\d+)\)", log.read_text()).group(1)
        for password in ("carol-very-secret", "carol-wrong-guess"):
            config = tmp_path / f"{password}.properties"
            config.write_text(f"security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.username=carol\n"
                              f"sasl.password={password}\nssl.ca.location={pki.ca}\n")
            listed = subprocess.run([installed_groupctl(), "--bootstrap", f"127.0.0.1:{sasl_port}",
                                     "--command-config", str(config), "group", "list"],
                                    capture_output=True, text=True, timeout=30)
            assert listed.returncode == (0 if password == "carol-very-secret" else 1), listed.stderr
            assert password not in listed.stderr + listed.stdout
    finally:
        assert node.terminate() == 0
    text = log.read_text()
    assert "failed authentication" in text
    assert "carol-very-secret" not in text and "carol-wrong-guess" not in text
    assert "Traceback" not in text


@pytest.fixture(scope="module")
def authorizing(pki):
    """A SASL_SSL + SSL node with --authorizer: admin is a super user, bob has no ACLs, and the
    TLS client certificate's subject may describe group 'audited' only."""
    config = node_config(
        listeners=(Listener("SASL_SSL", "127.0.0.1", 0), Listener("SSL", "127.0.0.1", 0)),
        ssl_certfile=pki.server_cert, ssl_keyfile=pki.server_key, ssl_cafile=pki.ca, ssl_client_auth="required",
        authorizer=True, super_users=("User:admin",), topics=((TOPIC, 1),))
    node = InProcessCoordinator(config).start()
    add_user(node, "admin", "admin-secret")
    add_user(node, "bob", "bob-secret")
    try:
        yield node
    finally:
        node.stop()


def sasl_config(path: Path, pki, user: str, password: str) -> Path:
    path.write_text(f"security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-256\nsasl.username={user}\n"
                    f"sasl.password={password}\nssl.ca.location={pki.ca}\n")
    return path


def test_a_user_without_acls_is_refused_in_one_line_naming_the_group_while_others_are_served(authorizing, pki, tmp_path):
    bob = sasl_config(tmp_path / "bob.properties", pki, "bob", "bob-secret")
    admin = sasl_config(tmp_path / "admin.properties", pki, "admin", "admin-secret")
    bootstrap = address(authorizing, "SASL_SSL")
    result = cli(["--bootstrap", bootstrap, "--command-config", str(bob), "offsets", "commit", "payments-app",
                  f"{TOPIC}:0=3"])
    assert_one_line_error(result, 1, "payments-app", "AUTHORIZATION_FAILED")
    result = cli(["--bootstrap", bootstrap, "--command-config", str(admin), "offsets", "commit", "payments-app",
                  f"{TOPIC}:0=3"])
    assert result.exit_code == 0, result.output
    listed = cli(["--bootstrap", bootstrap, "--command-config", str(bob), "--output", "json", "group", "list"])
    assert listed.exit_code == 0 and "payments-app" not in listed.stdout, listed.output


def test_the_tls_client_certificate_subject_is_the_principal_acls_name(authorizing, pki, tmp_path):
    admin = sasl_config(tmp_path / "admin.properties", pki, "admin", "admin-secret")
    result = cli(["--bootstrap", address(authorizing, "SASL_SSL"), "--command-config", str(admin), "acl", "add",
                  "--allow-principal", "User:CN=alice,OU=ops,O=groupctl", "--operation", "Read", "--operation",
                  "Describe", "--group", "audited", "--topic", TOPIC])
    assert result.exit_code == 0, result.output
    mtls = tmp_path / "mtls.properties"
    mtls.write_text(f"security.protocol=SSL\nssl.ca.location={pki.ca}\n"
                    f"ssl.certificate.location={pki.client_cert}\nssl.key.location={pki.client_key}\n")
    bootstrap = address(authorizing, "SSL")
    result = cli(["--bootstrap", bootstrap, "--command-config", str(mtls), "offsets", "commit", "audited", f"{TOPIC}:0=1"])
    assert result.exit_code == 0, result.output
    result = cli(["--bootstrap", bootstrap, "--command-config", str(mtls), "offsets", "commit", "other", f"{TOPIC}:0=1"])
    assert_one_line_error(result, 1, "other", "AUTHORIZATION_FAILED")
