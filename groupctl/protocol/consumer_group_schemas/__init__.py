"""JSON message schemas of the consumer group protocol's APIs (KIP-848), which kafka-python
3.0.12 does not bundle: ConsumerGroupHeartbeat (68) and ConsumerGroupDescribe (69), versions 0-1,
written from Apache Kafka's message definitions (field names, types and versions match; the
wire is what Kafka 4 clients send). Loaded by `groupctl.protocol.consumer_group`.
"""
