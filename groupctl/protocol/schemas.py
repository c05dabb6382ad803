"""kafka-python 3.0.12's generated message classes, indexed by API key.

kafka-python registers response classes but has no request registry; this walks the
`ApiMessage` subclasses once. Importing it costs kafka's package import (~150 ms), so the CLI
imports it only inside commands that talk Kafka.
"""

from __future__ import annotations

from functools import cache

import kafka.protocol.admin  # noqa: F401  (defines the admin message classes)
import kafka.protocol.consumer  # noqa: F401
import kafka.protocol.metadata  # noqa: F401
import kafka.protocol.producer  # noqa: F401
from kafka.protocol.api_message import ApiMessage


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
