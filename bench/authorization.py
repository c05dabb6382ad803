"""What Kafka's ACL authorizer costs on the heartbeat path: off (no `--authorizer`) against on.

    python -m bench.authorization [--connections 50] [--depth 16] [--seconds 1.5] [--runs 5] [--calls 200000]

1. In process: the Heartbeat handler called directly (the core replaced by an immediate answer,
   so the handler's own work is all that is timed), per call: without an authorizer, with one
   whose decision is cached (the steady state: ACLs change rarely), and the decision alone
   uncached over 1,000 ACLs. Also the cost of the one check the handler makes without an
   authorizer (`ctx.authorizer is not None`).
2. Over the wire: Heartbeat v3 throughput of three coordinators side by side, as in
   coordinator_throughput.py (N connections, each the single member of its group): no
   authorizer; `--authorizer --allow-everyone-if-no-acl-found` with no ACLs; and the same with
   1,000 ACLs on other groups plus a prefixed Allow for the benchmark's groups. The three run at
   once and are measured in turn, run after run, so the machine's other load falls on all alike.
Prints medians and the ratio against the authorizer-off figure measured in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import timeit

from bench import processes
from bench.coordinator_throughput import TOPIC, PARTITIONS, member_frames, median_rate
from kafka.protocol.consumer.group import HeartbeatRequest

from groupctl.coordinator.classic.messages import HeartbeatResult
from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.schemas import response_class
from groupctl.security.acls import AccessControlEntry, Operation, PatternType, Permission, ResourcePattern, ResourceType
from groupctl.security.rules import Acls, Authorizer
from groupctl.server.context import RequestContext
from groupctl.server.handlers.heartbeat import handle_heartbeat

ANONYMOUS = "User:ANONYMOUS"


class _Node:
    async def call_groups(self, op):
        return HeartbeatResult(ErrorCode.NONE)


def thousand_acls() -> Acls:
    acls = Acls()
    for i in range(1000):
        acls.replace(ResourcePattern(ResourceType.GROUP, f"other-{i}"),
                     [AccessControlEntry(f"User:u{i}", "*", Operation.READ, Permission.ALLOW)])
    acls.replace(ResourcePattern(ResourceType.GROUP, "bench-", PatternType.PREFIXED),
                 [AccessControlEntry(ANONYMOUS, "*", Operation.READ, Permission.ALLOW)])
    return acls


def handler_ns(authorizer, calls: int) -> float:
    ctx = RequestContext(node=_Node(), api_key=12, version=3, correlation_id=1, client_id="bench",
                         client_host="/127.0.0.1", response_class=response_class(12)[3], authorizer=authorizer)
    body = HeartbeatRequest[3](group_id="bench-heartbeat-1", generation_id=1, member_id="m", group_instance_id=None)

    def one() -> None:
        coro = handle_heartbeat(ctx, body)
        try:
            coro.send(None)
        except StopIteration:
            pass

    return statistics.median(timeit.repeat(one, number=calls, repeat=5)) / calls * 1e9


def in_process(calls: int) -> None:
    rules = Authorizer(thousand_acls())
    off = handler_ns(None, calls)
    on = handler_ns(rules, calls)  # what NodeAuthorizer.authorize is
    ctx = RequestContext(node=None, api_key=12, version=3, correlation_id=1, client_id="", client_host="",
                         response_class=object)
    check = (statistics.median(timeit.repeat(lambda: ctx.authorizer is not None, number=calls, repeat=5))
             - statistics.median(timeit.repeat(lambda: None, number=calls, repeat=5))) / calls * 1e9
    started = time.perf_counter()
    for i in range(calls // 10):
        rules._decide(ANONYMOUS, "127.0.0.1", Operation.READ, ResourceType.GROUP, f"bench-{i}")
    uncached = (time.perf_counter() - started) / (calls // 10) * 1e9
    print("in process, ns per Heartbeat handler call (median of 5 x {:,} calls)".format(calls))
    print(f"  authorizer off                 {off:8.0f}")
    print(f"  authorizer on, decision cached {on:8.0f}   ratio {on / off:.2f}")
    print(f"  the check made when off        {check:8.0f}   ({check / off:.1%} of the call)")
    print(f"  one decision uncached, 1,001 ACLs {uncached:5.0f}")


def over_the_wire(connections: int, depth: int, seconds: float, runs: int) -> None:
    from groupctl.ops.acls import AclOptions, add_acls

    configs = {
        "off": (),
        "on, no ACLs": ("--authorizer", "--allow-everyone-if-no-acl-found"),
        "on, 1,001 ACLs": ("--authorizer", "--allow-everyone-if-no-acl-found"),
    }
    nodes = {name: processes.coordinator("--topic", f"{TOPIC}:{PARTITIONS}", *flags) for name, flags in configs.items()}
    try:
        bootstrap = f"127.0.0.1:{nodes['on, 1,001 ACLs'].port}"
        for i in range(0, 1000, 100):  # one CreateAcls per 100 groups
            add_acls(AclOptions(groups=[f"other-{j}" for j in range(i, i + 100)], allow_principals=["User:someone"],
                                operations=["Read"]), bootstrap=bootstrap)
        add_acls(AclOptions(groups=["bench-"], pattern_type="prefixed", allow_principals=[ANONYMOUS],
                            operations=["Read"]), bootstrap=bootstrap)
        frames = {name: asyncio.run(member_frames(node.port, connections, "heartbeat")) for name, node in nodes.items()}
        samples: dict[str, dict[int, list[float]]] = {name: {1: [], depth: []} for name in nodes}
        for _ in range(runs):  # round-robin, so that the machine's other load hits every node alike
            for d in (1, depth):
                for name, node in nodes.items():
                    samples[name][d].append(median_rate(node.port, frames[name], d, seconds, 1))
    finally:
        for node in nodes.values():
            node.stop()
    rates = {name: {d: statistics.median(values) for d, values in by_depth.items()}
             for name, by_depth in samples.items()}
    print(f"\nover the wire, Heartbeat v3 requests/s ({connections} connections, median of {runs} x {seconds}s, "
          "nodes measured in turn)")
    print(f"  {'authorizer':<16} {'one-at-a-time':>14} {'ratio':>6} {f'pipelined x{depth}':>14} {'ratio':>6}")
    for name, by_depth in rates.items():
        one, piped = by_depth[1], by_depth[depth]
        print(f"  {name:<16} {one:>14,.0f} {one / rates['off'][1]:>6.2f} {piped:>14,.0f} "
              f"{piped / rates['off'][depth]:>6.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--depth", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=1.5)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=200_000)
    args = parser.parse_args()
    in_process(args.calls)
    over_the_wire(args.connections, args.depth, args.seconds, args.runs)


if __name__ == "__main__":
    main()
