"""The installed `groupctl` against a silent listener (accepts connections, never answers): the
global `--timeout MS` bounds every network wait, so a command fails within the timeout plus a
small margin (interpreter start-up included), with one line and exit 1 — for Kafka commands and
for ZooKeeper ones, from the option, the environment, a command config or a context."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.support.fixtures import require

TIMEOUT_MS = 1500
MARGIN_S = 2.0  # start-up, connecting, closing; the default bounds (8 s, 6 s) are far above
EARLY_S = 0.1  # a command must not give up before its bound


class SilentListener:
    """127.0.0.1:PORT accepting every connection and never writing a byte (a hung broker)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.address = f"127.0.0.1:{self.sock.getsockname()[1]}"
        self._held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        deadline = time.monotonic() + 600  # bounded, however a test ends
        while not self._stop.is_set() and time.monotonic() < deadline:
            try:
                connection, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self._held.append(connection)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        for connection in self._held:
            connection.close()
        self.sock.close()


@pytest.fixture
def silent():
    listener = SilentListener()
    yield listener
    listener.close()


@pytest.fixture
def groupctl(tmp_path):
    """Run the installed command with no GROUPCTL_* variables and an empty config home."""
    found = shutil.which("groupctl") or str(Path(sys.executable).parent / "groupctl")
    require("the installed groupctl command", os.access(found, os.X_OK), "pip install -e . into the venv")
    base = {k: v for k, v in os.environ.items() if not k.startswith("GROUPCTL_")}
    base["XDG_CONFIG_HOME"] = str(tmp_path / "xdg")

    def run(*args: str, env: dict | None = None) -> tuple[subprocess.CompletedProcess, float]:
        started = time.monotonic()
        done = subprocess.run([found, *args], env={**base, **(env or {})}, capture_output=True, text=True,
                              timeout=30, stdin=subprocess.DEVNULL)
        return done, time.monotonic() - started

    return run


def assert_timed_out_in_one_line(done: subprocess.CompletedProcess, elapsed: float, bound_s: float,
                                 *fragments: str) -> None:
    lines = done.stderr.splitlines()
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    assert len(lines) == 1 and lines[0].startswith("groupctl: error: "), done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    assert bound_s - EARLY_S < elapsed < bound_s + MARGIN_S, (elapsed, lines[0])


@pytest.mark.parametrize("command", [["group", "list"], ["group", "describe", "g"], ["offsets", "show", "g"]])
def test_a_silent_bootstrap_fails_within_the_timeout(groupctl, silent, command):
    done, elapsed = groupctl("--timeout", str(TIMEOUT_MS), "--bootstrap", silent.address, *command)
    assert_timed_out_in_one_line(done, elapsed, TIMEOUT_MS / 1000,
                                 f"cannot reach bootstrap {silent.address} within 1.5s: timed out")


def test_the_timeout_after_the_command_and_from_the_environment_bound_it_too(groupctl, silent):
    done, elapsed = groupctl("group", "list", "--bootstrap", silent.address, "--timeout", str(TIMEOUT_MS))
    assert_timed_out_in_one_line(done, elapsed, TIMEOUT_MS / 1000, "within 1.5s")
    done, elapsed = groupctl("group", "list", "--bootstrap", silent.address, env={"GROUPCTL_TIMEOUT_MS": "1500"})
    assert_timed_out_in_one_line(done, elapsed, TIMEOUT_MS / 1000, "within 1.5s")


def test_a_silent_zookeeper_fails_within_the_timeout(groupctl, silent):
    done, elapsed = groupctl("--timeout", str(TIMEOUT_MS), "--zk", silent.address, "zk", "ls", "/")
    assert_timed_out_in_one_line(done, elapsed, TIMEOUT_MS / 1000,
                                 f"cannot reach ZooKeeper at {silent.address} within 1.5s")


def test_a_command_configs_request_timeout_bounds_it_when_no_timeout_is_given(groupctl, silent, tmp_path):
    config = tmp_path / "client.properties"
    config.write_text("request.timeout.ms=1500\ndefault.api.timeout.ms=60000\n")
    done, elapsed = groupctl("--command-config", str(config), "--bootstrap", silent.address, "group", "list")
    assert_timed_out_in_one_line(done, elapsed, 1.5, "within 1.5s")
    config.write_text("request.timeout.ms=30000\n")
    done, elapsed = groupctl("--timeout", "1500", "--command-config", str(config), "--bootstrap", silent.address,
                             "group", "list")
    assert_timed_out_in_one_line(done, elapsed, 1.5, "within 1.5s")


def test_a_contexts_timeout_bounds_it(groupctl, silent):
    done, _ = groupctl("config", "set-context", "hung", "--bootstrap", silent.address, "--timeout", "1500")
    assert done.returncode == 0, done.stderr
    done, elapsed = groupctl("--context", "hung", "offsets", "show", "g")
    assert_timed_out_in_one_line(done, elapsed, 1.5, f"cannot reach bootstrap {silent.address} within 1.5s")


@pytest.mark.parametrize("command", [
    ["members", "simulate", "--group", "g", "--count", "1", "--topic", "orders"],
    ["kafka-consumer-groups", "--bootstrap-server", "{address}", "--describe", "--all-groups"],
    ["offsets", "reset", "--all-groups", "--all-topics", "--to-earliest"]])
def test_other_commands_reaching_a_silent_bootstrap_fail_within_the_timeout_too(groupctl, silent, command):
    done, elapsed = groupctl("--timeout", str(TIMEOUT_MS), "--bootstrap", silent.address,
                             *[arg.format(address=silent.address) for arg in command])
    assert_timed_out_in_one_line(done, elapsed, TIMEOUT_MS / 1000, "within 1.5s")
