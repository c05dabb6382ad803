"""ApiVersions (18), v0-4.

Version notes: v1 adds throttle_time_ms; v3 is flexible (client software name/version in the
request, tagged features in the response). The response always uses response header v0, even at
v3+ (kafka-python's ApiVersionsResponse encodes it that way).

The answer is the registry, verbatim: an API is advertised exactly when a handler is registered,
with exactly its registered range. An unsupported ApiVersions version never reaches this handler:
the connection answers it with a v0 body and UNSUPPORTED_VERSION (see `server/connection.py`).
"""

from groupctl.protocol.registry import REGISTRY, api


@api(key=18, versions=(0, 4))
async def handle_api_versions(ctx, request):
    entry = ctx.response_class.ApiVersion
    return ctx.respond(
        error_code=0,
        api_keys=[
            entry(api_key=spec.key, min_version=spec.min_version, max_version=spec.max_version)
            for spec in sorted(REGISTRY.values(), key=lambda s: s.key)
        ],
        throttle_time_ms=0,
    )
