"""The group's target assignment: which topics its members subscribe to, and the assignor's
answer for all of them at the new group epoch.

A member subscribes to its topic names plus the existing topics its regex fully matches
(`regex`); resolutions are cached per topic image (`ConsumerCore.regex_matches`), so a heartbeat
costs no regex work until topics change. The assignor is the one most members ask for, else the
first configured (`assignors.choose`). Stickiness comes from handing the assignor every member's
current target (a static member that replaced a departed one is handed the departed member's).
"""

from __future__ import annotations

from typing import Iterable, Mapping

from groupctl.coordinator.consumer import regex
from groupctl.coordinator.consumer.assignors import ASSIGNORS, choose
from groupctl.coordinator.consumer.assignors.spec import GroupSpec, MemberSpec
from groupctl.coordinator.consumer.context import ConsumerCore
from groupctl.coordinator.consumer.group import ConsumerGroup
from groupctl.coordinator.consumer.member import ConsumerMember
from groupctl.coordinator.consumer.partitions import Assignment
from groupctl.coordinator.consumer.topics import TopicImage


def use_topics(core: ConsumerCore, topics: TopicImage) -> None:
    """The topics changed: groups whose subscribed topics changed get a new epoch at their next
    heartbeat (`subscribed_topics` no longer equals what they were assigned over)."""
    core.topics = topics
    core.topics_version += 1
    core.regex_matches.clear()


def regex_topics(core: ConsumerCore, pattern: str) -> frozenset[str]:
    matches = core.regex_matches.get(pattern)
    if matches is None:
        matches = core.regex_matches[pattern] = regex.matching(pattern, core.topics.by_name)
    return matches


def subscribed_topics(core: ConsumerCore, names: Iterable[str], regexes: Iterable[str]) -> dict[str, int]:
    """Topic id -> partitions of the existing topics named, or matched by one of `regexes`: a
    change of it (a topic created, deleted or grown) is a new group epoch."""
    wanted = set(names)
    for pattern in regexes:
        wanted |= regex_topics(core, pattern)
    return core.topics.subscribed(wanted)


def record_subscribed(core: ConsumerCore, group: ConsumerGroup, subscribed: Mapping[str, int]) -> None:
    """The group's subscribed topics as of its epoch (by id, and by name for OffsetDelete)."""
    group.subscribed = dict(subscribed)
    group.subscribed_names = frozenset(core.topics.by_id[t].name for t in subscribed)
    group.topics_version = core.topics_version


def member_topics(core: ConsumerCore, member: ConsumerMember) -> frozenset[str]:
    """The topic ids `member` subscribes to."""
    regexes = (member.subscribed_topic_regex,) if member.subscribed_topic_regex else ()
    return frozenset(subscribed_topics(core, member.subscribed_topic_names, regexes))


def compute(core: ConsumerCore, group: ConsumerGroup, members: Mapping[str, ConsumerMember],
            subscribed: Mapping[str, int]) -> tuple[str, dict[str, Assignment]]:
    """(the assignor's name, member id -> target) for `members` over the `subscribed` topics."""
    name = choose((m.server_assignor for m in members.values()), core.config.assignors)
    specs = {}
    topics_of: dict[tuple, frozenset[str]] = {}  # members mostly share a subscription: resolve each once
    for member_id, member in members.items():
        current = group.target.get(member_id)
        if current is None and member.instance_id is not None:
            holder = group.static_member(member.instance_id)
            current = group.target.get(holder.member_id) if holder is not None else None
        subscription = (member.subscribed_topic_names, member.subscribed_topic_regex)
        topics = topics_of.get(subscription)
        if topics is None:
            topics = topics_of[subscription] = member_topics(core, member)
        specs[member_id] = MemberSpec(topics, current or {}, rack=member.rack_id, instance_id=member.instance_id)
    return name, ASSIGNORS[name].assign(GroupSpec(specs, subscribed))
