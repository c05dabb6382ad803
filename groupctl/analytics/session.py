"""The SparkSession every analysis runs in, and the one-line answer when PySpark is missing.

- A local master (`local`, `local[N]`, `local[*]`) gets a loopback-only driver: it binds
  127.0.0.1 and runs no web UI. Any other master URL (`spark://...`, `yarn`, `k8s://...`) is passed
  through with only the settings every session gets (logging, UTC session time zone, no console
  progress bar: groupctl draws its own, see `progress`), so the cluster's networking applies.
- Quiet: the driver logs only fatal errors (`log4j2.properties`), and the JVM's stderr is filtered
  of the notices every Spark 4 JVM prints at start (JVM_NOTICES), so `analyze` prints nothing it
  was not asked for. A failure reaches the caller as a Python exception.
- A session already running in the process is reused.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from importlib import resources
from typing import TYPE_CHECKING, Mapping, Optional

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"
INSTALL_HINT = "pip install 'groupctl[spark]'"
JVM_NOTICES = (
    b"WARNING: Using incubator modules",  # the JVM, about the vector module Spark 4 loads
    b"Setting default log level to",  # Spark's shell notice (the level is set right after start)
    b"To adjust logging level use sc.setLogLevel",
)
"""Lines a Spark driver JVM prints at every start that say nothing to an operator."""


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
    try:
        session = _start(master, app_name, settings)
    except Exception:  # py4j/JVM start-up failures surface as generic exceptions
        if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
            raise PySparkMissing("Spark needs Java 17 or later, and there is no `java` on the PATH "
                                 "(nor JAVA_HOME)") from None
        raise
    session.sparkContext.setLogLevel("FATAL")
    return session


def _start(master: str, app_name: str, settings: Mapping[str, str]) -> "SparkSession":
    """The running session, or a new one whose JVM's stderr is filtered."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    if SparkContext._active_spark_context is not None:
        return SparkSession.builder.getOrCreate()
    conf = SparkConf().setMaster(master).setAppName(app_name).setAll(list(settings.items()))
    gateway = launch_gateway(conf, popen_kwargs={"stderr": subprocess.PIPE})
    threading.Thread(target=_forward_jvm_stderr, args=(gateway.proc.stderr,), daemon=True,
                     name="spark-jvm-stderr").start()
    return SparkSession(SparkContext(conf=conf, gateway=gateway))


def _forward_jvm_stderr(stream) -> None:
    """Copy the JVM's stderr to ours, line by line, without JVM_NOTICES; ends at the JVM's exit."""
    for line in iter(stream.readline, b""):
        if not line.startswith(JVM_NOTICES):
            os.write(2, line)


def _local_cores(master: str) -> int:
    """Cores of a local master: local -> 1, local[N] -> N, local[*] -> this machine's."""
    inside = master[len("local["):-1] if master.startswith("local[") else "1"
    if inside.startswith("*") or not inside.split(",")[0].isdigit():
        return os.cpu_count() or 1
    return max(1, int(inside.split(",")[0]))
