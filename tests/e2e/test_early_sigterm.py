"""SIGTERM that reaches `groupctl coordinator run` while it starts, before its ready line: the node
abandons the start and shuts down as cleanly as after it, exit status 0, and closes its ZooKeeper
session, so its ephemeral registration goes at once rather than when the session expires.

The start is held open deterministically: a second node id is registered (by the test's own
ZooKeeper session, as a node that never claims anything), so the starting node, once
registered, waits the claim grace for that node's preferred group partitions before it says it
is ready."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from kazoo.client import KazooClient

from groupctl.layout.brokers import BrokerRegistration
from groupctl.store.zookeeper import split_connect
from tests.support.polling import wait_until

pytestmark = pytest.mark.zookeeper

SESSION_TIMEOUT_S = 10


def test_sigterm_while_starting_closes_the_zookeeper_session_and_exits_0(zk_connect, tmp_path):
    hosts, chroot = split_connect(zk_connect)
    zk = KazooClient(hosts=hosts, timeout=10)
    zk.start(timeout=10)
    node = None
    try:
        stalled = BrokerRegistration(node_id=2, host="127.0.0.1", port=1, started_at_ms=0)
        zk.create(f"{chroot}/brokers/ids/2", stalled.encode(), ephemeral=True, makepath=True)
        node = subprocess.Popen(
            [sys.executable, "-m", "groupctl", "coordinator", "run", "--port", "0", "--node-id", "1",
             "--zk", zk_connect, "--zk-session-timeout-s", str(SESSION_TIMEOUT_S),
             "--data-dir", str(tmp_path / "data")],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        registration = f"{chroot}/brokers/ids/1"
        wait_until(lambda: zk.exists(registration) is not None, 30, interval=0.02,
                   message="the starting node registered")
        node.send_signal(signal.SIGTERM)
        assert node.wait(15) == 0
        # Well inside the session timeout: the session was closed, not left to expire.
        wait_until(lambda: zk.exists(registration) is None, 2, interval=0.05, message="the registration gone")
        assert "ready" not in node.stdout.read()  # it was stopped while starting
    finally:
        if node is not None and node.poll() is None:
            node.kill()
            node.wait(10)
        if node is not None:
            node.stdout.close()
        zk.stop()
        zk.close()
