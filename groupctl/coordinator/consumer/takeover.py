"""Taking consumer groups over and giving them up, one group partition at a time.

Unlike a classic group, a loaded consumer group resumes as it was stored: members keep their
epochs and partitions and nothing is revoked (KIP-848: the member epochs are the record of
ownership). Every loaded member gets a fresh session from the load, so one that does not
heartbeat the new coordinator within its session timeout is fenced as usual. The document keeps
the topics the target was computed over, so the next heartbeat bumps the group epoch only if
they changed meanwhile. The loaded document is written once more, naming this node as the
group's coordinator (nothing else in it changes). Unloading writes nothing and cancels the
groups' timers.
"""

from __future__ import annotations

from typing import Callable

from groupctl.coordinator.consumer.context import ConsumerCore, cancel_member_timers
from groupctl.coordinator.consumer.document import load_group
from groupctl.coordinator.consumer.heartbeat import arm_session, persist
from groupctl.coordinator.results import Result
from groupctl.layout.consumer_groups import ConsumerGroupDocument


def load(core: ConsumerCore, document: ConsumerGroupDocument, now_ms: int, out: Result) -> None:
    group = load_group(document)
    group.subscribed_names = frozenset(filter(None, map(core.topics.name_of, group.subscribed)))
    core.groups[group.group_id] = group
    for member in group.members.values():  # a classic-protocol member keeps its own session timeout
        arm_session(core, group.group_id, member.member_id, member.classic.session_timeout_ms if member.classic else None)
    persist(core, group, now_ms, out)


def unload(core: ConsumerCore, belongs: Callable[[str], bool]) -> None:
    for group_id in [g for g in core.groups if belongs(g)]:
        group = core.groups.pop(group_id)
        for member_id in group.members:
            cancel_member_timers(core, group_id, member_id)
