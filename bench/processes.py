"""Starting the servers a benchmark compares, as child processes it alone owns and ends."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BANNER = re.compile(r"bootstrap\.servers=\S+:(\d+)")


class Child:
    def __init__(self, argv: list[str], ready: re.Pattern | None = None) -> None:
        self.proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        for _ in range(200):
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{argv[:4]} exited before it was ready")
            match = ready.search(line) if ready else re.match(r"(\d+)", line)
            if match:
                self.port = int(match.group(1))
                return
        raise RuntimeError(f"{argv[:4]} printed no port")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)


def echo_server() -> Child:
    return Child([sys.executable, str(ROOT / "bench" / "echo_server.py")])


def coordinator(*args: str) -> Child:
    return Child([sys.executable, "-m", "groupctl", "coordinator", "run", "--port", "0",
                  "--initial-rebalance-delay-ms", "0", "--log-level", "warning", *args], BANNER)
