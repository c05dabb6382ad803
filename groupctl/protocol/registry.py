"""The API registry: which Kafka APIs this node serves, at which versions, and by which handler.

Handlers register with `@api(key=..., versions=(lo, hi))`. The registry is the only source of
the ApiVersions response, and the server refuses any (key, version) not registered here, whatever
kafka-python's schema classes could decode (they accept every version down to 0).

Importing `groupctl.server.handlers` registers every handler; this module imports nothing of
the server, so the CLI can read the registry cheaply for docs and tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from groupctl.protocol import schemas

Handler = Callable[[Any, Any], Awaitable[Any]]
"""`async def handle(ctx: RequestContext, request) -> response | None` (None: no response,
as for Produce with acks=0)."""


@dataclass(frozen=True)
class ApiSpec:
    key: int
    min_version: int
    max_version: int
    handler: Handler
    request_class: type

    @property
    def name(self) -> str:
        return self.request_class.name.removesuffix("Request")

    def supports(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version


REGISTRY: dict[int, ApiSpec] = {}


def api(*, key: int, versions: tuple[int, int]) -> Callable[[Handler], Handler]:
    """Register `handler` for API `key` at versions `lo..hi` inclusive.

    The range must lie within what kafka-python's schema for that API defines; registering a
    key twice is a programming error.
    """
    lo, hi = versions

    def register(handler: Handler) -> Handler:
        request_class = schemas.request_class(key)
        schema_lo, schema_hi = request_class.valid_versions
        if not (schema_lo <= lo <= hi <= schema_hi):
            raise ValueError(
                f"API {key} versions {lo}-{hi} outside the schema's {schema_lo}-{schema_hi}"
            )
        if key in REGISTRY:
            raise ValueError(f"API {key} registered twice")
        REGISTRY[key] = ApiSpec(key, lo, hi, handler, request_class)
        return handler

    return register
