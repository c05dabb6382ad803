"""Schema checks on a decoded request, before any handler sees it: nulls and string lengths.

Why: kafka-python's decoders return None for a null (negative length) string, bytes, array or
struct whatever the schema says, and accept compact strings of any length. Apache Kafka's
generated readers (`MessageDataGenerator`) refuse both, "non-nullable field X was serialized as
null" and "string field X had invalid length", and the broker closes the connection
(`RequestContext.parseRequest` raises InvalidRequestException; `SocketServer` closes the channel).
Without this check such a None reached the handlers and the core as an AttributeError or a
TypeError: a mutation fuzzer found thousands of those tracebacks in minutes.

Invariants:
- A request passes when every field present at its version is non-null unless the schema's
  `nullableVersions` include that version, no element of an array of strings is null (Kafka's
  elements are never nullable), every string is at most 32767 UTF-8 bytes, and its arrays hold
  at most MAX_ELEMENTS elements in all; structs and arrays of structs are checked field by field,
  all the way down.
- UUIDs are not checked: kafka-python decodes the zero uuid as None, and Kafka's zero uuid is a
  value, not a null. Tagged fields may be None: absent means the schema's default, which is
  None for a tagged struct.
- The rules for one (API, version) are compiled once from kafka-python's schema (`checker`), so
  a request costs one attribute read per variable-length field; the hand-written `fastpath`
  bodies carry kafka-python's field names and are checked by the same rules.
- What a field's value means (negative partitions, timeouts, ...) is not judged here: that is
  the handlers' business, with the error codes Kafka answers.
- Responses: `shorten_error_messages` cuts the server's error messages that quote a long client
  name to the same string limit, so that they can be encoded.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Callable, NamedTuple, Optional

MAX_STRING_BYTES = 0x7FFF
"""Kafka's longest string (its length was an int16 before compact strings)."""

MAX_ELEMENTS = 100_000
"""Array elements one request may carry, all arrays counted (a deliberate difference: Kafka
bounds a request by bytes only). Each element costs a few hundred bytes of Python objects while
the request is handled (a 390 KiB OffsetFetch of 100,000 partitions took 39 MiB, which the
allocator then kept), so elements, not bytes, are what a hostile request multiplies; real
clients send far fewer (a Fetch or OffsetCommit names the partitions of one member)."""

_SURELY_SHORT = MAX_STRING_BYTES // 4  # a str of at most this many characters fits, whatever it holds

# Kinds of checked field.
_TEXT, _TEXTS, _ARRAY, _VALUE, _STRUCT, _STRUCTS = range(6)


class _Rule(NamedTuple):
    name: str
    nullable: bool
    kind: int
    inner: tuple["_Rule", ...] = ()


Checker = Callable[[Any], Optional[str]]
"""`check(body) -> None` when the body passes, else what is wrong with it."""


def _too_long(text: str) -> bool:
    return len(text) > _SURELY_SHORT and (len(text) > MAX_STRING_BYTES
                                          or len(text.encode("utf-8", "surrogatepass")) > MAX_STRING_BYTES)


def _rules(struct: Any, version: int) -> tuple[_Rule, ...]:
    """The rules of one kafka-python struct schema at `version`, leaving out the fields that
    need no check (fixed-size values, nullable bytes)."""
    rules = []
    for field in struct._fields:
        if not field.for_version_q(version):
            continue
        nullable = field.nullable_for_version_q(version) or field.tagged_field_q(version)
        if field.is_struct_array():
            rules.append(_Rule(field.name, nullable, _STRUCTS, _rules(field.array_of, version)))
        elif field.is_struct():
            rules.append(_Rule(field.name, nullable, _STRUCT, _rules(field, version)))
        elif field.is_array():
            rules.append(_Rule(field.name, nullable, _TEXTS if field.array_of.type_str == "string" else _ARRAY))
        elif field.type_str == "string":
            rules.append(_Rule(field.name, nullable, _TEXT))
        elif field.type_str in ("bytes", "records") and not nullable:
            rules.append(_Rule(field.name, nullable, _VALUE))
    return tuple(rules)


class _Walk:
    """One request's check: the elements it may still carry, and what is wrong, if anything."""

    __slots__ = ("elements_left",)

    def __init__(self) -> None:
        self.elements_left = MAX_ELEMENTS

    def violation(self, rules: tuple[_Rule, ...], obj: Any, path: str) -> Optional[str]:
        for name, nullable, kind, inner in rules:
            value = getattr(obj, name)
            if value is None:
                if nullable:
                    continue
                return f"non-nullable field {path}{name} is null"
            if kind == _TEXT:
                if _too_long(value):
                    return f"string field {path}{name} is longer than {MAX_STRING_BYTES} bytes"
                continue
            if kind == _VALUE:
                continue
            if kind == _STRUCT:
                problem = self.violation(inner, value, f"{path}{name}.")
                if problem:
                    return problem
                continue
            self.elements_left -= len(value)
            if self.elements_left < 0:
                return f"more than {MAX_ELEMENTS} array elements"
            if kind == _TEXTS:
                for item in value:
                    if item is None:
                        return f"an element of {path}{name} is null"
                    if _too_long(item):
                        return f"an element of {path}{name} is longer than {MAX_STRING_BYTES} bytes"
            elif kind == _STRUCTS:
                for item in value:
                    problem = self.violation(inner, item, f"{path}{name}[].")
                    if problem:
                        return problem
        return None


@cache
def checker(request_class: type, version: int) -> Checker:
    """The compiled check of `request_class` (kafka-python's unversioned request class) at
    `version`: built once per (API, version), which the registry bounds."""
    rules = _rules(request_class._struct, version)

    def check(body: Any) -> Optional[str]:
        return _Walk().violation(rules, body, "")

    return check


def shorten_error_messages(message: Any) -> bool:
    """Cut every `error_message` of a response (kafka-python message, nested structs included)
    to MAX_STRING_BYTES; whether any was cut. For the rare response whose message quotes a
    client's long name: Kafka's writer refuses such a string too."""
    cut = False
    for field in message._struct._fields:
        value = getattr(message, field.name, None)
        if value is None:
            continue
        if field.name == "error_message" and isinstance(value, str) and _too_long(value):
            setattr(message, field.name, value.encode("utf-8", "surrogatepass")[:MAX_STRING_BYTES - 3]
                    .decode("utf-8", "ignore") + "...")
            cut = True
        elif field.is_struct():
            cut = shorten_error_messages(value) or cut
        elif field.is_struct_array():
            for item in value:
                cut = shorten_error_messages(item) or cut
    return cut


def distinct(items: Any, key: Callable[[Any], Any] = lambda item: item) -> list:
    """`items` without repeats (by `key`; the first of each wins), in order. The describe APIs
    and batched OffsetFetch answer a group named twice once (a deliberate difference: Kafka
    answers it twice): otherwise a 4 KiB request naming one large group 500 times made 500
    descriptions, 50 MiB of Python objects. Real clients never repeat a group (Kafka's admin
    client keys them by id; librdkafka refuses duplicates)."""
    seen: set = set()
    kept = []
    for item in items:
        marker = key(item)
        if marker not in seen:
            seen.add(marker)
            kept.append(item)
    return kept
