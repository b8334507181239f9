"""A Spark session configured for dotr's streaming jobs.

Small shuffles, no UI, no console progress bar and reused Python workers: a small stateful query
takes seconds instead of tens of seconds with Spark's defaults; JVMs that compile with C1 only
leave the cores to the Python workers; checkpoints renamed without starting processes (all
measured, docs/performance.md).
Workers run this interpreter (``PYSPARK_PYTHON``), in which dotr is installed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from pathlib import Path

DEFAULTS = {
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.python.worker.reuse": "true",
    "spark.sql.streaming.stopGracefullyOnShutdown": "true",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.executorEnv.PYTHONWARNINGS": "ignore::FutureWarning",  # pandas, inside pyspark's worker
    # the JVM mostly moves bytes between the Python steps: its quick compiler suffices, and the
    # optimising one took 5.4 s of CPU during an 11 s query on two cores (docs/performance.md)
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1",
    "spark.executor.extraJavaOptions": "-XX:TieredStopAtLevel=1",
    # checkpoints (offsets, commits, state store, file sink log) renamed through Hadoop's
    # FileSystem, not its FileContext: on a local disk without Hadoop's native library (pip's
    # pyspark has none) FileContext starts a `readlink` process two or three times per rename,
    # about 190 processes in a 1M-triple run (docs/performance.md). Both rename atomically on a
    # local disk and on HDFS.
    "spark.sql.streaming.checkpointFileManagerClass":
        "org.apache.spark.sql.execution.streaming.checkpointing.FileSystemBasedCheckpointFileManager",
}


def spark_session(master: str | None = "local[2]", app: str = "dotr", config: dict | None = None,
                  defaults: dict | None = None, log: str | Path | None = None):
    """The active session if there is one, else a new one for ``master`` (``local[N]``,
    ``spark://host:port``; None: the one spark-submit gives): ``DEFAULTS`` overridden by
    ``config``. Under ``spark-submit``, what its ``--conf`` or ``spark-defaults.conf`` set for a
    key stays (``config`` still wins; ``defaults`` only change ``DEFAULTS``). ``log``: a file
    that gets what the JVM this starts (and its Python workers) print, and py4j's messages,
    instead of the terminal."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app)
    if master is not None:
        builder = builder.master(master)
    given = _submitted_settings()
    chosen = {**DEFAULTS, **(defaults or {})}
    for key, value in {**{k: v for k, v in chosen.items() if k not in given}, **(config or {})}.items():
        builder = builder.config(key, value)
    if log is None:
        spark = builder.getOrCreate()
    else:
        with _stderr_to(log):  # (the JVM starts here and keeps this standard error)
            spark = builder.getOrCreate()
        handler = logging.FileHandler(log)
        for name in ("py4j", "pyspark"):
            logger = logging.getLogger(name)
            logger.addHandler(handler)
            logger.propagate = False
    spark.sparkContext.setLogLevel("ERROR")
    return spark


@contextlib.contextmanager
def _stderr_to(path: str | Path):
    """Standard error (the file descriptor, which child processes inherit) goes to ``path``."""
    sys.stderr.flush()
    saved = os.dup(2)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o644)
    try:
        os.dup2(fd, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)


def _submitted_settings() -> set[str]:
    """The keys ``spark-submit`` set for this driver (its JVM runs already and holds them), or
    none when this process starts its own JVM."""
    if "PYSPARK_GATEWAY_PORT" not in os.environ:  # set by spark-submit for a Python driver
        return set()
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()
    return {key for key, _ in SparkConf().getAll()}
