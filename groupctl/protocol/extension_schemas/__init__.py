"""JSON message schemas of groupctl's extension APIs (loaded by `groupctl.protocol.extensions`).

Same format as Apache Kafka's message schemas (and kafka-python's bundled copies), so
kafka-python's generated codecs handle them like any other API.
"""
