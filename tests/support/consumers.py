"""Test-side handles on consumer processes (`consumer_proc.py`) and a line-reading thread each."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class ConsumerProcess:
    def __init__(self, client: str, bootstrap: str, group: str, topic: str, *, client_id: str,
                 session_timeout_ms: int = 6000, max_seconds: float = 120,
                 debug_log: Path | None = None, report_commits: bool = False,
                 request_timeout_ms: int | None = None, group_protocol: str = "classic") -> None:
        self.client_id = client_id
        extra = ["--debug-log", str(debug_log)] if debug_log is not None else []
        extra += ["--report-commits"] if report_commits else []
        extra += ["--request-timeout-ms", str(request_timeout_ms)] if request_timeout_ms is not None else []
        extra += ["--group-protocol", group_protocol]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.consumer_proc", client, bootstrap, group, topic,
             "--client-id", client_id, "--session-timeout-ms", str(session_timeout_ms),
             "--max-seconds", str(max_seconds), *extra],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        self.events: "queue.Queue[dict]" = queue.Queue()
        self.assignment: list[tuple[str, int]] = []  # what it owns now (assigned less revoked or lost)
        self.revoked: list[tuple[str, int]] = []  # every partition it was told to give up, in order
        self.lost: list[tuple[str, int]] = []
        self.records: list[tuple[str, int, int, str]] = []
        self.commits: list[tuple[str, int, int]] = []  # acknowledged (topic, partition, offset), with report_commits
        self.failed_commits: list[str] = []  # the error of each failed commit, with report_commits
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            event = json.loads(line)
            with self._lock:
                if event["event"] == "assigned":  # the whole assignment (eager) or what is added (incremental)
                    self.assignment = sorted(set(self.assignment) | {tuple(p) for p in event["partitions"]})
                elif event["event"] in ("revoked", "lost"):
                    gone = [tuple(p) for p in event["partitions"]]
                    (self.revoked if event["event"] == "revoked" else self.lost).extend(gone)
                    self.assignment = sorted(set(self.assignment) - set(gone))
                elif event["event"] == "committed":
                    self.commits.extend(tuple(o) for o in event["offsets"])
                elif event["event"] == "commit_failed":
                    self.failed_commits.append(event["error"])
                else:
                    self.records.extend(tuple(r) for r in event["records"])
            self.events.put(event)

    def snapshot(self) -> tuple[list, list]:
        with self._lock:
            return list(self.assignment), list(self.records)

    def acknowledged(self) -> dict[tuple[str, int], int]:
        """(topic, partition) -> the highest offset whose commit the coordinator acknowledged."""
        with self._lock:
            commits = list(self.commits)
        highest: dict[tuple[str, int], int] = {}
        for topic, partition, offset in commits:
            highest[(topic, partition)] = max(offset, highest.get((topic, partition), -1))
        return highest

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()
