"""Hostile request frames: a valid seed of every registered API at every served version, built
from kafka-python's schemas, and the mutations a wire fuzzer applies to it.

Used by tests/server/test_hostile_frames.py (a few thousand frames) and bench/wire_fuzz.py (a
million). Everything is drawn from the `random.Random` the caller passes, so a seed repeats a run.

A seed is a plain tree (field name -> value; structs as dicts, arrays of structs as lists of
dicts) filled with plausible values chosen by field name (group ids from `Names.groups`, topics
from `Names.topics`, small partitions, short timeouts), so that most seeds reach the core rather
than stopping at the first check. Mutations then work at two levels:

- field level (`mutate_tree`): one field of the tree becomes null, empty, negative, an extreme
  of its type, a long or odd string, or a long or duplicated array; the tree is then encoded with
  kafka-python (a value kafka-python cannot encode falls back to a byte-level mutation);
- byte level (`mutate_bytes`): bit flips, truncation, trailing garbage, spans overwritten with
  0xff/0x00/random bytes, and int16/int32 -1 or huge values at random offsets (null and huge
  lengths inside the body). The api key and version are left alone: other mutations reach the
  decoder and the handlers, where the interesting failures are.

`Mutation.ends_stream` marks a frame whose length prefix no longer matches its bytes (longer,
shorter, zero, negative or huge): the sender writes it last on its connection and closes.
"""

from __future__ import annotations

import random
import struct
import uuid
from dataclasses import dataclass, field
from typing import Any, Optional

from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription
from kafka.record.memory_records import MemoryRecordsBuilder

import groupctl.server.handlers  # noqa: F401  (registers every handler)
from groupctl.protocol.registry import REGISTRY, ApiSpec

_INT_RANGES = {
    "int8": (-2**7, 2**7 - 1), "int16": (-2**15, 2**15 - 1), "uint16": (0, 2**16 - 1),
    "int32": (-2**31, 2**31 - 1), "int64": (-2**63, 2**63 - 1),
}
_LONG_STRING = 40_000  # longer than Kafka's 32767-byte limit
_ODD_STRINGS = ("", ".", "..", " ", "\x00", "é" * 3, "\u202e", "a" * 250, "fuzz/../x", "%s%n")


@dataclass
class Names:
    """The names seeds use: a few groups and topics, so that seeds meet again in the node."""

    groups: tuple[str, ...] = ("fuzz-g0", "fuzz-g1", "fuzz-g2")
    topics: tuple[str, ...] = ("fuzz-t0", "fuzz-t1")
    topic_ids: list[uuid.UUID] = field(default_factory=list)  # learned from the node, if known
    clients: tuple[Optional[str], ...] = ("fuzz-client", "rdkafka", "", None)


@dataclass(frozen=True)
class Mutation:
    frame: bytes  # the whole frame, length prefix included
    api: str
    version: int
    kind: str  # "seed", "field:<name>", or the byte mutation's name
    ends_stream: bool = False


def served_versions() -> list[tuple[ApiSpec, int]]:
    """Every (API, version) the registry serves."""
    return [(spec, v) for _, spec in sorted(REGISTRY.items())
            for v in range(spec.min_version, spec.max_version + 1)]


# -- seeds -------------------------------------------------------------------------------------

def _consumer_subscription(rng: random.Random, names: Names) -> bytes:
    return bytes(ConsumerProtocolSubscription(version=0, topics=[rng.choice(names.topics)], user_data=None).encode())


def _consumer_assignment(rng: random.Random, names: Names) -> bytes:
    return bytes(ConsumerProtocolAssignment(version=0, assigned_partitions=[(rng.choice(names.topics), [0])],
                                            user_data=None).encode())


def _record_batch(rng: random.Random) -> bytes:
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 16)
    if rng.random() < 0.3:
        builder.set_producer_state(rng.randrange(1 << 20), 0, rng.randrange(3), False)
    for i in range(rng.randint(1, 3)):
        builder.append(1_000 + i, None, b"fuzz-%d" % i)
    builder.close()
    return bytes(builder.buffer())


