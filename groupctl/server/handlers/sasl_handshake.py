"""SaslHandshake (17), v1 only: the first step of SASL on SASL_* listeners (KIP-152).

On a SASL listener, before authentication, the connection answers it itself
(`groupctl.server.sasl`). This handler answers everywhere else, as Apache Kafka's request
handler does: ILLEGAL_SASL_STATE (a PLAINTEXT or SSL listener, or a connection that has already
authenticated), with the mechanisms the node enables.

Version notes: v0 (raw SASL tokens after the handshake, before KIP-152) is not served; clients
that support v1 (kafka-python, librdkafka, the Java client) use it.
"""

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api


@api(key=17, versions=(1, 1))
async def handle_sasl_handshake(ctx, request):
    return ctx.respond(error_code=ErrorCode.ILLEGAL_SASL_STATE,
                       mechanisms=list(ctx.node.config.sasl_enabled_mechanisms))
