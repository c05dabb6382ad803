"""Random corruption of a request frame, for property tests of hand-written decoders."""

from __future__ import annotations

from hypothesis import strategies as st

FIXED_PREFIX = 8  # api key, api version, correlation id: the dispatcher reads these itself


def corrupt(frame: bytes, data: st.DataObject) -> bytes:
    """`frame` with 1-4 bytes set, inserted or deleted somewhere past the fixed header prefix."""
    body = bytearray(frame)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(FIXED_PREFIX, len(body)))
        action = data.draw(st.sampled_from(["set", "insert", "delete"]))
        if action == "set" and at < len(body):
            body[at] = data.draw(st.integers(0, 255))
        elif action == "insert":
            body[at:at] = data.draw(st.binary(min_size=1, max_size=4))
        elif at < len(body):
            del body[at]
    return bytes(body)
