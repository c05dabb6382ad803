"""The transports the operator tools use, below the use cases in `groupctl.ops`:

- `kafka`: a small synchronous Kafka protocol client over kafka-python's message classes
  (connections, pipelined calls, bounded retries).
- `kafka_apis`: the Kafka APIs the tools call (request builders, response parsers, following a
  group's coordinator).
- `zookeeper`: one bounded ZooKeeper session (reads, pipelined reads, a data watch handed over to
  the caller's thread).
- `kafka_import`: kafka-python's protocol layer without its heavy package `__init__`s.

Failures are `groupctl.errors` (Unreachable, Unsupported, BadInput, OpsError), which the CLI maps
to exit statuses. Importing this package installs `kafka_import` first, so a command imports only
the kafka-python modules it uses, provided nothing imported `kafka` before (bench/cli_latency.py
measures start-up).
"""

from groupctl.client import kafka_import  # noqa: F401  (before any kafka import; see its docstring)
