"""Coordinator and client-tool fixtures (a pytest plugin loaded by tests/conftest.py)."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.support.coordinator import InProcessCoordinator, node_config


def require(what: str, found: bool, hint: str) -> None:
    """Fail in CI, skip elsewhere, when a real component a test needs is missing."""
    if found:
        return
    message = f"{what} is not available ({hint})"
    if os.environ.get("CI") == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


@pytest.fixture
def coordinator():
    """An in-process coordinator with the in-memory embedded store."""
    node = InProcessCoordinator(node_config()).start()
    yield node
    node.stop()


@pytest.fixture
def small_frame_coordinator():
    node = InProcessCoordinator(node_config(max_frame_bytes=1024)).start()
    yield node
    node.stop()


@pytest.fixture
def zk_coordinator(zk_connect, tmp_path):
    """An in-process coordinator keeping group metadata in a real ZooKeeper (own chroot)."""
    node = InProcessCoordinator(node_config(zk=zk_connect, data_dir=tmp_path / "data")).start()
    yield node
    node.stop()


@pytest.fixture(scope="session")
def kcat():
    path = shutil.which("kcat")
    require("kcat", path is not None, "Debian package kcat; `make test` installs it as root")
    return path
