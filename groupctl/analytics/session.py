"""The SparkSession every analysis runs in, and the one-line answer when PySpark is missing.

A local master (`local`, `local[N]`, `local[*]`) gets a quiet loopback-only driver: it binds
127.0.0.1, runs no web UI and no console progress bar (groupctl draws its own, see `progress`),
and logs only errors, to stderr. Any other master URL (`spark://...`, `yarn`, `k8s://...`) is
passed through untouched, with only the logging settings, so the cluster's own networking applies.
"""

from __future__ import annotations

import os
from importlib import resources
from typing import TYPE_CHECKING, Mapping, Optional

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"
INSTALL_HINT = "pip install 'groupctl[spark]'"


class PySparkMissing(RuntimeError):
    """PySpark (or the JVM it needs) is not available."""


def require_pyspark() -> None:
    """Raise PySparkMissing, saying how to install it, when PySpark cannot be imported."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise PySparkMissing(f"PySpark is not installed; install the spark extra: {INSTALL_HINT}") from None


def is_local(master: str) -> bool:
    return master == "local" or master.startswith("local[")


def spark_session(master: str = DEFAULT_MASTER, *, app_name: str = "groupctl",
                  conf: Optional[Mapping[str, str]] = None) -> "SparkSession":
    """A SparkSession on `master` (created, or the running one of this process reused)."""
    require_pyspark()
    from pyspark.sql import SparkSession

    log4j = resources.files("groupctl.analytics").joinpath("log4j2.properties")
    settings = {
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{log4j}",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.execution.pythonUDF.arrow.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
    }
    if is_local(master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        settings.update({
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": str(_local_cores(master) * 2),
        })
    settings.update(conf or {})
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        session = builder.getOrCreate()
    except Exception as exc:  # py4j/JVM start-up failures surface as generic exceptions
        if "JAVA_HOME" in str(exc) or "Java gateway" in str(exc):
            raise PySparkMissing(f"Spark could not start a JVM (Java 17+ is required): {exc}") from None
        raise
    session.sparkContext.setLogLevel("ERROR")
    return session


def _local_cores(master: str) -> int:
    """Cores of a local master: local -> 1, local[N] -> N, local[*] -> this machine's."""
    inside = master[len("local["):-1] if master.startswith("local[") else "1"
    if inside.startswith("*") or not inside.split(",")[0].isdigit():
        return os.cpu_count() or 1
    return max(1, int(inside.split(",")[0]))
