"""Import kafka-python's protocol layer without running its heavy package `__init__`s.

`import kafka.protocol.x` first runs `kafka/__init__.py`, which imports the consumer, producer
and admin clients, and `kafka/protocol/{admin,consumer,producer}/__init__.py`, which define every
message class of their area: most of what `import kafka` costs. The operator tools need a dozen
message classes (`groupctl.client.kafka` imports exactly the modules that define them).
Importing this module, before anything imports `kafka`, registers those packages (LAZY_PACKAGES)
with their real spec and path but without executing their `__init__`, so submodule imports load
only what they use.

Invariant: nothing observable changes for other code in the process. The first access to any
attribute a package does not have yet (`kafka.KafkaConsumer`, `from kafka.protocol.admin import
CreateTopicsRequest`, `kafka.__version__`) runs that package's real `__init__` in the same module
object, once. When `kafka` is already imported, this module does nothing.
(`groupctl.protocol.schemas`, which walks every message class, touches each package's `__all__`
for that reason.)
"""

from __future__ import annotations

import importlib.util
import sys

LAZY_PACKAGES = ("kafka", "kafka.protocol.admin", "kafka.protocol.consumer", "kafka.protocol.producer")


def _register_without_init(name: str) -> None:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return
    module = importlib.util.module_from_spec(spec)

    def run_real_init(attribute: str):
        # PEP 562: called only for names the module does not (yet) have.
        del module.__dict__["__getattr__"]
        spec.loader.exec_module(module)
        return getattr(module, attribute)

    module.__getattr__ = run_real_init
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)


if "kafka" not in sys.modules:
    for _name in LAZY_PACKAGES:
        _register_without_init(_name)
