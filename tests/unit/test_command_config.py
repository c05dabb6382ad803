"""--command-config: Java client properties and librdkafka's spellings become one ClientSecurity;
anything not understood is refused naming the key; secrets never show in a repr."""

from __future__ import annotations

import pytest

from groupctl.client.security import ClientSecurity, load_security, parse_properties, security_from_properties
from groupctl.errors import BadInput

JAVA = """\
# as kafka-consumer-groups.sh reads it
security.protocol=SASL_SSL
sasl.mechanism = SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\
    username="alice" \\
    password="s3cr=t \\\\"quoted\\\\"";
ssl.truststore.type: PEM
ssl.truststore.location /etc/kafka/ca.pem
! another comment style
"""


def test_java_properties_with_continuations_separators_and_comments_parse_like_java():
    properties = parse_properties(JAVA)
    assert properties["sasl.mechanism"] == "SCRAM-SHA-512"
    assert properties["ssl.truststore.type"] == "PEM"
    assert properties["ssl.truststore.location"] == "/etc/kafka/ca.pem"
    assert properties["sasl.jaas.config"].startswith("org.apache.kafka.common.security.scram.ScramLoginModule required")
    assert len(properties) == 5


def test_a_java_style_file_gives_user_password_mechanism_and_trust_store():
    security = security_from_properties(parse_properties(JAVA))
    assert (security.protocol, security.mechanism, security.username) == ("SASL_SSL", "SCRAM-SHA-512", "alice")
    assert security.password == 's3cr=t "quoted"'
    assert security.ca_file == "/etc/kafka/ca.pem" and security.check_hostname


def test_librdkafka_spellings_name_the_same_settings():
    security = security_from_properties({
        "security.protocol": "sasl_plaintext", "sasl.mechanisms": "PLAIN", "sasl.username": "bob",
        "sasl.password": "pw", "ssl.ca.location": "/ca.pem", "ssl.certificate.location": "/c.pem",
        "ssl.key.location": "/k.pem", "ssl.endpoint.identification.algorithm": "none",
        "enable.ssl.certificate.verification": "false"})
    assert (security.protocol, security.mechanism, security.username, security.password) == (
        "SASL_PLAINTEXT", "PLAIN", "bob", "pw")
    assert (security.ca_file, security.cert_file, security.key_file) == ("/ca.pem", "/c.pem", "/k.pem")
    assert not security.check_hostname and not security.verify


def test_no_properties_means_plaintext():
    assert security_from_properties({}) == ClientSecurity()


@pytest.mark.parametrize("properties, named", [
    ({"bootstrap.servers": "x:1"}, "'bootstrap.servers'"),
    ({"security.protocol": "SASL_SSLL"}, "security.protocol"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "GSSAPI", "sasl.username": "a", "sasl.password": "b"},
     "GSSAPI"),
    ({"security.protocol": "SASL_SSL"}, "needs a user and password"),
    ({"ssl.truststore.type": "JKS", "ssl.truststore.location": "/t.jks"}, "convert the truststore to PEM"),
    ({"ssl.keystore.type": "PKCS12"}, "convert the keystore to PEM"),
    ({"ssl.truststore.password": "changeit"}, "ssl.truststore.password"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
      "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required username="a" password="b";'},
     "does not serve sasl.mechanism=PLAIN"),
    ({"security.protocol": "SASL_SSL",
      "sasl.jaas.config": 'com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true;'},
     "Krb5LoginModule is not supported"),
    ({"ssl.endpoint.identification.algorithm": "ldap"}, "ssl.endpoint.identification.algorithm"),
])
def test_what_groupctl_cannot_honour_is_refused_naming_the_key(properties, named):
    with pytest.raises(BadInput) as refused:
        security_from_properties(properties)
    assert named in str(refused.value)
    assert refused.value.exit_status == 2


def test_environment_variables_set_properties_and_win_over_the_file(tmp_path):
    config = tmp_path / "client.properties"
    config.write_text("security.protocol=SASL_SSL\nsasl.username=alice\nsasl.password=old\n")
    security = load_security(config, {"GROUPCTL_KAFKA_SASL_PASSWORD": "new", "OTHER": "x"})
    assert (security.username, security.password) == ("alice", "new")


def test_a_missing_file_is_one_bad_input_naming_it(tmp_path):
    with pytest.raises(BadInput, match="no-such.properties"):
        load_security(tmp_path / "no-such.properties", {})


def test_secrets_stay_out_of_the_repr():
    security = security_from_properties({"security.protocol": "SASL_SSL", "sasl.username": "alice",
                                         "sasl.password": "hunter2", "ssl.key.password": "keypass"})
    assert "hunter2" not in repr(security) and "keypass" not in repr(security)
