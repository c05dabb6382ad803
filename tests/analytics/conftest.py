"""One real local SparkSession (local[2], loopback, quiet) for the whole test run.

Missing PySpark or Java is a skip on a workstation and a failure in CI (CI=true), like a missing
ZooKeeper.
"""

from __future__ import annotations

import os

import pytest

from groupctl.analytics.session import PySparkMissing, require_pyspark, spark_session


@pytest.fixture(scope="session")
def spark():
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
