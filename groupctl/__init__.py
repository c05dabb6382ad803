"""groupctl: Kafka-style consumer-group coordination and the operator toolkit around it."""

__version__ = "0.1.0"
