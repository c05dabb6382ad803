"""ZooKeeper authentication and ACLs against a real ZooKeeper: a node given `--zk-auth`, plain
kazoo clients with and without its credentials, and the `groupctl` command as a subprocess.

What is pinned (docs/security.md, "ZooKeeper authentication and ACLs"):
- Every znode a node with credentials creates, its chroot included, carries one ACL entry: all
  rights for its digest identity. An unauthenticated client can neither read nor change a group
  document, nor read credentials under /config/users: ZooKeeper answers NoAuth.
- With --zk-world-readable anyone may read group documents, never write them, and credentials
  stay unreadable.
- On a tree from before authentication, the znodes already there keep their open ACLs (and the
  node warns once); what the node creates from then on is protected.
- What the tools create (a rebalance request) carries the same digest ACL.
- The CLI with the right credentials (option, environment or file) reads a protected tree; without
  them, or with wrong ones, it fails in one line naming the path, exit 1; a malformed value exits
  2 without echoing it. A node with wrong credentials fails to start in one line.
- The password appears in no output and in no log line, even at --log-level debug.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator, Optional

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError
from kazoo.security import ACL, ANYONE_ID_UNSAFE, OPEN_ACL_UNSAFE, Permissions, make_digest_acl

from groupctl.client.zookeeper import ZkSession
from groupctl.layout.paths import REBALANCE_REQUESTS, USERS, group_path, user_path
from groupctl.security.acls import Operation, ResourceType
from groupctl.store.zk_auth import ZkAuth
from groupctl.store.zookeeper import ZooKeeperStore, split_connect
from tests.support.coordinator import CoordinatorProcess, InProcessCoordinator, node_config
from tests.support.polling import wait_until

pytestmark = pytest.mark.zookeeper

USER, PASSWORD = "groupctl", "zk-pw-8c1f0b"
AUTH = f"digest:{USER}:{PASSWORD}"
OWNER = make_digest_acl(USER, PASSWORD, all=True)
WORLD_READ = ACL(Permissions.READ, ANYONE_ID_UNSAFE)
GROUP, TOPIC = "orders", "events"
CLI_TIMEOUT_S = 60.0


@contextlib.contextmanager
def kazoo(zookeeper, chroot: str, auth: Optional[str] = None) -> Iterator[KazooClient]:
    """A plain kazoo client inside `chroot`, with `auth` ("USER:PASSWORD") or none."""
    client = KazooClient(hosts=zookeeper.connect, auth_data=[("digest", auth)] if auth else None)
    client.start(timeout=10)
    client.chroot = chroot
    try:
        yield client
    finally:
        client.stop()
        client.close()


def walk(client: KazooClient, path: str = "/") -> Iterator[str]:
    yield path
    for child in client.get_children(path):
        yield from walk(client, f"{path.rstrip('/')}/{child}")


def groupctl(*args: str, env: Optional[dict] = None) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("GROUPCTL_")}
    return subprocess.run([sys.executable, "-m", "groupctl", *args], capture_output=True, text=True,
                          timeout=CLI_TIMEOUT_S, env={**clean, **(env or {})})


def assert_one_line_failure(result: subprocess.CompletedProcess, status: int, *fragments: str) -> None:
    assert result.returncode == status, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("groupctl: error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    assert PASSWORD not in result.stdout + result.stderr


def store_create(connect: str, path: str, *, world_readable: bool = False) -> None:
    """Create `path` through groupctl's own store with the node's credentials, as the node does."""

    async def scenario() -> None:
        store = ZooKeeperStore(connect, auth=ZkAuth(USER, PASSWORD), world_readable=world_readable)
        await store.start()
        try:
            await store.create(path, b'{"secret": "salted"}', make_parents=True)
        finally:
            await store.close()

    asyncio.run(asyncio.wait_for(scenario(), 30))


def node_with_group(zk_connect: str, data_dir: Path, group: str = GROUP, **options) -> InProcessCoordinator:
    """A node (`options`: NodeConfig's) with a topic, and `group`'s document with offsets committed."""
    node = InProcessCoordinator(node_config(zk=zk_connect, data_dir=data_dir, topics=((TOPIC, 2),), **options)).start()
    committed = groupctl("--bootstrap", node.bootstrap, "offsets", "commit", group, f"{TOPIC}:0=5")
    if committed.returncode != 0:
        node.stop()
        pytest.fail(f"offsets commit failed: {committed.stderr}")
    return node


def secured_node(zk_connect: str, tmp_path: Path, **options) -> InProcessCoordinator:
    """A node with the credentials, a topic, and a group document with offsets committed."""
    return node_with_group(zk_connect, tmp_path / "data", zk_auth=AUTH, **options)


@pytest.fixture
def secured(zk_connect, tmp_path):
    node = secured_node(zk_connect, tmp_path)
    try:
        store_create(zk_connect, user_path("alice"))
        yield node
    finally:
        node.stop()


@pytest.fixture
def chroot(zk_connect) -> str:
    return split_connect(zk_connect)[1]


def test_every_znode_a_node_creates_with_zk_auth_carries_only_its_digest_acl(zookeeper, secured, chroot):
    with kazoo(zookeeper, "", f"{USER}:{PASSWORD}") as client:
        acls = {path: client.get_acls(path)[0] for path in walk(client, chroot)}
    relative = {path[len(chroot):] or "/" for path in acls}
    assert {"/", group_path(GROUP), f"{group_path(GROUP)}/offsets/{TOPIC}", "/brokers/ids/0",
            f"/brokers/topics/{TOPIC}", "/coordinators/config", REBALANCE_REQUESTS, user_path("alice")} <= relative
    assert {path: acl for path, acl in acls.items() if acl != [OWNER]} == {}


def test_an_unauthenticated_client_can_neither_change_a_group_document_nor_read_credentials(
        zookeeper, secured, chroot):
    with kazoo(zookeeper, chroot) as anonymous:
        for attempt in (lambda: anonymous.set(group_path(GROUP), b"{}"),
                        lambda: anonymous.delete(group_path(GROUP), recursive=True),
                        lambda: anonymous.create(f"{group_path(GROUP)}/offsets/other", b"{}"),
                        lambda: anonymous.get(group_path(GROUP)),
                        lambda: anonymous.get(user_path("alice")),
                        lambda: anonymous.get_children(USERS)):
            with pytest.raises(NoAuthError):
                attempt()


def test_world_readable_lets_anyone_read_group_documents_but_not_write_them_nor_read_credentials(
        zookeeper, zk_connect, tmp_path, chroot):
    node = secured_node(zk_connect, tmp_path, zk_world_readable=True)
    try:
        store_create(zk_connect, user_path("alice"), world_readable=True)
        with kazoo(zookeeper, chroot) as anonymous:
            document = json.loads(anonymous.get(group_path(GROUP))[0])
            assert document["group"] == GROUP
            with pytest.raises(NoAuthError):
                anonymous.set(group_path(GROUP), b"{}")
            with pytest.raises(NoAuthError):
                anonymous.create(f"{group_path(GROUP)}/offsets/other", b"{}")
            with pytest.raises(NoAuthError):
                anonymous.get(user_path("alice"))
        with kazoo(zookeeper, chroot, f"{USER}:{PASSWORD}") as client:
            assert client.get_acls(group_path(GROUP))[0] == [OWNER, WORLD_READ]
            assert client.get_acls(user_path("alice"))[0] == [OWNER]
    finally:
        node.stop()


def test_a_node_given_credentials_on_an_older_open_tree_leaves_its_znodes_open_and_says_so(
        zookeeper, zk_connect, tmp_path, chroot, caplog):
    node_with_group(zk_connect, tmp_path / "open").stop()
    with caplog.at_level(logging.WARNING, logger="groupctl.store.zookeeper"):
        node = node_with_group(zk_connect, tmp_path / "data", "payments", zk_auth=AUTH)
    try:
        assert f"{chroot}/groups and the znodes under it are writable by anyone" in caplog.text
        assert "docs/security.md" in caplog.text
        with kazoo(zookeeper, chroot, f"{USER}:{PASSWORD}") as client:
            assert client.get_acls(group_path(GROUP))[0] == OPEN_ACL_UNSAFE
            assert client.get_acls(group_path("payments"))[0] == [OWNER]
    finally:
        node.stop()


def test_what_the_tools_create_carries_the_digest_acl(zookeeper, secured, zk_connect, chroot):
    with ZkSession(zk_connect, auth=AUTH) as session:
        assert session.create(f"{REBALANCE_REQUESTS}/tool-made/request", b"{}")
    with kazoo(zookeeper, chroot, f"{USER}:{PASSWORD}") as client:
        assert client.get_acls(f"{REBALANCE_REQUESTS}/tool-made")[0] == [OWNER]
        assert client.get_acls(f"{REBALANCE_REQUESTS}/tool-made/request")[0] == [OWNER]


def test_the_cli_reads_a_protected_tree_with_the_credentials_from_option_environment_or_file(
        secured, zk_connect, tmp_path):
    secret_file = tmp_path / "zk-auth"
    secret_file.write_text(AUTH + "\n")
    secret_file.chmod(0o600)
    for args, env in ((["--zk-auth", AUTH], None), ([], {"GROUPCTL_ZK_AUTH": AUTH}),
                      (["--zk-auth", f"@{secret_file}"], None), (["--zk-auth", f"file:{secret_file}"], None)):
        shown = groupctl("--zk", zk_connect, *args, "--output", "json", "zk", "show", GROUP, env=env)
        assert shown.returncode == 0, shown.stderr
        assert json.loads(shown.stdout)["offsets"][TOPIC]["0"]["offset"] == 5
    got = groupctl("--zk", zk_connect, "zk", "get", group_path(GROUP), "--zk-auth", AUTH)
    assert got.returncode == 0, got.stderr
    assert f'"{GROUP}"' in got.stdout and PASSWORD not in got.stdout + got.stderr


def test_the_cli_without_or_with_wrong_credentials_fails_in_one_line_naming_the_path(secured, zk_connect):
    assert_one_line_failure(groupctl("--zk", zk_connect, "zk", "show", GROUP), 1,
                            f"{group_path(GROUP)} is not readable without ZooKeeper credentials")
    assert_one_line_failure(groupctl("--zk", zk_connect, "zk", "get", group_path(GROUP)), 1,
                            f"{group_path(GROUP)} is not readable without ZooKeeper credentials")
    assert_one_line_failure(groupctl("--zk", zk_connect, "--zk-auth", f"digest:{USER}:wrong", "zk", "show", GROUP),
                            1, f"{group_path(GROUP)} is not readable with the ZooKeeper credentials given")
    # A group not created yet could never be read once it is: refused at once, not watched in vain.
    assert_one_line_failure(groupctl("--zk", zk_connect, "zk", "watch", "later", "--timeout", "30"), 1,
                            "/groups is not readable without ZooKeeper credentials")
    assert_one_line_failure(groupctl("--zk", zk_connect, "coordinator", "status"), 1,
                            "is not readable without ZooKeeper credentials")


def test_a_malformed_zk_auth_exits_2_in_one_line_without_echoing_it(zk_connect):
    for value in (f"{USER}:{PASSWORD}", f"digest:{PASSWORD}", f"sasl:{USER}:{PASSWORD}"):
        assert_one_line_failure(groupctl("--zk", zk_connect, "--zk-auth", value, "zk", "show", GROUP), 2,
                                "--zk-auth", "digest:USER:PASSWORD")


def test_a_node_with_wrong_credentials_fails_to_start_in_one_line(secured, zk_connect, tmp_path):
    result = groupctl("coordinator", "run", "--port", "0", "--node-id", "1", "--data-dir", str(tmp_path / "other"),
                      "--zk", zk_connect, "--zk-auth", f"digest:{USER}:wrong", "--log-level", "error")
    assert_one_line_failure(result, 1, "is not writable with the ZooKeeper credentials given")


def test_the_password_is_in_no_log_line_of_a_node_at_debug_level(zk_connect, tmp_path):
    secret_file = tmp_path / "zk-auth"
    secret_file.write_text(AUTH + "\n")
    log_path = tmp_path / "node.log"
    node = CoordinatorProcess("--zk", zk_connect, "--zk-auth", f"@{secret_file}", "--data-dir", str(tmp_path / "data"),
                              "--log-level", "debug", log_path=log_path).start()
    try:
        assert node.terminate() == 0
    finally:
        node.kill()
    log = log_path.read_text()
    assert "Auth(scheme='digest', auth=<hidden>)" in log  # kazoo's debug line for it, without the secret
    assert PASSWORD not in log


def test_an_acl_document_the_node_may_not_read_is_an_error_in_its_log_until_it_may(
        zookeeper, zk_connect, chroot, tmp_path, caplog):
    # A node without credentials on an open tree, and a tool that wrote an ACL document with them.
    node = InProcessCoordinator(node_config(zk=zk_connect, data_dir=tmp_path / "data", authorizer=True)).start()
    try:
        document = json.dumps({"version": 1, "acls": [{"principal": "User:alice", "permissionType": "Allow",
                                                       "operation": "Read", "host": "*"}]}).encode()
        with kazoo(zookeeper, chroot, auth=f"{USER}:{PASSWORD}") as tool:
            with caplog.at_level(logging.ERROR, logger="groupctl.acls"):
                tool.create("/kafka-acl/Topic/orders", document, acl=[OWNER])
                wait_until(lambda: "cannot read the ACLs at /kafka-acl/Topic/orders" in caplog.text, timeout=20)
                assert not node.node.authorizer.rules.authorize("User:alice", "1.2.3.4", Operation.READ,
                                                                ResourceType.TOPIC, "orders")
                tool.set_acls("/kafka-acl/Topic/orders", [OWNER, WORLD_READ])
                wait_until(lambda: node.node.authorizer.rules.authorize(
                    "User:alice", "1.2.3.4", Operation.READ, ResourceType.TOPIC, "orders"), timeout=20)
            assert caplog.text.count("cannot read the ACLs at") == 1  # once, though it kept trying
            tool.set("/kafka-acl/Topic/orders", json.dumps({"version": 1, "acls": []}).encode())
            wait_until(lambda: not node.node.authorizer.rules.authorize(  # and the document is watched
                "User:alice", "1.2.3.4", Operation.READ, ResourceType.TOPIC, "orders"), timeout=20)
    finally:
        node.stop()
