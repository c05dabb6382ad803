"""SaslAuthenticate (36), v0-2: the SASL mechanism's tokens, wrapped in Kafka requests (KIP-152).

On a SASL listener, before authentication, the connection answers it itself
(`groupctl.server.sasl`). This handler answers everywhere else, as Apache Kafka's request
handler does: ILLEGAL_SASL_STATE.

Version notes: v1 adds `session_lifetime_ms` (KIP-368 re-authentication; groupctl answers 0:
no re-authentication); v2 is flexible.
"""

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api


@api(key=36, versions=(0, 2))
async def handle_sasl_authenticate(ctx, request):
    return ctx.respond(error_code=ErrorCode.ILLEGAL_SASL_STATE,
                       error_message="SaslAuthenticate is only answered while a SASL listener authenticates "
                       "a new connection", auth_bytes=b"", session_lifetime_ms=0)
