"""The operator library behind the `groupctl` CLI: functions that return data, never print.

Every function takes its connection parameters explicitly (bootstrap servers, ZooKeeper connect
string, timeouts), returns frozen dataclasses whose `to_json()` gives the documented, stable
JSON keys, and raises `groupctl.ops.errors.OpsError` subclasses for expected failures (each
carrying its exit status). Modules:

- `errors`: NotFound, Refused, Unreachable, Timeout, Unsupported (exit 1), BadInput (exit 2).
- `kafka_client`: a small synchronous Kafka protocol client over kafka-python's message classes.
- `kafka_apis`: the Kafka APIs the tools call (request builders and response parsers).
- `groups`: find the coordinator; list, describe and delete groups.
- `lag`: committed offset, log end and lag per partition.
- `offsets`: show, commit, delete, export and import committed offsets; run resets.
- `reset`: the pure reset planner (scopes, targets, CSV plans, date and duration parsing).
- `zk`: ZooKeeper inspection (group documents, the legacy 0.8 layout, a group's coordinator).
- `cluster`: a coordinator cluster's nodes, group-partition leaders and load, from ZooKeeper.
- `rebalance`: trigger and watch rebalances.
- `lag_record`, `lag_schedule`, `lag_dataset`: `lag record`'s sampling round, its fixed-cadence
  loop, and the date/hour JSON Lines dataset it appends to.

Startup cost: the CLI imports ops modules inside the commands that use them, never at start-up.
Importing this package registers kafka-python without running its heavy package `__init__`s
(see `kafka_import`), so `group describe` pays ~40 ms of imports instead of ~100 ms — provided
nothing imported `kafka` before: import ops before any other groupctl module that uses kafka.
"""

from groupctl.ops import kafka_import  # noqa: F401  (before any kafka import; see its docstring)
