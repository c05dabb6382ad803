"""SCRAM credentials: derivation (RFC 5802/7677, scramp, Kafka's rules), PLAIN password checks,
and Kafka's stored format at /config/users/<user>."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest
import scramp

from groupctl.layout.codec import LayoutError
from groupctl.layout.credentials import (
    MissingCredential,
    ScramCredential,
    altered,
    decode_credentials,
    encode_credentials,
    other_config,
)
from groupctl.layout.paths import decode_name, user_path
from groupctl.security import scram


def b64(text: str) -> bytes:
    return base64.b64decode(text)


# -- derivation -------------------------------------------------------------------------------


def test_a_credential_made_from_pencil_verifies_the_rfc_7677_exchange():
    # RFC 7677 section 3: user "user", password "pencil".
    credential = scram.make_credential("SCRAM-SHA-256", "pencil", iterations=4096,
                                       salt=b64("W22ZaJ0SNY7soEsUEjb6gQ=="))
    client_first_bare = "n=user,r=rOprNGfwEbeRWgbNEkqO"
    server_first = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    client_final_bare = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
    auth_message = f"{client_first_bare},{server_first},{client_final_bare}".encode()
    proof = b64("dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")

    client_signature = hmac.digest(credential.stored_key, auth_message, "sha256")
    client_key = bytes(a ^ b for a, b in zip(proof, client_signature))
    assert hashlib.sha256(client_key).digest() == credential.stored_key
    assert hmac.digest(credential.server_key, auth_message, "sha256") == \
        b64("6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")


@pytest.mark.parametrize("mechanism", scram.MECHANISMS)
@pytest.mark.parametrize("iterations", [4096, 8192])
def test_credentials_equal_what_scramp_derives(mechanism, iterations):
    salt = b"0123456789abcdef0123"
    ours = scram.make_credential(mechanism, "s3cret-ü", iterations=iterations, salt=salt)
    _, stored_key, server_key, _ = scramp.ScramMechanism(mechanism).make_auth_info("s3cret-ü", iterations, salt)
    assert (ours.stored_key, ours.server_key) == (stored_key, server_key)


def test_the_server_derives_from_a_salted_password_what_the_client_derives_from_the_password():
    salt = scram.new_salt()
    salted = scram.salted_password("SCRAM-SHA-512", "pw", salt, 4096)
    assert scram.credential_from_salted_password("SCRAM-SHA-512", salt, salted, 4096) == \
        scram.make_credential("SCRAM-SHA-512", "pw", salt=salt)


def test_each_credential_gets_its_own_random_salt():
    first, second = (scram.make_credential("SCRAM-SHA-256", "pw") for _ in range(2))
    assert first.salt != second.salt and first.stored_key != second.stored_key
    assert first.iterations == 4096


@pytest.mark.parametrize("iterations, fits", [(4095, False), (4096, True), (16384, True), (16385, False)])
def test_iterations_must_lie_within_kafkas_bounds(iterations, fits):
    if fits:
        scram.make_credential("SCRAM-SHA-256", "pw", iterations=iterations, salt=b"s" * 16)
    else:
        with pytest.raises(scram.ScramError, match="4096..16384"):
            scram.make_credential("SCRAM-SHA-256", "pw", iterations=iterations)


def test_an_unknown_mechanism_is_refused():
    with pytest.raises(scram.ScramError, match="SCRAM-SHA-1"):
        scram.make_credential("SCRAM-SHA-1", "pw")


# -- PLAIN against SCRAM ----------------------------------------------------------------------


@pytest.mark.parametrize("mechanism", scram.MECHANISMS)
def test_password_matches_only_the_password_the_credential_was_made_from(mechanism):
    credential = scram.make_credential(mechanism, "correct horse")
    assert scram.password_matches(credential, "correct horse")
    assert not scram.password_matches(credential, "correct horse ")
    assert not scram.password_matches(credential, "")


def test_a_stored_iteration_count_beyond_the_maximum_never_matches_rather_than_stall():
    credential = scram.make_credential("SCRAM-SHA-256", "pw", salt=b"s" * 16)
    forged = ScramCredential("SCRAM-SHA-256", credential.salt, credential.stored_key, credential.server_key,
                             iterations=10**9)
    assert not scram.password_matches(forged, "pw")


def test_a_credential_never_shows_its_keys():
    credential = scram.make_credential("SCRAM-SHA-256", "pw", salt=b"the-salt-bytes")
    shown = repr(credential) + str(credential)
    assert "the-salt" not in shown and base64.b64encode(credential.stored_key).decode() not in shown
    assert "SCRAM-SHA-256" in shown and "4096" in shown


# -- the stored format ------------------------------------------------------------------------

SALT, STORED, SERVER = b"salt-bytes", b"\x01" * 32, b"\x02" * 32
KAFKA_TEXT = (b'{"version":1,"config":{"SCRAM-SHA-256":"salt=c2FsdC1ieXRlcw==,'
              b'stored_key=AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=,'
              b'server_key=AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=,iterations=4096"}}')


def test_credentials_are_stored_in_kafkas_exact_zookeeper_format():
    credential = ScramCredential("SCRAM-SHA-256", SALT, STORED, SERVER, 4096)
    assert encode_credentials({"SCRAM-SHA-256": credential}) == KAFKA_TEXT
    assert decode_credentials("alice", KAFKA_TEXT) == {"SCRAM-SHA-256": credential}


def test_a_document_kafka_wrote_with_both_mechanisms_and_a_quota_reads_back_and_keeps_the_quota():
    sha512 = ScramCredential("SCRAM-SHA-512", b"s2", b"\x03" * 64, b"\x04" * 64, 8192)
    document = json.loads(KAFKA_TEXT)
    document["config"]["SCRAM-SHA-512"] = sha512.to_text()
    document["config"]["producer_byte_rate"] = "1024"
    data = json.dumps(document, indent=1).encode()  # any JSON spelling reads
    creds = decode_credentials("alice", data)
    assert list(creds) == ["SCRAM-SHA-256", "SCRAM-SHA-512"] and creds["SCRAM-SHA-512"] == sha512
    rewritten = altered("alice", data, delete=["SCRAM-SHA-256"])
    assert other_config("alice", rewritten) == {"producer_byte_rate": "1024"}
    assert decode_credentials("alice", rewritten) == {"SCRAM-SHA-512": sha512}


def test_removing_the_last_credential_leaves_no_document():
    assert altered("alice", KAFKA_TEXT, delete=["SCRAM-SHA-256"]) is None


def test_removing_a_credential_the_user_lacks_is_missing_credential():
    with pytest.raises(MissingCredential, match="SCRAM-SHA-512"):
        altered("alice", KAFKA_TEXT, delete=["SCRAM-SHA-512"])
    with pytest.raises(MissingCredential):
        altered("bob", None, delete=["SCRAM-SHA-256"])


def test_an_upsert_replaces_the_mechanisms_credential_and_keeps_the_others():
    new = scram.make_credential("SCRAM-SHA-256", "new password")
    sha512 = scram.make_credential("SCRAM-SHA-512", "pw")
    data = altered("alice", altered("alice", None, upsert={"SCRAM-SHA-512": sha512}),
                   upsert={"SCRAM-SHA-256": new})
    assert decode_credentials("alice", data) == {"SCRAM-SHA-256": new, "SCRAM-SHA-512": sha512}


def test_empty_data_reads_as_no_credentials():
    assert decode_credentials("alice", b"") == {} and decode_credentials("alice", None) == {}


@pytest.mark.parametrize("value, problem", [
    ("salt=c2FsdA==,stored_key=AQ==,server_key=Ag==", "exactly the keys"),
    ("salt=c2FsdA==,stored_key=AQ==,server_key=Ag==,iterations=4096,a=test", "exactly the keys"),
    ("abc", "is not"),
    ("salt=c2FsdA==,stored_key=AQ==,server_key=Ag==,iterations=many", "iterations"),
    ("salt=not base64!,stored_key=AQ==,server_key=Ag==,iterations=4096", "base64"),
])
def test_a_malformed_credential_is_a_layout_error_naming_the_path(value, problem):
    data = json.dumps({"version": 1, "config": {"SCRAM-SHA-256": value}}).encode()
    with pytest.raises(LayoutError, match=problem) as raised:
        decode_credentials("alice", data)
    assert raised.value.path == "/config/users/alice"


def test_a_credential_filed_under_another_mechanism_is_refused():
    credential = scram.make_credential("SCRAM-SHA-512", "pw")
    with pytest.raises(ValueError):
        encode_credentials({"SCRAM-SHA-256": credential})


@pytest.mark.parametrize("name, component", [
    ("alice", "alice"),
    ("CN=svc,O=acme", "CN%3Dsvc%2CO%3Dacme"),
    ("a~b c*", "a%7Eb%20c%2A"),  # Kafka's Sanitizer.sanitize: '~' too, unlike group names
    ("", "%"),
    ("..", "%2E%2E"),
])
def test_user_names_are_encoded_as_kafkas_sanitizer_does(name, component):
    assert user_path(name) == f"/config/users/{component}"
    assert decode_name(component) == name
