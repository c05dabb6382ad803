"""A group's committed offsets of one topic, `/groups/<group>/offsets/<topic>`:
`{"version": 1, "partitions": {"<p>": {"offset", "leader_epoch", "metadata",
"commit_timestamp_ms"}, ...}}`, written with every commit (one write per topic per commit
request) and read when a coordinator loads the group, and by `zk show`.

The hot path of an offset commit: a document is immutable, keeps each partition's entry encoded
(`encode` memoizes the entries it read), and a commit makes a new document that reuses the
encoded entries of the partitions it left alone, so a commit re-encodes only what it changed.
The bytes are exactly `codec.encode` of the document.
"""

from __future__ import annotations

from json.encoder import encode_basestring_ascii
from dataclasses import dataclass
from typing import Any, Optional

from groupctl.layout.codec import LayoutError, encode, is_number, read

VERSION = 1
_ENTRY = '"%s":{"offset":%d,"leader_epoch":%d,"metadata":%s,"commit_timestamp_ms":%d}'


def _encoded_entry(partition: str, entry: dict[str, Any]) -> bytes:
    """`"<partition>":<entry>` exactly as `codec.encode` writes it inside the document."""
    return (encode_basestring_ascii(partition) + ":").encode() + encode(entry)


def check_entry(path: str, partition: str, entry: Any) -> None:
    if not is_number(partition):
        raise LayoutError(path, f"partition {partition!r} is not a partition number")
    if not isinstance(entry, dict):
        raise LayoutError(path, f"partition {partition}: the entry must be an object, not {entry!r}")
    for name in ("offset", "leader_epoch", "commit_timestamp_ms"):
        value = entry.get(name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise LayoutError(path, f'partition {partition}: "{name}" must be an integer, not {value!r}')
    if not isinstance(entry.get("metadata"), str):
        raise LayoutError(path, f'partition {partition}: "metadata" must be a string, not {entry.get("metadata")!r}')


@dataclass(frozen=True)
class OffsetEntry:
    """One partition's committed offset, as a document stores it."""

    partition: int
    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp_ms: int


class OffsetsDocument:
    """The committed offsets of one (group, topic), by partition (a string, as stored)."""

    __slots__ = ("partitions", "_encoded")

    def __init__(self, partitions: dict[str, dict[str, Any]],
                 encoded: Optional[dict[str, bytes]] = None) -> None:
        self.partitions = partitions
        self._encoded = {} if encoded is None else encoded

    @classmethod
    def decode(cls, path: str, data: Optional[bytes]) -> "OffsetsDocument":
        document = read(path, data, VERSION)
        partitions = document.get("partitions")
        if not isinstance(partitions, dict):
            raise LayoutError(path, f'"partitions" must be an object of entries, not {partitions!r}')
        for partition, entry in partitions.items():
            check_entry(path, partition, entry)
        return cls(partitions)

    def entries(self) -> list[OffsetEntry]:
        """Every partition's entry, by partition number (the fields `decode` checked)."""
        return [OffsetEntry(int(p), e["offset"], e["leader_epoch"], e["metadata"], e["commit_timestamp_ms"])
                for p, e in sorted(self.partitions.items(), key=lambda pe: int(pe[0]))]

    def with_commit(self, partition: int, offset: int, leader_epoch: int, metadata: str,
                    commit_timestamp_ms: int) -> "OffsetsDocument":
        """This document with `partition`'s entry replaced."""
        key = str(partition)
        entry = {"offset": offset, "leader_epoch": leader_epoch, "metadata": metadata,
                 "commit_timestamp_ms": commit_timestamp_ms}
        if (type(offset) is int and type(leader_epoch) is int and type(commit_timestamp_ms) is int
                and type(metadata) is str):
            encoded = (_ENTRY % (key, offset, leader_epoch, encode_basestring_ascii(metadata),
                                 commit_timestamp_ms)).encode()
        else:
            encoded = _encoded_entry(key, entry)
        partitions = dict(self.partitions)
        partitions[key] = entry
        fragments = dict(self._encoded)
        fragments[key] = encoded
        return OffsetsDocument(partitions, fragments)

    def without(self, partition: str) -> "OffsetsDocument":
        return OffsetsDocument({p: e for p, e in self.partitions.items() if p != partition},
                               {p: e for p, e in self._encoded.items() if p != partition})

    def encode(self) -> bytes:
        encoded = self._encoded
        fragments = []
        for partition, entry in self.partitions.items():
            fragment = encoded.get(partition)
            if fragment is None:  # read from the store: encoded once, on first write
                fragment = encoded[partition] = _encoded_entry(partition, entry)
            fragments.append(fragment)
        return b'{"version":%d,"partitions":{%s}}' % (VERSION, b",".join(fragments))
