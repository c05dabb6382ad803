"""The JSON every stored document is made of, and the one error a malformed one raises."""

from __future__ import annotations

import base64
import binascii
import json
from contextlib import contextmanager
from typing import Any, Iterator, Optional

_MISSING = object()


class LayoutError(ValueError):
    """A stored document that is not what its format says; the message starts with its path."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


def encode(document: Any) -> bytes:
    """Compact JSON, as every stored document is written."""
    return json.dumps(document, separators=(",", ":")).encode()


def decode_object(path: str, data: Optional[bytes]) -> dict[str, Any]:
    """The JSON object stored at `path`."""
    try:
        document = json.loads(data or b"")
    except (ValueError, RecursionError) as exc:  # RecursionError: nesting deeper than the parser goes
        raise LayoutError(path, f"not JSON ({exc})") from None
    if not isinstance(document, dict):
        raise LayoutError(path, f"not a JSON object but {type(document).__name__}")
    return document


def read(path: str, data: Optional[bytes], newest: int) -> dict[str, Any]:
    """The JSON object stored at `path`, of a version up to `newest` (`check_version`)."""
    document = decode_object(path, data)
    check_version(path, document, newest)
    return document


def check_version(path: str, document: dict[str, Any], newest: int) -> int:
    """The document's `version` (1 when absent); LayoutError when it is newer than `newest`."""
    version = document.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise LayoutError(path, f"version {version!r} is not a positive integer")
    if version > newest:
        raise LayoutError(path, f"version {version} is newer than this groupctl reads (up to {newest}); "
                                "upgrade groupctl")
    return version


def integer(path: str, document: dict[str, Any], name: str, *, default: Any = _MISSING,
            minimum: Optional[int] = None, maximum: Optional[int] = None) -> Any:
    """The int field `name` (not a bool), within [minimum, maximum]; `default` when absent or null."""
    value = document.get(name)
    if value is None and default is not _MISSING:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise LayoutError(path, f'"{name}" must be an integer, not {value!r}')
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise LayoutError(path, f'"{name}" must be within {minimum}..{maximum}, not {value}')
    return value


def text(path: str, document: dict[str, Any], name: str, *, default: Any = _MISSING) -> Any:
    """The string field `name`; `default` when absent or null."""
    value = document.get(name)
    if value is None and default is not _MISSING:
        return default
    if not isinstance(value, str):
        raise LayoutError(path, f'"{name}" must be a string, not {value!r}')
    return value


def base64_bytes(path: str, document: dict[str, Any], name: str) -> bytes:
    """The bytes the base64 string field `name` holds."""
    value = text(path, document, name)
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise LayoutError(path, f'"{name}" is not base64: {value!r}') from None


def is_number(text: str) -> bool:
    """Whether `text` is a non-negative decimal number as stored names and keys spell one (ASCII
    digits only: str.isdigit() also accepts "²", which int() rejects)."""
    return text.isascii() and text.isdigit()


def ownership_map(path: str, value: Any) -> dict[str, dict[str, str]]:
    """The `ownership` object every group document has: topic -> {"<partition>": member id}."""
    if not isinstance(value, dict) or not all(
            isinstance(owners, dict) and all(is_number(p) and isinstance(m, str) for p, m in owners.items())
            for owners in value.values()):
        raise LayoutError(path, f'"ownership" must be an object of {{"<partition>": member id}} objects, not {value!r}')
    return value


@contextmanager
def within(path: str, where: str) -> Iterator[None]:
    """A LayoutError raised inside says where in the document its problem is."""
    try:
        yield
    except LayoutError as exc:
        raise LayoutError(path, f"{where}: {exc.problem}") from None


def strings(path: str, document: dict[str, Any], name: str) -> list[str]:
    value = document.get(name)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise LayoutError(path, f'"{name}" must be a list of strings, not {value!r}')
    return value
