"""Synthetic lag histories in the lag dataset's format (docs/lag-and-rebalances.md, "Recording
lag"), deterministic for a seed.

    python -m bench.lag_history --out DIR [--rows 1000000] [--groups 200] [--partitions 8] [--seed 1]

Writes `DIR/date=YYYY-MM-DD/hour=HH/part-<first ts>-<pid>-<round>.jsonl`, one file per sampling
round (every group's rows of that round), rounds a minute apart, groups sampled a few
milliseconds apart within a round, as `groupctl lag record` does. Rounds = rows / (partitions of
the groups recorded from the start); groups that start late add a few rows, so the total is
close to `rows`, not exact.

Groups alternate between two clusters ("prod", "staging") under the same names, and each group
gets one behaviour, whose change (its onset) is placed relative to the end of the history, so
every status shows at the evaluation time (the last round) whatever the length, given a history
of a few windows (`window`, default 10):

- healthy: the consumer keeps up, a small backlog, often none (OK);
- slow: from onset (>= one window before the end) it consumes less than is produced (WARN);
- stalled: members stay, but some partitions' offsets stop moving (STALL);
- stopped: the consumer was a little behind, then the group went Empty and the producer kept
  going; onset more than a window before the end (STOP);
- died-caught-up: the consumer was caught up at every round (lag 0), then the group went Empty
  and the producer kept going; onset more than a window before the end (STOP, though the
  window still holds its zero-lag commits);
- rewound: an offset reset backwards a few rounds before the end, then catching up (REWIND);
- rewound-recovered: the same, long enough ago for the rewind to leave the window (OK);
- idle: the producer stopped, the consumer caught up, and for half of these groups left (OK: no
  false STOP);
- new: the group started recording less than a window before the end, its first commits a
  round or two after (incomplete windows, rows with committed null).

Noise: about one row in a thousand has `log_end` null (its leader could not be asked).
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

START_MS = 1_763_700_000_000  # 2025-11-21T04:40:00Z
ROUND_MS = 60_000
GROUP_STAGGER_MS = 7
WRITER_PID = 4242
CLUSTERS = ("prod", "staging")
BEHAVIOURS = {  # behaviour -> weight
    "healthy": 36, "slow": 12, "stalled": 8, "stopped": 8, "died-caught-up": 8, "rewound": 8,
    "rewound-recovered": 6, "idle": 10, "new": 12,
}
NULL_LOG_END_CHANCE = 0.001


@dataclass
class Partition:
    """One partition's producer and consumer, advanced one round at a time."""
    behaviour: str
    rng: random.Random
    produce: int            # mean messages produced per round
    onset: int              # the round the behaviour's change happens
    first_commit: int       # the first round with a committed offset
    stalls: bool            # for a stalled group: whether this partition is one that stalls
    log_end: int
    committed: int

    def advance(self, round_no: int) -> None:
        after = round_no >= self.onset
        spread = self.produce // 5
        produced = self.produce + self.rng.randint(-spread, spread)
        if self.behaviour == "idle" and after:
            produced = 0
        self.log_end += produced

        if after and (self.behaviour in ("stopped", "died-caught-up") or (self.behaviour == "stalled" and self.stalls)):
            return  # the offset stops moving
        if self.behaviour == "died-caught-up":
            self.committed = self.log_end
            return
        if self.behaviour == "slow" and after:
            self.committed = min(self.log_end, self.committed + self.produce * 6 // 10)
            return
        if self.behaviour in ("rewound", "rewound-recovered") and round_no == self.onset:
            self.committed = max(0, self.committed - self.produce * self.rng.randint(10, 50))
            return
        if self.behaviour in ("rewound", "rewound-recovered") and after:
            self.committed = min(self.log_end, self.committed + self.produce * 3 // 2)
            return
        if self.behaviour == "idle" and after:
            self.committed = self.log_end
            return
        # keeping up: a small backlog, none about a third of the time (a stopping group is never
        # quite caught up, so its last window has no zero-lag entry)
        caught_up = self.rng.random() < 0.3 and self.behaviour != "stopped"
        backlog = 0 if caught_up else self.rng.randint(1, self.produce // 4 + 1)
        self.committed = max(self.committed, self.log_end - backlog)


@dataclass
class Group:
    name: str
    members: int
    first_round: int
    leaves_at: Optional[int]  # the round from which the group is Empty, if it empties
    partitions: list[Partition]
    key_json: list[str]       # per partition: the encoded cluster/group/topic/partition fields

    def membership(self, round_no: int) -> tuple[int, str]:
        if self.leaves_at is not None and round_no >= self.leaves_at:
            return 0, "Empty"
        return self.members, "Stable"


def onset_span(behaviour: str, window: int) -> Optional[tuple[int, int]]:
    """How many rounds before the end a behaviour's change may happen (None: it never does)."""
    return {
        "slow": (window, 3 * window),                 # the whole window is slow
        "stalled": (window, 3 * window),              # the whole window is stuck
        "stopped": (window + 2, 3 * window),          # stopped for longer than the window's span
        "died-caught-up": (window + 2, 3 * window),
        "rewound": (2, window - 2),                   # the rewind is inside the window
        "rewound-recovered": (2 * window, 4 * window),  # ... and has left it
        "idle": (2 * window, 4 * window),
    }.get(behaviour)


def _window_offset(rng: random.Random, rounds: int, low: int, high: int) -> int:
    """A round `low`..`high` rounds before the end (clamped to the history)."""
    return max(0, rounds - rng.randint(low, high))


def choose_behaviours(groups: int, seed: int) -> list[str]:
    chooser = random.Random(f"{seed}/behaviours")
    names, weights = zip(*BEHAVIOURS.items())
    return [chooser.choices(names, weights)[0] for _ in range(groups)]


def plan_groups(behaviours: list[str], rounds: int, partitions: int, seed: int, window: int) -> list[Group]:
    planned = []
    for index, behaviour in enumerate(behaviours):
        cluster = CLUSTERS[index % len(CLUSTERS)]
        name = f"app-{index // len(CLUSTERS):04d}"
        topic = f"events-{index // len(CLUSTERS) % 50:02d}"
        rng = random.Random(f"{seed}/{cluster}/{name}")
        span = onset_span(behaviour, window)
        onset = _window_offset(rng, rounds, *span) if span else rounds
        first_round = _window_offset(rng, rounds, 1, window - 1) if behaviour == "new" else 0
        leaves_at = onset if behaviour in ("stopped", "died-caught-up") else None
        if behaviour == "idle" and rng.random() < 0.5:
            leaves_at = min(rounds, onset + window)
        members = rng.randint(1, min(partitions, 4))
        stalled_one = rng.randrange(partitions)
        group_partitions = []
        key_json = []
        for number in range(partitions):
            produce = rng.randint(20, 400)
            log_end = rng.randint(0, 10**9)
            group_partitions.append(Partition(
                behaviour=behaviour, rng=random.Random(f"{seed}/{cluster}/{name}/{number}"), produce=produce,
                onset=onset, first_commit=first_round + (rng.randint(0, 2) if behaviour == "new" else 0),
                stalls=number == stalled_one or rng.random() < 0.5,
                log_end=log_end, committed=log_end - rng.randint(0, produce)))
            key_json.append(f'"cluster":{json.dumps(cluster)},"group":{json.dumps(name)},'
                            f'"topic":{json.dumps(topic)},"partition":{number}')
        planned.append(Group(name, members, first_round, leaves_at, group_partitions, key_json))
    return planned


def _round_lines(groups: list[Group], round_no: int, round_ts: int, noise: random.Random) -> list[str]:
    lines = []
    for index, group in enumerate(groups):
        ts = round_ts + index * GROUP_STAGGER_MS
        members, state = group.membership(round_no)
        for number, (partition, key) in enumerate(zip(group.partitions, group.key_json)):
            partition.advance(round_no)
            if round_no < group.first_round:
                continue
            committed = partition.committed if round_no >= partition.first_commit else "null"
            log_end = "null" if noise.random() < NULL_LOG_END_CHANCE else partition.log_end
            owner = json.dumps(f"{group.name}-c{number % members}") if members else "null"
            lines.append(f'{{"v":1,"ts":{ts},{key},"committed":{committed},"log_end":{log_end},'
                         f'"state":"{state}","members":{members},"owner":{owner}}}\n')
    return lines


def generate(out: Path, *, rows: int, groups: int, partitions: int, seed: int, window: int = 10) -> int:
    """Write the dataset under `out` (created); the number of rows written."""
    behaviours = choose_behaviours(groups, seed)
    recorded_throughout = max(1, sum(1 for behaviour in behaviours if behaviour != "new"))
    rounds = max(1, rows // (recorded_throughout * partitions))
    planned = plan_groups(behaviours, rounds, partitions, seed, window)
    noise = random.Random(f"{seed}/noise")
    written = 0
    for round_no in range(rounds):
        round_ts = START_MS + round_no * ROUND_MS + noise.randint(0, 500)
        lines = _round_lines(planned, round_no, round_ts, noise)
        if not lines:
            continue
        moment = datetime.fromtimestamp(round_ts / 1000, tz=timezone.utc)
        directory = out / f"date={moment:%Y-%m-%d}" / f"hour={moment:%H}"
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"part-{round_ts}-{WRITER_PID}-{round_no}.jsonl").write_text("".join(lines))
        written += len(lines)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--groups", type=int, default=200)
    parser.add_argument("--partitions", type=int, default=8, help="partitions per group")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--window", type=int, default=10, help="the evaluation window the behaviours target")
    args = parser.parse_args()
    written = generate(args.out, rows=args.rows, groups=args.groups, partitions=args.partitions,
                       seed=args.seed, window=args.window)
    print(f"{written} rows written under {args.out}")


if __name__ == "__main__":
    main()
