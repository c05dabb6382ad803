"""Sending hostile frames (`hostile_frames`) to a node over many connections, and counting.

Each connection writes batches: `pipeline - 1` frames the node should answer (seeds and field
changes within the schema) and one it should refuse (a broken schema, mangled bytes, an unknown
api key or version, a mutated length prefix), then a marker (a valid ApiVersions v0 request
with a correlation id no mutated frame uses), in one write, and reads answers until the
marker's comes back: then every frame of the batch was handled. A node that closes the
connection handled the frames it answered plus the one that closed it; the rest of the batch
was never read, is not counted as sent, and goes back to the budget. A frame whose length
prefix was mutated (`Mutation.ends_stream`) goes last, and the connection is half-closed after
it. An answer that does not come within `answer_timeout_s` (a parked JoinGroup, a long Fetch
wait) ends the connection, counting only the frames answered.

Every loop is bounded: by the frame budget and by the deadline.
"""

from __future__ import annotations

import asyncio
import collections
import struct
import time
from dataclasses import dataclass, field

from kafka.protocol.metadata import ApiVersionsRequest

from tests.support.hostile_frames import FrameFactory, Mutation

MARKER_ID = 0x7FFF_FFF0  # mutated frames use correlation ids below 2^30


def _marker() -> bytes:
    request = ApiVersionsRequest[0]()
    request.with_header(correlation_id=MARKER_ID, client_id="fuzz-marker")
    return bytes(request.encode(version=0, header=True, framed=True))


MARKER = _marker()


@dataclass
class Tally:
    sent: int = 0  # frames the node read and handled (answered, or closed the connection on)
    answered: int = 0  # responses to mutated frames
    closed_by_node: int = 0  # connections the node closed (a frame it refused)
    stream_enders: int = 0  # frames sent with a mutated length prefix, then half-close
    timeouts: int = 0  # connections given up waiting for an answer
    connections: int = 0
    refused: int = 0  # connections the node did not accept
    by_kind: collections.Counter = field(default_factory=collections.Counter)


class _Budget:
    def __init__(self, frames: int, deadline: float) -> None:
        self.left = frames
        self.deadline = deadline
        self.next_id = 0

    def take(self, most: int) -> int:
        if time.monotonic() >= self.deadline:
            return 0
        n = min(most, self.left)
        self.left -= n
        return n

    def correlation_id(self) -> int:
        self.next_id = (self.next_id + 1) % (1 << 30)
        return self.next_id


async def _read_answer(reader: asyncio.StreamReader, timeout: float) -> int:
    """The correlation id of the next response frame."""
    async def read() -> int:
        (length,) = struct.unpack(">i", await reader.readexactly(4))
        body = await reader.readexactly(length)
        return struct.unpack_from(">i", body)[0]
    return await asyncio.wait_for(read(), timeout)


def _count(tally: Tally, budget: _Budget, batch: list[Mutation], handled: int) -> None:
    """The first `handled` frames of `batch` were sent; the rest go back to the budget."""
    tally.sent += handled
    tally.by_kind.update(m.kind.split(":")[0] for m in batch[:handled])
    budget.left += len(batch) - handled


async def _batch(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, batch: list[Mutation],
                 tally: Tally, budget: _Budget, answer_timeout_s: float) -> bool:
    """Write `batch` and wait for what it gets; False when the connection is over."""
    if batch[-1].ends_stream:
        tally.stream_enders += 1
        _count(tally, budget, batch, len(batch))
        try:
            writer.write(b"".join(m.frame for m in batch))
            writer.write_eof()
        except OSError:  # the node closed already, on an earlier frame of the batch
            return False
        await _drain_until_closed(reader, answer_timeout_s)
        return False
    writer.write(b"".join(m.frame for m in batch) + MARKER)
    answered = 0
    try:
        while await _read_answer(reader, answer_timeout_s) != MARKER_ID:
            answered += 1
    except (asyncio.IncompleteReadError, ConnectionError):
        tally.closed_by_node += 1
        tally.answered += answered
        _count(tally, budget, batch, min(answered + 1, len(batch)))  # the answered ones, and the closer
        return False
    except asyncio.TimeoutError:
        tally.timeouts += 1
        tally.answered += answered
        _count(tally, budget, batch, answered)
        return False
    tally.answered += answered
    _count(tally, budget, batch, len(batch))
    return True


async def _connection(host: str, port: int, factory: FrameFactory, budget: _Budget, tally: Tally,
                      pipeline: int, per_connection: int, answer_timeout_s: float) -> bool:
    """One connection's life: batches of `pipeline - 1` frames the node should answer and one it
    should refuse, until it closes; False when the budget or the deadline is used up."""
    try:
        reader, writer = await asyncio.open_connection(host, port)
    except OSError:
        tally.refused += 1
        await asyncio.sleep(0.05)
        return time.monotonic() < budget.deadline
    tally.connections += 1
    try:
        for _ in range(0, per_connection, pipeline):
            n = budget.take(pipeline)
            if n == 0:
                return False
            batch = [factory.next(budget.correlation_id()) for _ in range(n - 1)]
            batch.append(factory.next(budget.correlation_id(), refused=True))
            if not await _batch(reader, writer, batch, tally, budget, answer_timeout_s):
                break
        return True
    finally:
        writer.close()


async def _drain_until_closed(reader: asyncio.StreamReader, timeout: float) -> None:
    try:
        await asyncio.wait_for(reader.read(), timeout)  # everything up to the node's close
    except (asyncio.TimeoutError, ConnectionError):
        pass


async def send(host: str, port: int, factory: FrameFactory, *, frames: int, seconds: float,
               connections: int = 32, pipeline: int = 8, per_connection: int = 400,
               answer_timeout_s: float = 2.0) -> Tally:
    """Send up to `frames` mutated frames within `seconds` over `connections` concurrent
    connections (each replaced when the node closes it or after `per_connection` frames)."""
    budget = _Budget(frames, time.monotonic() + seconds)
    tally = Tally()

    async def worker() -> None:
        while await _connection(host, port, factory, budget, tally, pipeline, per_connection, answer_timeout_s):
            pass

    await asyncio.gather(*(worker() for _ in range(connections)))
    return tally


async def warm_up(host: str, port: int, frames: list[bytes], answer_timeout_s: float = 2.0) -> None:
    """Send each of `frames` (valid ones) on a connection of its own and wait for its answer
    (a parked JoinGroup is given up after `answer_timeout_s`), so that the node has compiled
    kafka-python's codec of every API and version before its memory is measured."""
    for frame in frames:
        reader, writer = await asyncio.open_connection(host, port)
        try:
            writer.write(frame + MARKER)
            while await _read_answer(reader, answer_timeout_s) != MARKER_ID:
                pass
        except (asyncio.TimeoutError, asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()
