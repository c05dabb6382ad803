"""Server-side assignors (uniform, range) on a large group, against kafka-python's client-side ones.

    python -m bench.assignors [--members 1000] [--topics 50] [--partitions 1000] [--runs 5]
                              [--baseline-runs 1] [--baseline-max-s 180] [--seed 1] [--cases ...]

A group of `--members` members and `--topics` topics of `--partitions` partitions each (default
1,000 x 50 x 1,000 = 50,000 partitions), four cases:
- `uniform-fresh`: homogeneous (everyone subscribes to every topic), no current assignment;
- `uniform-join`: one member joins the homogeneous group whose current assignment is the
  previous balanced one (the incremental case);
- `uniform-heterogeneous`: each member subscribes to a seeded random 20-30 of the topics (with
  the default 50), no current assignment;
- `range`: homogeneous, kafka-python's RangePartitionAssignor as the baseline.
Ours is timed on `assign(spec)` with the spec built beforehand (the spec's construction is
reported apart for the join case): one warm-up, then the median of `--runs`. Each result is
checked (every subscribed partition assigned once, to a subscriber); exit status 1 otherwise.

The baseline, in the same process on the same input: kafka-python 3.0.12's
`StickyPartitionAssignor` for the uniform cases (for the join case each existing member's
previous assignment is given as its StickyAssignorUserData, generation 1) and
`RangePartitionAssignor` for range; the median of `--baseline-runs` (default 1: at the default
size the sticky assignor takes about 100 s a run). A baseline run longer than `--baseline-max-s`
is stopped (SIGALRM) and reported as "> limit". Printed: ours, theirs, their ratio, the target
(issue 12), and for the join case how many partitions changed owner under each.
"""

from __future__ import annotations

import argparse
import random
import signal
import statistics
import sys
import time
from collections import namedtuple
from dataclasses import dataclass, field
from typing import Callable, Optional

from groupctl.coordinator.consumer.assignors import GroupSpec, MemberSpec, RangeAssignor, UniformAssignor

CASES = ("uniform-fresh", "uniform-join", "uniform-heterogeneous", "range")
TARGET_MS = {"uniform-fresh": 100, "uniform-join": 20, "uniform-heterogeneous": 500}
JOINER = "member-joining"

Member = namedtuple("Member", "member_id group_instance_id metadata")  # what kafka-python's assign() reads


class Cluster:
    """The part of kafka-python's ClusterMetadata its assignors call."""

    def __init__(self, counts: dict[str, int]):
        self._partitions = {topic: set(range(count)) for topic, count in counts.items()}

    def topics(self) -> set[str]:
        return set(self._partitions)

    def partitions_for_topic(self, topic: str) -> Optional[set[int]]:
        return self._partitions.get(topic)


class BaselineTimeout(Exception):
    pass


@dataclass
class Case:
    name: str
    ours_ms: list[float] = field(default_factory=list)
    theirs_ms: list[float] = field(default_factory=list)
    theirs_timed_out: bool = False
    moved: Optional[tuple[int, Optional[int]]] = None  # ours, theirs
    spec_ms: Optional[float] = None
    problems: list[str] = field(default_factory=list)


