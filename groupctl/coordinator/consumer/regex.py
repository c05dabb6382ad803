"""Regex subscriptions (ConsumerGroupHeartbeat v1's SubscribedTopicRegex): which topics a
member's regular expression names.

RE2 syntax and full-match semantics, as Apache Kafka resolves them broker-side (RE2/J): `orders.*`
matches "orders" and "orders-eu", `^orders` matches only "orders" (librdkafka sends its `^…`
subscriptions as `(^a)|(^b)`). RE2 runs in time linear in the topic name, so a client's pattern
cannot stall the coordinator. A pattern RE2 rejects is INVALID_REGULAR_EXPRESSION for the member
that sent it.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable

import re2

_QUIET = re2.Options()
_QUIET.log_errors = False  # a client's bad pattern is its error, not a line in our log


class InvalidRegex(ValueError):
    pass


CACHED_PATTERN_CHARS = 1024
"""Only patterns this short are cached (at most 256 of them): patterns come from clients, and RE2
holds about 1.1 MiB for a compiled 32,000-character one."""


def compiled(pattern: str) -> Any:
    if len(pattern) > CACHED_PATTERN_CHARS:
        return _compile(pattern)
    return _cached_compile(pattern)


def _compile(pattern: str) -> Any:
    try:
        return re2.compile(pattern, _QUIET)
    except re2.error as exc:
        problem = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise InvalidRegex(f"SubscribedTopicRegex {pattern!r} is not a valid RE2 regular expression: {problem}") from None


_cached_compile = lru_cache(maxsize=256)(_compile)


def matching(pattern: str, topics: Iterable[str]) -> frozenset[str]:
    """The topics whose whole name `pattern` matches."""
    regex = compiled(pattern)
    return frozenset(name for name in topics if regex.fullmatch(name))
