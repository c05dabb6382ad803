"""kafka-python 3.0.12's generated message classes, indexed by API key.

kafka-python registers response classes but has no request registry; this walks the
`ApiMessage` subclasses once. groupctl's own message classes (`extensions`, and the KIP-848
`consumer_group` ones) are imported here so they are found like any other. Importing this module
loads every kafka-python message module, so the operator tools' client (`groupctl.client.kafka`)
imports it only for an API outside its own short list.
"""

from __future__ import annotations

from functools import cache

import kafka.protocol.admin  # noqa: F401  (defines the admin message classes)
import kafka.protocol.consumer  # noqa: F401
import kafka.protocol.metadata  # noqa: F401
import kafka.protocol.producer  # noqa: F401
import kafka.protocol.sasl  # noqa: F401  (SaslHandshake, SaslAuthenticate)
from kafka.protocol.api_message import ApiMessage

import groupctl.protocol.extensions  # noqa: F401  (groupctl's own APIs, keys 32000+)
import groupctl.protocol.consumer_group  # noqa: F401  (KIP-848: keys 68 and 69)

# groupctl.client.kafka_import may have registered these packages without running their
# `__init__`; touching `__all__` runs it, so every message class exists before the walk below.
for _package in (kafka.protocol.admin, kafka.protocol.consumer, kafka.protocol.producer):
    _package.__all__  # noqa: B018


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found.append(sub)
        found.extend(_subclasses(sub))
    return found


@cache
def _by_key() -> dict[tuple[int, str], type]:
    table: dict[tuple[int, str], type] = {}
    for cls in _subclasses(ApiMessage):
        if getattr(cls, "_class_version", None) is None and getattr(cls, "_json", None):
            table[(cls.API_KEY, cls.type)] = cls
    return table


def request_class(key: int) -> type:
    """The unversioned request class for API `key`; KeyError if kafka-python has none."""
    return _by_key()[(key, "request")]


def response_class(key: int) -> type:
    return _by_key()[(key, "response")]