def _string(rng: random.Random, names: Names, name: str, path: str) -> Optional[str]:
    if "protocol" in path and name == "name" or "assignor" in name:
        return rng.choice(("range", "roundrobin", "uniform"))
    if "group" in name or name == "key" or name == "coordinator_keys":
        return rng.choice(names.groups)
    if "topic" in name or name == "name":
        return rng.choice(names.topics)
    if name == "member_id":
        return rng.choice(("", "", "fuzz-client-1"))
    if "instance_id" in name or "rack" in name or "regex" in name or name == "transactional_id":
        return None if rng.random() < 0.8 else f"fuzz-{name}"
    if name == "protocol_type":
        return "consumer"
    if name == "states_filter":
        return rng.choice(("Stable", "Empty"))
    if name == "types_filter":
        return rng.choice(("classic", "consumer"))
    if name == "state_filters":  # ListTransactions
        return rng.choice(("Ongoing", "Empty", "CompleteCommit"))
    if name == "transactional_ids" or name == "transactional_id_pattern":  # DescribeTransactions, ListTransactions
        return rng.choice(("fuzz-tx", "fuzz-.*"))
    return "fuzz"


def _int(rng: random.Random, name: str) -> int:
    if "partition" in name or name == "index":
        return rng.randrange(3)
    if name in ("max_wait_ms", "timeout_ms"):
        return rng.randrange(50)
    if "timeout" in name:
        return rng.choice((6_000, 10_000, 30_000))
    if "generation" in name or "epoch" in name or name in ("producer_id", "after_generation", "timestamp"):
        return rng.choice((-1, -1, 0, 1))
    if name == "acks":
        return rng.choice((-1, 1, 0))
    if name in ("count", "num_partitions"):
        return rng.randint(1, 4)
    if name in ("replication_factor", "min_bytes"):
        return 1 if name == "replication_factor" else rng.randrange(2)
    if "max_bytes" in name:
        return 1 << 20
    if name in ("key_type", "session_id", "throttle_time_ms"):
        return 0
    return rng.randrange(4)


def _bytes(rng: random.Random, names: Names, name: str, path: str) -> bytes:
    if name == "records":
        return _record_batch(rng)
    if "protocol" in path and name == "metadata":
        return _consumer_subscription(rng, names)
    if name == "assignment":
        return _consumer_assignment(rng, names)
    return b"fuzz"


def _simple(rng: random.Random, names: Names, f: Any, path: str) -> Any:
    kind = f.type_str
    if kind == "string":
        return _string(rng, names, f.name, path)
    if kind in _INT_RANGES:
        return _int(rng, f.name)
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "uuid":
        return rng.choice(names.topic_ids) if names.topic_ids and rng.random() < 0.7 else rng.choice((None, uuid.uuid4()))
    if kind in ("bytes", "records"):
        return _bytes(rng, names, f.name, path)
    if kind == "float64":
        return 0.0
    return f.default


def seed_tree(rng: random.Random, names: Names, struct_field: Any, version: int, path: str = "") -> dict[str, Any]:
    """A plausible value for every field of `struct_field` present at `version`."""
    tree: dict[str, Any] = {}
    for f in struct_field._fields:
        if not f.for_version_q(version) or f.tagged_field_q(version):
            continue
        inner_path = f"{path}.{f.name}"
        if f.is_struct_array():
            tree[f.name] = [seed_tree(rng, names, f.array_of, version, inner_path) for _ in range(rng.randint(1, 2))]
        elif f.is_struct():
            tree[f.name] = seed_tree(rng, names, f, version, inner_path)
        elif f.is_array():
            tree[f.name] = [_simple(rng, names, f.array_of, inner_path) for _ in range(rng.randint(1, 2))]
        else:
            tree[f.name] = _simple(rng, names, f, inner_path)
        if f.nullable_for_version_q(version):
            if rng.random() < 0.1:
                tree[f.name] = None
        elif tree[f.name] is None:
            tree[f.name] = "" if f.type_str == "string" else f.default  # a seed is valid
    return tree