def timed(function: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    result = function()
    return (time.perf_counter() - started) * 1000, result


def check(spec: GroupSpec, result) -> list[str]:
    """Every subscribed partition assigned exactly once, to a subscriber of its topic."""
    problems, seen = [], set()
    for member_id, assignment in result.items():
        subscribed = spec.members[member_id].subscribed_topics
        for topic, partitions in assignment.items():
            if topic not in subscribed:
                problems.append(f"{member_id} got {topic} without subscribing to it")
            for partition in partitions:
                if (topic, partition) in seen:
                    problems.append(f"{topic}-{partition} assigned twice")
                seen.add((topic, partition))
    wanted = sum(spec.topics[t] for t in spec.subscribed_topics())
    if len(seen) != wanted or set(result) != set(spec.members):
        problems.append(f"{len(seen)} partitions assigned of {wanted}")
    return problems[:5]


def owners(assignment) -> dict[tuple[str, int], str]:
    return {(t, p): m for m, a in assignment.items() for t, ps in a.items() for p in ps}


def moved(before, after) -> int:
    now = owners(after)
    return sum(1 for tp, owner in owners(before).items() if now.get(tp) != owner)


def their_assignment(result) -> dict[str, dict[str, list[int]]]:
    return {m: dict(a.assigned_partitions) for m, a in result.items()}


def run_baseline(case: Case, function: Callable[[], object], runs: int, limit_s: float) -> object:
    """The median of `runs` runs of kafka-python's assignor, each stopped after `limit_s`."""
    def expire(signum, frame):
        raise BaselineTimeout()

    previous = signal.signal(signal.SIGALRM, expire)
    result = None
    try:
        for _ in range(runs):
            signal.setitimer(signal.ITIMER_REAL, limit_s)
            try:
                ms, result = timed(function)
            except BaselineTimeout:
                case.theirs_timed_out = True
                return None
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            case.theirs_ms.append(ms)
    finally:
        signal.signal(signal.SIGALRM, previous)
    return result


def measure(name: str, args, counts: dict[str, int]) -> Case:
    case = Case(name)
    rng = random.Random(args.seed)
    topics = sorted(counts)
    ids = [f"member-{i:04d}" for i in range(args.members)]
    if name == "uniform-heterogeneous":
        low, high = min(20, len(topics)), min(30, len(topics))
        subscriptions = {m: frozenset(rng.sample(topics, rng.randint(low, high))) for m in ids}
    else:
        subscriptions = {m: frozenset(topics) for m in ids}
    assignor = RangeAssignor() if name == "range" else UniformAssignor()
    spec = GroupSpec({m: MemberSpec(subscriptions[m]) for m in ids}, counts)
    previous = None
    if name == "uniform-join":
        previous = assignor.assign(spec)
        subscriptions[JOINER] = frozenset(topics)
        case.spec_ms, spec = timed(lambda: GroupSpec(
            {**{m: MemberSpec(subscriptions[m], previous[m]) for m in ids}, JOINER: MemberSpec(subscriptions[JOINER])},
            counts))

    assignor.assign(spec)  # warm-up
    result = None
    for _ in range(args.runs):
        ms, result = timed(lambda: assignor.assign(spec))
        case.ours_ms.append(ms)
    case.problems = check(spec, result)

    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
    from kafka.coordinator.assignors.sticky.user_data import StickyAssignorUserData
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

    members = []
    for member_id in spec.members:
        user_data = b""
        if previous is not None and member_id in previous:
            user_data = StickyAssignorUserData(
                previous_assignment=[(t, sorted(ps)) for t, ps in sorted(previous[member_id].items())], generation=1)
        subscription = ConsumerProtocolSubscription(0, sorted(subscriptions[member_id]), user_data)
        members.append(Member(member_id, None, subscription))
    cluster = Cluster(counts)
    if name == "range":
        theirs = run_baseline(case, lambda: RangePartitionAssignor.assign(cluster, members), args.baseline_runs,
                              args.baseline_max_s)
    else:
        theirs = run_baseline(case, lambda: StickyPartitionAssignor().assign(cluster, members), args.baseline_runs,
                              args.baseline_max_s)
    if previous is not None:
        case.moved = (moved(previous, result), None if theirs is None else moved(previous, their_assignment(theirs)))
    return case


def ratio_text(ours: float, theirs: float) -> str:
    """ours / theirs: "0.12", or "1/20,000" when ours is the far smaller."""
    return f"{ours / theirs:.2f}" if ours * 10 >= theirs else f"1/{theirs / ours:,.0f}"


def report(cases: list[Case], args) -> None:
    total = args.topics * args.partitions
    print(f"{args.members:,} members, {args.topics} topics x {args.partitions:,} partitions = {total:,} partitions; "
          f"ours: median of {args.runs} runs; kafka-python: median of {args.baseline_runs}")
    print(f"{'case':<24} {'ours ms':>9} {'(min-max)':>15} {'kafka-python ms':>16} {'ours/theirs':>12} "
          f"{'target ms':>10} {'moved ours/theirs':>18}")
    for case in cases:
        ours = statistics.median(case.ours_ms)
        span = f"({min(case.ours_ms):.1f}-{max(case.ours_ms):.1f})"
        if case.theirs_timed_out:
            theirs, ratio = f"> {args.baseline_max_s * 1000:,.0f}", "< " + ratio_text(ours, args.baseline_max_s * 1000)
        else:
            median = statistics.median(case.theirs_ms)
            theirs, ratio = f"{median:,.0f}", ratio_text(ours, median)
        target = TARGET_MS.get(case.name)
        target_text = "" if target is None else f"<= {target}" + (" met" if ours <= target else " MISSED")
        moved_text = "" if case.moved is None else f"{case.moved[0]} / {'-' if case.moved[1] is None else case.moved[1]}"
        print(f"{case.name:<24} {ours:>9.1f} {span:>15} {theirs:>16} {ratio:>12} {target_text:>10} {moved_text:>18}")
    for case in cases:
        if case.spec_ms is not None:
            print(f"({case.name}: building the GroupSpec from the previous assignment took {case.spec_ms:.1f} ms more)")
        for problem in case.problems:
            print(f"INVALID {case.name}: {problem}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--members", type=int, default=1000)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--partitions", type=int, default=1000, help="partitions per topic")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline-runs", type=int, default=1)
    parser.add_argument("--baseline-max-s", type=float, default=180.0, help="stop a kafka-python run after this")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    args = parser.parse_args()
    counts = {f"topic-{t:02d}": args.partitions for t in range(args.topics)}
    cases = []
    for name in args.cases:
        print(f"measuring {name} ...", file=sys.stderr, flush=True)
        cases.append(measure(name, args, counts))
    report(cases, args)
    return 1 if any(case.problems for case in cases) else 0


if __name__ == "__main__":
    sys.exit(main())
