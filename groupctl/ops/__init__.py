"""The operator library behind the `groupctl` CLI: use cases that return data, never print.

Every function takes its connection parameters explicitly (bootstrap servers, ZooKeeper connect
string, timeouts), returns frozen dataclasses whose `to_json()` gives the documented, stable
JSON keys, and raises `groupctl.errors.OpsError` subclasses for expected failures (each
carrying its exit status). The transports are `groupctl.client`'s. Modules:

- `groups`: find the coordinator; list, describe and delete groups.
- `lag`: committed offset, log end and lag per partition.
- `offsets`: show, commit, delete, export and import committed offsets; run resets.
- `offsets_many`: the same for several groups at once (`--group`, `--all-groups`).
- `offsets_copy`: copy one group's committed offsets to another, on one cluster or two.
- `reset`: the pure reset planner (scopes, targets, date parsing).
- `plan_csv`: offset plans as CSV, kafka-consumer-groups.sh's 3- and 4-column forms.
- `durations`: the one duration grammar (`30m`, `1h30m`, ISO-8601 `PT1H`).
- `documents`: a stored group document as the tools read it.
- `zk`: ZooKeeper inspection (group documents, the legacy 0.8 layout, a group's coordinator).
- `cluster`: a coordinator cluster's nodes, group-partition leaders and load, from ZooKeeper.
- `rebalance`: trigger and watch rebalances.
- `users`, `acls`: SCRAM credentials and Kafka ACLs, through a node or ZooKeeper.
- `contexts`: named sets of settings (`groupctl config`), kept in the user's config file.
- `lag_record`, `lag_schedule`, `lag_dataset`: `lag record`'s sampling round, its fixed-cadence
  loop, and the date/hour JSON Lines dataset it appends to.

Startup cost: the CLI imports ops modules inside the commands that use them, never at start-up.
"""
