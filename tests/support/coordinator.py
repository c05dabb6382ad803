"""Coordinators for tests: in-process (a thread with its own event loop) and as a subprocess.

Both bind 127.0.0.1 on a free port (port 0) and are stopped by the fixture that started them;
the subprocess is ended by its own pid only.
"""

from __future__ import annotations

import asyncio
import os
import re
import select
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Optional

from groupctl.coordinator.classic.coordinator import GroupConfig
from groupctl.server.config import NodeConfig

BANNER = re.compile(r"bootstrap\.servers=(\S+)")

FAST_GROUPS = GroupConfig(initial_rebalance_delay_ms=0)


def node_config(**overrides) -> NodeConfig:
    """A node on 127.0.0.1:0 with no initial rebalance delay (tests join at once)."""
    base = NodeConfig(host="127.0.0.1", port=0, groups=FAST_GROUPS)
    return replace(base, **overrides)


class InProcessCoordinator:
    """Runs a `CoordinatorServer` on a private event loop in a daemon thread."""

    def __init__(self, config: NodeConfig, **server_options) -> None:
        from groupctl.server.server import CoordinatorServer

        self.config = config
        self.loop = asyncio.new_event_loop()
        self.server = CoordinatorServer(config, **server_options)
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True, name="coordinator")

    def start(self) -> "InProcessCoordinator":
        self._thread.start()
        self.call(self.server.start(), timeout=30)
        return self

    def call(self, coro, timeout: float = 10.0):
        """Run a coroutine on the coordinator's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    @property
    def node(self):
        return self.server.node

    @property
    def bootstrap(self) -> str:
        return self.server.bootstrap

    @property
    def port(self) -> int:
        return self.server.port

    def stop(self) -> None:
        try:
            self.call(self.server.stop(), timeout=15)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(10)


class CoordinatorProcess:
    """`python -m groupctl coordinator run` as a child process (for kill -9 and signal tests)."""

    def __init__(self, *args: str, log_path: Optional[Path] = None) -> None:
        self.args = ["--port", "0", "--initial-rebalance-delay-ms", "0", *args]
        self.log_path = log_path
        self.proc: Optional[subprocess.Popen] = None
        self.bootstrap: Optional[str] = None
        self.ready_line: Optional[str] = None  # the banner the node printed when ready

    def start(self, timeout: float = 30.0) -> "CoordinatorProcess":
        """Start the child and wait (at most `timeout` seconds, even if it hangs without a word)
        for the banner that names its bootstrap address."""
        stderr = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "groupctl", "coordinator", "run", *self.args],
            stdout=subprocess.PIPE, stderr=stderr,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        if self.log_path:
            stderr.close()  # the child holds its own descriptor
        out = self.proc.stdout.fileno()
        pending = b""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            # select + os.read, never readline: a child that prints nothing must not block us.
            readable, _, _ = select.select([out], [], [], left)
            if not readable:
                continue
            chunk = os.read(out, 65536)
            if not chunk:
                raise RuntimeError(f"coordinator exited with {self.proc.wait(5)} before it was ready")
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                match = BANNER.search(line.decode(errors="replace"))
                if match:
                    self.bootstrap = match.group(1)
                    self.ready_line = line.decode(errors="replace")
                    return self
        self.kill()
        raise RuntimeError(f"coordinator did not become ready within {timeout}s")

    @property
    def port(self) -> int:
        return int(self.bootstrap.rsplit(":", 1)[1])

    def signal(self, sig: int) -> None:
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, sig)

    def kill(self) -> None:
        self.signal(signal.SIGKILL)
        if self.proc:
            self.proc.wait(10)

    def terminate(self, timeout: float = 15.0) -> int:
        self.signal(signal.SIGTERM)
        return self.proc.wait(timeout)
