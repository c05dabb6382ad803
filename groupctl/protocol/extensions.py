"""groupctl's extension APIs: message classes shared by the coordinator and the operator tools.

Two API keys outside Apache Kafka's range, advertised in ApiVersions only by groupctl
coordinators (other Kafka clients ignore keys they do not know):

- 32000 GroupctlDescribeGroup {group_id, after_generation, max_wait_ms} ->
  {throttle_time_ms, error_code, document}: the stored group document (JSON, docs/zookeeper-layout.md),
  long-polling until the generation passes `after_generation` or `max_wait_ms` elapses. It is
  how `group describe` shows the generation and `rebalance watch` follows rebalances with
  `--bootstrap` alone, whatever the coordinator's store.
- 32001 GroupctlTriggerRebalance {group_id, reason} -> {throttle_time_ms, error_code,
  error_message}: start the group's next rebalance.

The schemas live in `extension_schemas/` in Apache Kafka's JSON format and are compiled by
kafka-python's own machinery, so framing, headers (flexible: request header v2, response header
v1) and codecs behave exactly as for the standard APIs. `groupctl.protocol.schemas` imports this
module, so `request_class(32000)` finds these classes like any other.
"""

from __future__ import annotations

from kafka.protocol.api_message import ApiMessage

from groupctl.protocol import extension_schemas

DESCRIBE_GROUP_KEY = 32000
TRIGGER_REBALANCE_KEY = 32001


class GroupctlDescribeGroupRequest(ApiMessage, load_json=extension_schemas):
    pass


class GroupctlDescribeGroupResponse(ApiMessage, load_json=extension_schemas):
    pass


class GroupctlTriggerRebalanceRequest(ApiMessage, load_json=extension_schemas):
    pass


class GroupctlTriggerRebalanceResponse(ApiMessage, load_json=extension_schemas):
    pass
