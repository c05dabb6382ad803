"""The baseline: a bare asyncio length-prefixed echo server, the Python ceiling for one
request/response on this machine. Run as `python bench/echo_server.py` (prints its port)."""

from __future__ import annotations

import asyncio
import struct
import sys


async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            prefix = await reader.readexactly(4)
            (length,) = struct.unpack(">i", prefix)
            body = await reader.readexactly(length)
            writer.write(prefix + body)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main() -> None:
    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
