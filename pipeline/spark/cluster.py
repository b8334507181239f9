"""A standalone Spark cluster on this machine: a master and workers through pyspark's own
``bin/spark-class``, bound to 127.0.0.1.

    python -m dotr.pipeline.spark.cluster --example fire     # start, run an example on it, stop
    python -m dotr.pipeline.spark.cluster                    # start and keep running (prints the master URL)

From Python, ``with standalone_cluster() as url: ...`` (the tests use it).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Iterator


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spark_class() -> str:
    import pyspark

    return str(Path(pyspark.__file__).parent / "bin" / "spark-class")


def _alive_workers(ui_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as response:
            return int(json.load(response).get("aliveworkers", 0))
    except OSError:
        return 0


@contextlib.contextmanager
def standalone_cluster(workers: int = 2, cores: int = 1, memory: str = "2g", timeout: float = 90) -> Iterator[str]:
    """Start a master and ``workers`` workers (``cores`` cores each); yield the master URL; stop
    them all on exit."""
    port, ui_port = _free_port(), _free_port()
    scratch = Path(tempfile.mkdtemp(prefix="dotr-cluster-"))
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable,
           "SPARK_LOG_DIR": str(scratch / "logs"), "SPARK_WORKER_DIR": str(scratch / "work"),
           "SPARK_NO_DAEMONIZE": "1"}
    url = f"spark://127.0.0.1:{port}"
    processes: list[subprocess.Popen] = []

    def start(*args: str, log: str) -> None:
        out = open(scratch / f"{log}.log", "w")
        processes.append(subprocess.Popen([_spark_class(), *args], env=env, stdout=out, stderr=subprocess.STDOUT))

    try:
        start("org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
              "--webui-port", str(ui_port), log="master")
        for i in range(workers):
            start("org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1", "--cores", str(cores),
                  "--memory", memory, "--webui-port", str(_free_port()), "--work-dir", str(scratch / f"work{i}"),
                  log=f"worker{i}")
        deadline = time.monotonic() + timeout
        while _alive_workers(ui_port) < workers:
            if time.monotonic() > deadline or any(p.poll() is not None for p in processes):
                logs = "\n".join((scratch / f).read_text()[-2000:] for f in os.listdir(scratch) if f.endswith(".log"))
                raise RuntimeError(f"the standalone cluster did not start:\n{logs}")
            time.sleep(0.5)
        yield url
    finally:
        for p in processes:
            p.terminate()
        for p in processes:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dotr.pipeline.spark.cluster", description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cores", type=int, default=1, help="cores per worker")
    parser.add_argument("--example", help="run examples/NAME on the cluster, print its output, stop")
    args = parser.parse_args(argv)
    with standalone_cluster(args.workers, args.cores) as url:
        print(f"master: {url}", file=sys.stderr, flush=True)
        if not args.example:
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                return 0
        folder = Path("examples") / args.example
        return subprocess.call(["dotr", "run", "--engine", "spark", "--master", url, "--rules", str(folder / "rules.dotr"),
                                "--ontology", str(folder / "ontology.ttl"), "--input", str(folder / "stream.jsonl")])


if __name__ == "__main__":
    sys.exit(main())
