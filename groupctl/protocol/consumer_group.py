"""The consumer group protocol's message classes (KIP-848): ConsumerGroupHeartbeat (68) and
ConsumerGroupDescribe (69), versions 0-1.

kafka-python 3.0.12 knows their API keys but bundles no schemas; these are compiled from
`consumer_group_schemas/` by kafka-python's own machinery, so framing, flexible headers, nullable
structs and uuids behave exactly as for the APIs it bundles (a zero uuid decodes as None).
`groupctl.protocol.schemas` imports this module, so `request_class(68)` finds them. They are
advertised in ApiVersions only by the handlers that implement them.
"""

from __future__ import annotations

from kafka.protocol.api_message import ApiMessage

from groupctl.protocol import consumer_group_schemas

HEARTBEAT_KEY = 68
DESCRIBE_KEY = 69


class ConsumerGroupHeartbeatRequest(ApiMessage, load_json=consumer_group_schemas):
    pass


class ConsumerGroupHeartbeatResponse(ApiMessage, load_json=consumer_group_schemas):
    pass


class ConsumerGroupDescribeRequest(ApiMessage, load_json=consumer_group_schemas):
    pass


class ConsumerGroupDescribeResponse(ApiMessage, load_json=consumer_group_schemas):
    pass
