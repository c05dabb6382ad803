"""The operator library behind the `groupctl` CLI: functions that return data, never print.

Every function takes its connection parameters explicitly (bootstrap servers, ZooKeeper connect
string, timeouts), returns frozen dataclasses whose `to_json()` gives the documented, stable
JSON keys, and raises `groupctl.ops.errors.OpsError` subclasses for expected failures (each
carrying its exit status). Modules:

- `errors`: NotFound, Refused, Unreachable, Unsupported (exit 1) and BadInput (exit 2).
- `kafka_client`: a small synchronous Kafka protocol client over kafka-python's message classes.
- `groups`: find the coordinator; list, describe and delete groups.
- `offsets`: show, commit, delete, export and import committed offsets; run resets.
- `reset`: the pure reset planner (scopes, targets, CSV plans, date and duration parsing).
- `zk`: ZooKeeper inspection (group documents, the legacy 0.8 layout).
- `rebalance`: trigger and watch rebalances.

Importing a module that talks to Kafka costs kafka-python's protocol layer (~40 ms); the CLI
imports ops modules inside the commands that use them, never at start-up. Importing this package
first registers kafka-python without running its heavy package `__init__` (see `kafka_import`),
whatever ops module (or groupctl module it uses) imports kafka first.
"""

from groupctl.ops import kafka_import  # noqa: F401  (before any kafka import; see its docstring)