def _values(struct_field: Any, tree: dict[str, Any], built: dict[int, Any]) -> dict[str, Any]:
    """The keyword arguments of kafka-python's class for `tree`, nested structs built (once per
    distinct subtree: `built` maps id(subtree) to its object, as mutations repeat subtrees)."""
    values = {}
    for f in struct_field._fields:
        if f.name not in tree:
            continue
        value = tree[f.name]
        if value is not None and f.is_struct_array():
            value = [_struct(f.array_of, item, built) for item in value]
        elif value is not None and f.is_struct():
            value = _struct(f, value, built)
        values[f.name] = value
    return values


def _struct(struct_field: Any, tree: dict[str, Any], built: dict[int, Any]) -> Any:
    made = built.get(id(tree))
    if made is None:
        made = built[id(tree)] = struct_field.data_class(**_values(struct_field, tree, built))
    return made


def encode(spec: ApiSpec, version: int, tree: dict[str, Any], correlation_id: int, client_id: Optional[str]) -> bytes:
    """The framed request (length prefix and header included). kafka-python's encoder raises on
    a value it cannot write (a classic string over 32767 bytes, an int out of its type's range)."""
    request = spec.request_class[version](**_values(spec.request_class._struct, tree, {}))
    request.with_header(correlation_id=correlation_id, client_id=client_id)
    return bytes(request.encode(version=version, header=True, framed=True))


# -- field-level mutations ---------------------------------------------------------------------

def _locations(struct_field: Any, tree: dict[str, Any], out: list[tuple[dict[str, Any], Any]]) -> None:
    """Every (container, field) of `tree`, nested structs and array elements included."""
    for f in struct_field._fields:
        if f.name not in tree:
            continue
        out.append((tree, f))
        value = tree[f.name]
        if value is None:
            continue
        if f.is_struct_array():
            for item in value:
                _locations(f.array_of, item, out)
        elif f.is_struct():
            _locations(f, value, out)


