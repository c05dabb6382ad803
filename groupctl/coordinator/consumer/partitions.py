"""Sets of topic partitions as the consumer group protocol names them: topic id -> partitions.

An `Assignment` is a mapping from a topic id (the topic's uuid, as a string) to a non-empty
frozenset of partition numbers; a topic with no partition is left out, so two assignments are
equal exactly when they name the same partitions. Treat them as immutable values.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Optional

Assignment = Mapping[str, frozenset[int]]

EMPTY: Assignment = {}


def assignment(pairs: Mapping[str, Iterable[int]]) -> dict[str, frozenset[int]]:
    """The normal form of `pairs`: frozensets, empty topics dropped."""
    return {topic: frozenset(ps) for topic, ps in pairs.items() if ps}


def intersection(a: Assignment, b: Assignment) -> dict[str, frozenset[int]]:
    return assignment({t: a[t] & b[t] for t in a.keys() & b.keys()})


def difference(a: Assignment, b: Assignment) -> dict[str, frozenset[int]]:
    return assignment({t: a[t] - b.get(t, frozenset()) for t in a})


def union(a: Assignment, b: Assignment) -> dict[str, frozenset[int]]:
    return assignment({t: a.get(t, frozenset()) | b.get(t, frozenset()) for t in a.keys() | b.keys()})


def overlaps(a: Optional[Assignment], b: Assignment) -> bool:
    """Whether `a` names any partition of `b` (an unknown `a`, None, is assumed to)."""
    if a is None:
        return True
    return any(a[t] & b[t] for t in a.keys() & b.keys())


def is_subset(a: Optional[Assignment], b: Assignment) -> bool:
    """Whether every partition of `a` is in `b` (an unknown `a`, None, is not)."""
    if a is None:
        return False
    return all(ps <= b.get(t, frozenset()) for t, ps in a.items())


def count(a: Assignment) -> int:
    return sum(len(ps) for ps in a.values())
