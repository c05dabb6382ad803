"""The client side of SCRAM, as Kafka's client runs it, against scramp's server: a right password
completes and verifies the server, a wrong one and a forged server fail, a server asking fewer
than 4096 iterations is refused, and a non-ASCII password is used as its UTF-8 bytes (no
SASLprep), exactly as `user add` stored it."""

from __future__ import annotations

import base64

import pytest
from scramp import ScramException, ScramMechanism

from groupctl.security.scram import ScramClientExchange, ScramError, make_credential


def server_for(password: str, mechanism: str = "SCRAM-SHA-256", iterations: int = 4096):
    credential = make_credential(mechanism, password, iterations=iterations)
    return ScramMechanism(mechanism).make_server(
        lambda user: (credential.salt, credential.stored_key, credential.server_key, credential.iterations))


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
@pytest.mark.parametrize("password", ["alice-secret", "ｐａｓｓ\u00a0wörd"])
def test_the_right_password_completes_and_the_server_proves_it_knows_the_credential(mechanism, password):
    server = server_for(password, mechanism)
    client = ScramClientExchange(mechanism, "alice", password)
    server.set_client_first(client.client_first().decode())
    server.set_client_final(client.client_final(server.get_server_first().encode()).decode())
    client.check_server_final(server.get_server_final().encode())


def test_a_wrong_password_is_refused_by_the_server():
    server = server_for("alice-secret")
    client = ScramClientExchange("SCRAM-SHA-256", "alice", "not-it")
    server.set_client_first(client.client_first().decode())
    with pytest.raises(ScramException):
        server.set_client_final(client.client_final(server.get_server_first().encode()).decode())


def test_a_server_that_does_not_know_the_credential_cannot_pretend_to():
    client = ScramClientExchange("SCRAM-SHA-256", "alice", "alice-secret", nonce="abc")
    salt = base64.b64encode(b"salty").decode()
    client.client_final(f"r=abcdef,s={salt},i=4096".encode())
    with pytest.raises(ScramError, match="does not verify"):
        client.check_server_final(b"v=" + base64.b64encode(b"x" * 32))


def test_a_server_asking_fewer_than_4096_iterations_is_refused():
    client = ScramClientExchange("SCRAM-SHA-256", "alice", "alice-secret", nonce="abc")
    salt = base64.b64encode(b"salty").decode()
    with pytest.raises(ScramError, match="fewer than 4096"):
        client.client_final(f"r=abcdef,s={salt},i=1000".encode())


def test_usernames_with_comma_and_equals_are_escaped():
    assert ScramClientExchange("SCRAM-SHA-256", "CN=a,O=b", "pw", nonce="n").client_first() == b"n,,n=CN=3Da=2CO=3Db,r=n"
