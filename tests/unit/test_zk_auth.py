"""`--zk-auth` parsing (groupctl.store.zk_auth), the ACLs made from it, and the log filter that
keeps the credential out of kazoo's debug log. No ZooKeeper here: tests/e2e/test_zk_auth_e2e.py
runs them against a real one."""

from __future__ import annotations

import base64
import hashlib
import logging

import pytest
from kazoo.protocol.serialization import Auth
from kazoo.security import ACL, ANYONE_ID_UNSAFE, Id, Permissions

from groupctl.client.zookeeper import ZkSession
from groupctl.errors import BadInput
from groupctl.store.connect import open_store
from groupctl.store.base import StoreError
from groupctl.store.zk_auth import BadZkAuth, ZkAuth, not_permitted, parse_zk_auth
from groupctl.store.zookeeper import HideCredentials, owner_acl, znode_acl

SECRET = "s3cr:et"


def test_digest_user_password_parses_with_colons_kept_in_the_password():
    auth = parse_zk_auth(f"digest:alice:{SECRET}")
    assert (auth.scheme, auth.user, auth.password) == ("digest", "alice", SECRET)
    assert auth.credential == f"alice:{SECRET}"


@pytest.mark.parametrize("prefix", ["@", "file:"])
def test_a_file_s_first_line_holds_the_credentials(tmp_path, prefix):
    path = tmp_path / "zk-auth"
    path.write_text(f"  digest:alice:{SECRET}  \nignored second line\n")
    assert parse_zk_auth(f"{prefix}{path}") == ZkAuth("alice", SECRET)


def test_a_file_path_expands_the_home_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "zk-auth").write_text(f"digest:alice:{SECRET}\n")
    assert parse_zk_auth("@~/zk-auth").user == "alice"


@pytest.mark.parametrize("value", [
    "", "digest", "digest:", "digest:alice", "digest:alice:", "digest::pw", "alice:pw", f"DIGEST:alice:{SECRET}",
    f"{SECRET}", "@", "file:",
])
def test_malformed_values_are_refused_without_echoing_them(value):
    with pytest.raises(BadZkAuth) as refused:
        parse_zk_auth(value)
    message = str(refused.value)
    assert "digest:USER:PASSWORD" in message and "\n" not in message
    assert SECRET not in message and "alice" not in message


def test_another_zookeeper_scheme_is_named_as_unsupported():
    with pytest.raises(BadZkAuth, match="the sasl scheme is not supported, only digest"):
        parse_zk_auth("sasl:alice:pw")


def test_a_missing_file_is_named_with_the_reason(tmp_path):
    with pytest.raises(BadZkAuth, match=r"--zk-auth file .*/absent: cannot read it: No such file"):
        parse_zk_auth(f"@{tmp_path / 'absent'}")


def test_a_file_whose_first_line_is_not_credentials_is_refused_without_showing_it(tmp_path):
    path = tmp_path / "zk-auth"
    path.write_text(f"{SECRET}\ndigest:alice:{SECRET}\n")
    with pytest.raises(BadZkAuth) as refused:
        parse_zk_auth(f"file:{path}")
    assert str(path) in str(refused.value) and SECRET not in str(refused.value)


def test_the_password_is_not_in_the_repr():
    assert SECRET not in repr(parse_zk_auth(f"digest:alice:{SECRET}"))


def test_the_tools_report_bad_credentials_as_bad_input_before_connecting():
    with pytest.raises(BadInput, match="bad --zk-auth value"):
        ZkSession("127.0.0.1:1", auth="digest:alice")


def test_no_credentials_or_an_empty_value_means_an_unauthenticated_session():
    assert ZkSession("127.0.0.1:1", auth="").auth is None
    assert ZkSession("127.0.0.1:1").auth is None


def test_the_node_reports_bad_credentials_as_a_store_error():
    with pytest.raises(StoreError, match="bad --zk-auth value"):
        open_store(zk="127.0.0.1:1", zk_auth="digest:alice")


def test_znodes_get_the_owner_s_digest_acl_and_nothing_for_anyone_else():
    owner = owner_acl(ZkAuth("alice", "pw"))
    digest = base64.b64encode(hashlib.sha1(b"alice:pw").digest()).decode()  # ZooKeeper's digest id
    assert owner == ACL(Permissions.ALL, Id("digest", f"alice:{digest}"))
    assert znode_acl(owner, "/groups/g") == [owner]


def test_world_readable_adds_read_for_anyone_except_on_credentials():
    owner = owner_acl(ZkAuth("alice", "pw"))
    readable = [owner, ACL(Permissions.READ, ANYONE_ID_UNSAFE)]
    assert znode_acl(owner, "/groups/g", world_readable=True) == readable
    assert znode_acl(owner, "/config", world_readable=True) == readable
    assert znode_acl(owner, "/config/usersx", world_readable=True) == readable
    assert znode_acl(owner, "/config/users", world_readable=True) == [owner]
    assert znode_acl(owner, "/config/users/bob", world_readable=True) == [owner]


def test_refusals_name_the_path_the_access_and_the_credentials():
    assert not_permitted("/groups/g", write=True, auth=ZkAuth("alice", SECRET)) == (
        "/groups/g is not writable with the ZooKeeper credentials given (--zk-auth, user 'alice'): "
        "ZooKeeper answered NoAuth")
    assert not_permitted("/groups/g", write=False, auth=None) == (
        "/groups/g is not readable without ZooKeeper credentials (give --zk-auth or GROUPCTL_ZK_AUTH): "
        "ZooKeeper answered NoAuth")


def test_kazoo_s_debug_line_for_the_auth_request_hides_the_credential():
    record = logging.LogRecord("kazoo.client", logging.DEBUG, __file__, 1, "Sending request(xid=%s): %s",
                               (-4, Auth(0, "digest", f"alice:{SECRET}")), None)
    assert HideCredentials().filter(record)
    assert SECRET not in record.getMessage() and "digest" in record.getMessage()
