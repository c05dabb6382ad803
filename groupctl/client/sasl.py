"""The client side of SASL (KIP-152): SaslHandshake v1, then the mechanism's tokens in
SaslAuthenticate requests. PLAIN sends `NUL user NUL password` once; SCRAM-SHA-256/512 run
RFC 5802 with scramp, and the server's final signature is checked (a server that does not know
the password cannot pretend to). SCRAM's arithmetic is `groupctl.security.scram`'s client, which
treats passwords as Kafka does (no SASLprep) and refuses a server asking too few iterations. Shared by the synchronous and the asyncio client through
`call(key, versions, build) -> response` (`authenticate`, `authenticate_async`), around one
sans-IO exchange (`exchange`, a generator of requests that is sent their responses).
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Generator

from groupctl.client.security import ClientSecurity
from groupctl.errors import AuthenticationFailed
from groupctl.security.scram import ScramClientExchange, ScramError

SASL_HANDSHAKE = 17
SASL_AUTHENTICATE = 36
UNSUPPORTED_SASL_MECHANISM = 33

Request = tuple[int, tuple[int, int], Callable[[type, int], Any]]
"""(API key, versions, build) of one request of the exchange."""


def authenticate(call: Callable[..., Any], security: ClientSecurity, where: str) -> None:
    """Run the exchange over a synchronous `call(key, versions, build) -> response`."""
    steps = exchange(security, where)
    try:
        request = next(steps)
        while True:
            request = steps.send(call(*request))
    except StopIteration:
        return


async def authenticate_async(call: Callable[..., Awaitable[Any]], security: ClientSecurity, where: str) -> None:
    """Run the exchange over an asyncio `await call(key, versions, build) -> response`."""
    steps = exchange(security, where)
    try:
        request = next(steps)
        while True:
            request = steps.send(await call(*request))
    except StopIteration:
        return


def exchange(security: ClientSecurity, where: str) -> Generator[Request, Any, None]:
    """Authenticate as `security.username`: yields each request, is sent its response;
    AuthenticationFailed when the broker refuses."""
    mechanism = security.mechanism
    handshake = yield (SASL_HANDSHAKE, (1, 1), lambda cls, version: cls(mechanism=mechanism))
    if handshake.error_code == UNSUPPORTED_SASL_MECHANISM:
        offered = ", ".join(handshake.mechanisms) or "none"
        raise AuthenticationFailed(f"{where} does not enable SASL mechanism {mechanism} (it offers {offered})")
    if handshake.error_code:
        raise AuthenticationFailed(f"{where} refused the SASL handshake ({_name(handshake.error_code)}): "
                                   "is it a SASL listener?")

    def token_request(token: bytes) -> Request:
        return SASL_AUTHENTICATE, (0, 2), lambda cls, version: cls(auth_bytes=token)

    def answer(response: Any) -> bytes:
        if response.error_code:
            reason = response.error_message or _name(response.error_code)
            raise AuthenticationFailed(f"authentication as '{security.username}' ({mechanism}) at {where} "
                                       f"failed: {reason}")
        return response.auth_bytes or b""

    username, password = security.username or "", security.password or ""
    if mechanism == "PLAIN":
        answer((yield token_request(b"\0" + username.encode() + b"\0" + password.encode())))
        return
    client = ScramClientExchange(mechanism, username, password)
    try:
        server_first = answer((yield token_request(client.client_first())))
        server_final = answer((yield token_request(client.client_final(server_first))))
        client.check_server_final(server_final)
    except ScramError as exc:
        raise AuthenticationFailed(f"SCRAM authentication as '{username}' at {where} failed: {exc}") from None


def _name(code: int) -> str:
    from groupctl.client.kafka import error_name

    return error_name(code)
