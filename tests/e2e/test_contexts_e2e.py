"""The installed `groupctl` reaching a real coordinator (group metadata in a real ZooKeeper) only
through a context: no --bootstrap, --zk or GROUPCTL_* variable, the config file in a temporary
XDG_CONFIG_HOME."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.consumer_groups import coordinator_with_topic
from tests.support.fixtures import require

pytestmark = pytest.mark.zookeeper


@pytest.fixture
def groupctl(tmp_path):
    found = shutil.which("groupctl") or str(Path(sys.executable).parent / "groupctl")
    require("the installed groupctl command", os.access(found, os.X_OK), "pip install -e . into the venv")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GROUPCTL_")}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg")

    def run(*args: str) -> subprocess.CompletedProcess:
        done = subprocess.run([found, *args], env=env, capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)
        assert done.returncode == 0, (args, done.returncode, done.stdout, done.stderr)
        assert "\x1b" not in done.stdout + done.stderr
        return done

    return run


def test_a_context_alone_reaches_the_coordinator_and_its_zookeeper(groupctl, zk_connect, tmp_path):
    with coordinator_with_topic(zk_connect, tmp_path / "data", "orders", 2) as node:
        groupctl("config", "set-context", "local", "--bootstrap", node.bootstrap, "--zk", zk_connect,
                 "--timeout", "5000")

        groupctl("--context", "local", "offsets", "commit", "billing", "orders:0=3", "orders:1=5")
        listed = json.loads(groupctl("--context", "local", "-o", "json", "group", "list").stdout)
        assert [g["group"] for g in listed] == ["billing"]

        groupctl("config", "use-context", "local")  # from now on no --context either
        shown = json.loads(groupctl("offsets", "show", "billing", "-o", "json").stdout)
        assert {(o["topic"], o["partition"]): o["committed_offset"] for o in shown["offsets"]} == {
            ("orders", 0): 3, ("orders", 1): 5}
        found = json.loads(groupctl("coordinator", "find", "billing", "-o", "json").stdout)  # Kafka and ZooKeeper agree
        assert found["node_id"] == 0 and "partition" in found
        assert "brokers" in groupctl("zk", "ls", "/").stdout.split()  # the context's chroot