def _odd_text(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.05:
        return "y" * rng.choice((256, 1025, 32_767))  # past the node's cache limits, up to Kafka's
    if roll < 0.4:
        return rng.choice(_ODD_STRINGS)
    return "".join(chr(rng.choice((rng.randrange(0x20, 0x7F), rng.randrange(0xA0, 0xD800))))
                   for _ in range(rng.randint(1, 40)))


def _odd_value(rng: random.Random, f: Any, value: Any) -> Any:
    """An odd value of `f`'s type: null is drawn by the caller; here empty, extreme, long."""
    kind = f.type_str
    if f.is_struct_array() or f.is_array():
        if not value or rng.random() < 0.3:
            return []
        return [value[0]] * rng.choice((2, 3, 50, 500))  # duplicates, and many of them
    if f.is_struct():
        return None
    if kind == "string":
        return _odd_text(rng)
    if kind in _INT_RANGES:
        lo, hi = _INT_RANGES[kind]
        return rng.choice((0, -1, -2, lo, lo + 1, hi, hi - 1, rng.randint(lo, hi)))
    if kind == "bool":
        return not value
    if kind == "uuid":
        return rng.choice((uuid.uuid4(), uuid.UUID(int=2**128 - 1)))
    if kind in ("bytes", "records"):
        return rng.choice((b"", b"\xff" * rng.randint(1, 64), rng.randbytes(rng.randint(1, 200)),
                           bytes(value or b"")[: rng.randint(0, len(value or b""))]))
    return value


def mutate_tree(rng: random.Random, spec: ApiSpec, version: int, tree: dict[str, Any], refused: bool) -> list[str]:
    """Change one to three fields of `tree` in place; the names of the fields changed. With
    `refused`, the first change breaks the schema (a null where none is allowed, or a string
    over Kafka's limit), which the node must refuse by closing the connection; otherwise every
    change stays within the schema (nulls only where allowed), so the node must answer."""
    found: list[tuple[dict[str, Any], Any]] = []
    _locations(spec.request_class._struct, tree, found)
    changed = []
    for i in range(rng.choice((1, 1, 2, 3)) if found else 0):
        container, f = rng.choice(found)
        nullable = f.nullable_for_version_q(version) or f.tagged_field_q(version) or f.type_str == "uuid"
        if refused and i == 0:
            strict = [(c, g) for c, g in found
                      if not (g.nullable_for_version_q(version) or g.tagged_field_q(version) or g.type_str == "uuid")]
            if strict:
                container, f = rng.choice(strict)
                container[f.name] = None if f.type_str != "string" or rng.random() < 0.7 else "x" * _LONG_STRING
                changed.append(f.name)
                continue
        container[f.name] = None if nullable and rng.random() < 0.4 else _odd_value(rng, f, container[f.name])
        changed.append(f.name)
    return changed


# -- byte-level mutations ----------------------------------------------------------------------

_BODY = 12  # length prefix, api key, api version, correlation id: mutations start after these
_SMASHES = (struct.pack(">h", -1), struct.pack(">i", -1), struct.pack(">h", 0x7FFF), struct.pack(">i", 0x7FFFFFFF),
            struct.pack(">i", -2**31), b"\xff\xff\xff\xff\x0f", b"\x00")


def _relength(body: bytes) -> bytes:
    return struct.pack(">i", len(body)) + body


def mutate_bytes(rng: random.Random, frame: bytes) -> tuple[str, bytes]:
    """(mutation name, mutated frame) with a length prefix that matches the new frame."""
    body = bytearray(frame[4:])
    start = _BODY - 4
    roll = rng.random()
    if roll < 0.3:
        for _ in range(rng.randint(1, 4)):
            pos = rng.randrange(min(start, len(body) - 1), len(body))
            body[pos] ^= 1 << rng.randrange(8)
        return "bitflip", _relength(bytes(body))
    if roll < 0.45:
        return "truncate", _relength(bytes(body[: rng.randrange(start, len(body))]))
    if roll < 0.55:
        return "append", _relength(bytes(body) + rng.randbytes(rng.randint(1, 64)))
    if roll < 0.75:
        pos = rng.randrange(start, len(body))
        span = rng.randint(1, 8)
        fill = rng.choice((b"\xff" * span, b"\x00" * span, b"\x7f" * span, rng.randbytes(span)))
        body[pos:pos + span] = fill
        return "overwrite", _relength(bytes(body))
    pos = rng.randrange(start, len(body))
    smash = rng.choice(_SMASHES)
    body[pos:pos + len(smash)] = smash
    return "smash", _relength(bytes(body))


def mutate_length(rng: random.Random, frame: bytes) -> bytes:
    """The frame behind a length prefix that does not match it."""
    size = len(frame) - 4
    prefix = rng.choice((size + rng.randint(1, 64), max(size - rng.randint(1, 64), 1), 0, -1, -2**31,
                         2**31 - 1, 200 * 1024 * 1024))
    return struct.pack(">i", prefix) + frame[4:]


def mutate_header(rng: random.Random, frame: bytes) -> tuple[str, bytes]:
    """An api version nobody serves, or an api key nobody registered."""
    body = bytearray(frame)
    if rng.random() < 0.5:
        struct.pack_into(">h", body, 6, rng.choice((-1, 99, 2**15 - 1)))
        return "version", bytes(body)
    struct.pack_into(">h", body, 4, rng.choice((-1, 67, 999, 2**15 - 1)))
    return "api-key", bytes(body)


# -- the factory -------------------------------------------------------------------------------

class FrameFactory:
    """Mutated frames of every served (API, version), drawn in turn.

    `pool` valid seeds are built up front (at least one per served version) and reused: byte
    mutations copy a pooled frame, field mutations re-encode a copy of a pooled tree.
    """

    def __init__(self, rng: random.Random, names: Names, pool: int = 2_000, max_elements: int = 2_000,
                 max_bytes: int = 1 << 20) -> None:
        """`max_elements` and `max_bytes` bound one field-mutated request (duplicated arrays
        nest: 500 topics of 500 partitions are 250,000 values; 500 strings of 32 KiB, 16 MiB):
        larger ones are sent as their seed. What a node holds while it handles a frame grows
        with the frame (up to its --max-frame-bytes), which is not what a fuzzer measures."""
        self.rng = rng
        self.max_elements = max_elements
        self.max_bytes = max_bytes
        self.names = names
        served = served_versions()
        self.seeds: list[tuple[ApiSpec, int, dict[str, Any], bytes]] = []
        for i in range(max(pool, len(served))):
            spec, version = served[i % len(served)]
            tree = seed_tree(rng, names, spec.request_class._struct, version)
            self.seeds.append((spec, version, tree, encode(spec, version, tree, i, self._client_id())))

    def seeds_of_every_version(self) -> list[bytes]:
        """One valid frame of every served (API, version): what a warm-up sends."""
        return [frame for spec, version, _, frame in self.seeds[:len(served_versions())]]

    def _client_id(self) -> Optional[str]:
        return self.rng.choice(self.names.clients)

    def next(self, correlation_id: int, refused: bool = False) -> Mutation:
        """A frame the node should answer (a seed, or field changes within the schema), or with
        `refused` one it should refuse by closing the connection (a schema-breaking field,
        mangled bytes, an unknown api key or version, a wrong length prefix). "Should": a
        mangled frame may still decode, and a valid one may meet a check only the node makes."""
        rng = self.rng
        spec, version, tree, frame = rng.choice(self.seeds)
        frame = frame[:8] + struct.pack(">i", correlation_id) + frame[12:]
        roll = rng.random()
        if not refused and roll < 0.1:
            return Mutation(frame, spec.name, version, "seed")
        if not refused or roll < 0.3:
            copy = _deep_copy(tree)
            changed = mutate_tree(rng, spec, version, copy, refused)
            if _elements(copy, {}) > self.max_elements:
                return Mutation(frame, spec.name, version, "seed")
            try:
                encoded = encode(spec, version, copy, correlation_id, self._client_id())
                if len(encoded) <= self.max_bytes:
                    return Mutation(encoded, spec.name, version, "field:" + ",".join(changed))
                return Mutation(frame, spec.name, version, "seed")
            except (struct.error, ValueError, TypeError, AttributeError, OverflowError):
                if not refused:  # kafka-python cannot write it
                    return Mutation(frame, spec.name, version, "seed")
        if roll < 0.85:
            kind, mutated = mutate_bytes(rng, frame)
            return Mutation(mutated, spec.name, version, kind)
        if roll < 0.93:
            kind, mutated = mutate_header(rng, frame)
            return Mutation(mutated, spec.name, version, kind)
        return Mutation(mutate_length(rng, frame), spec.name, version, "length", ends_stream=True)


def _elements(tree: Any, seen: dict[int, int]) -> int:
    """How many values `tree` holds, repeated subtrees counted each time (computed once each)."""
    if isinstance(tree, (dict, list)):
        known = seen.get(id(tree))
        if known is None:
            known = seen[id(tree)] = 1 + sum(_elements(v, seen) for v in (tree.values() if isinstance(tree, dict) else tree))
        return known
    return 1


def _deep_copy(tree: Any) -> Any:
    if isinstance(tree, dict):
        return {k: _deep_copy(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_deep_copy(v) for v in tree]
    return tree
