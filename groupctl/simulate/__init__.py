"""`groupctl members simulate`: hundreds or thousands of group members on one event loop against a
coordinator, to rehearse what a rebalance costs before production does.

- `simulation`: the rehearsal (start, watch, churn, stop; the Summary).
- `consumer_member`: a KIP-848 member, the asyncio driver of `groupctl.member.Member`.
- `classic_member`: a classic member (JoinGroup/SyncGroup/Heartbeat, a client-side assignor as leader).
- `link`: the coordinator and the connections members share; `context`: what members share;
  `ledger`: what they did (transitions, ownership, moves, unowned time); `rules`: what a protocol provides.
"""
