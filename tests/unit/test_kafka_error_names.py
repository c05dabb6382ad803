"""Error lines name Kafka's errors as Kafka names them today, whatever kafka-python calls them."""

from groupctl.client.kafka import error_name


def test_code_6_is_named_not_leader_or_follower_as_kafka_renamed_it():
    assert error_name(6) == "NOT_LEADER_OR_FOLLOWER"


def test_other_codes_keep_kafkas_names_and_an_unknown_code_says_its_number():
    assert error_name(68) == "NON_EMPTY_GROUP"
    assert error_name(52) == "TRANSACTION_COORDINATOR_FENCED"
    assert error_name(9999) == "error 9999"
