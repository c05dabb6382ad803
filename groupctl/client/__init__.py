"""The transports the operator tools use, below the use cases in `groupctl.ops`:

- `kafka`: a small synchronous Kafka protocol client over kafka-python's message classes
  (connections, pipelined calls, retries towards a moving coordinator).
- `kafka_apis`: the Kafka APIs the tools call (request builders, response parsers, coordinator
  lookup).
- `zookeeper`: one bounded ZooKeeper session (reads, pipelined reads, a data watch handed over to
  the caller's thread).
- `kafka_import`: kafka-python's protocol layer without its heavy package `__init__`s.

Failures are `groupctl.errors` (Unreachable, Unsupported, BadInput, OpsError), which the CLI maps
to exit statuses. Importing this package registers kafka-python lazily (`kafka_import`), so a
command that only describes a group pays ~40 ms of imports instead of ~100 ms, provided nothing
imported `kafka` before.
"""

from groupctl.client import kafka_import  # noqa: F401  (before any kafka import; see its docstring)
