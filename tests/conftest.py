"""Shared fixtures. Sections are owned by the areas that need them."""

from __future__ import annotations

import os
import uuid

import pytest

from tests.support import zookeeper as zk_support


# -- Contexts --------------------------------------------------------------------------------


@pytest.fixture(scope="session", autouse=True)
def no_personal_contexts(tmp_path_factory):
    """No test reads the contexts of whoever runs the tests (`groupctl config`, under
    $XDG_CONFIG_HOME or ~/.config): a current context there would give commands a bootstrap
    or ZooKeeper the tests did not choose. Subprocesses inherit the empty directory."""
    patch = pytest.MonkeyPatch()
    patch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg-config")))
    patch.delenv("GROUPCTL_CONTEXT", raising=False)
    yield
    patch.undo()


# -- ZooKeeper -------------------------------------------------------------------------------
# A real standalone ZooKeeper (Debian's package) for the whole session; each test gets its own
# chroot. Missing ZooKeeper is a skip on a workstation and a failure in CI (CI=true).


def _require_zookeeper() -> None:
    reason = zk_support.unavailable_reason()
    if reason is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"ZooKeeper is required in CI but cannot be started: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def zookeeper(tmp_path_factory):
    """A running standalone ZooKeeper; `.connect` is "127.0.0.1:PORT"."""
    _require_zookeeper()
    server = zk_support.ZooKeeperServer(tmp_path_factory.mktemp("zookeeper")).start()
    yield server
    server.stop()


@pytest.fixture
def zk_connect(zookeeper) -> str:
    """A connect string with a chroot of this test's own: "127.0.0.1:PORT/t-<uuid>"."""
    return f"{zookeeper.connect}/t-{uuid.uuid4().hex}"


@pytest.fixture
def zookeeper_ensemble(tmp_path):
    """A fresh 3-node ensemble for one test (tests that kill servers)."""
    _require_zookeeper()
    ensemble = zk_support.ZooKeeperEnsemble(tmp_path / "ensemble").start()
    yield ensemble
    ensemble.stop()


# -- Spark --------------------------------------------------------------------------------------
# One real local SparkSession (local[2], loopback, quiet) for the whole run, shared by the
# analytics and analyze CLI tests. Missing PySpark or Java is a skip on a workstation and a
# failure in CI (CI=true), like a missing ZooKeeper.


@pytest.fixture(scope="session")
def spark():
    from groupctl.analytics.session import PySparkMissing, require_pyspark, spark_session

    try:
        require_pyspark()
        session = spark_session("local[2]", app_name="groupctl-tests",
                                conf={"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2"})
    except PySparkMissing as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"PySpark is required in CI: {exc}")
        pytest.skip(str(exc))
    yield session
    session.stop()


# -- Coordinators and client tools ---------------------------------------------------------------
pytest_plugins = ["tests.support.fixtures"]
