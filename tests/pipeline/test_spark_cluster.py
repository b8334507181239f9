"""The Spark job survives a kill -9 (restarted from its checkpoint: nothing lost, nothing
duplicated), runs under spark-submit, and runs on a two-worker standalone cluster with the
embedded pipeline's output."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from dotr.pipeline.spark.cluster import standalone_cluster

from .spark_inputs import EXAMPLES, ROOT, example_output, files, publish, stream

pytestmark = pytest.mark.spark


def _wait(predicate, timeout: float, what: str, process=None) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the job exited ({process.returncode}) before {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def test_a_killed_query_continues_from_its_checkpoint(spark, tmp_path):
    temps = [50, 60, 120, 130, 160, 90, 40, 1, 1, 110, 150, 155, 20, 30, 99, 100]
    lines = [json.dumps({"t": t, "facts": [f"temp({temps[t % len(temps)]})"]}) for t in range(40)]
    for t in range(24):
        publish(tmp_path / "in", f"{t:04d}.jsonl", [lines[t]])
    rules, ontologies = files("cooling")
    command = [sys.executable, str(ROOT / "pipeline/spark/submit.py"), "--master", "local[2]", "--rules", rules,
               "--ontology", ontologies[0], "--input", str(tmp_path / "in"), "--sink", str(tmp_path / "out"),
               "--checkpoint", str(tmp_path / "checkpoint"), "--max-files-per-trigger", "1"]
    commits = tmp_path / "checkpoint" / "commits"
    with open(tmp_path / "first.log", "w") as log:
        first = subprocess.Popen([*command, "--trigger", "200 milliseconds"], stdout=log, stderr=log,
                                 start_new_session=True)
        try:
            _wait(lambda: commits.exists() and len([f for f in os.listdir(commits) if f.isdigit()]) >= 5,
                  180, "five committed micro-batches", first)
        finally:
            os.killpg(first.pid, signal.SIGKILL)  # no polite stop: the driver and its JVM die
            first.wait()
    done = len([f for f in os.listdir(commits) if f.isdigit()])
    assert done < 24, "the query must die mid-stream"
    for t in range(24, 40):
        publish(tmp_path / "in", f"{t:04d}.jsonl", [lines[t]])
    with open(tmp_path / "second.log", "w") as log:
        assert subprocess.run([*command, "--trigger", "available-now"], stdout=log, stderr=log, timeout=300
                              ).returncode == 0
    written = [row.value for row in spark.read.text(str(tmp_path / "out")).collect()]  # committed files only
    assert sorted(written, key=lambda s: json.loads(s)["t"]) == example_output("cooling", lines)


def test_spark_submit_runs_the_job_and_keeps_its_conf(spark, tmp_path):
    """``spark-submit pipeline/spark/submit.py`` (pyspark's own ``bin/spark-submit``) writes the
    embedded pipeline's output, and a setting given with ``--conf`` stays as given: dotr's
    defaults fill only the keys left unset (the offset log records the shuffle partitions)."""
    import pyspark

    publish(tmp_path / "in", "stream.jsonl", stream("fire"))
    rules, ontologies = files("fire")
    submit = os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-submit")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    command = [submit, "--master", "local[2]", "--conf", "spark.sql.shuffle.partitions=3",
               str(ROOT / "pipeline/spark/submit.py"), "--rules", rules, "--ontology", ontologies[0],
               "--input", str(tmp_path / "in"), "--sink", str(tmp_path / "out"), "--checkpoint", str(tmp_path / "ck")]
    with open(tmp_path / "submit.log", "w") as log:
        code = subprocess.run(command, env=env, stdout=log, stderr=log, timeout=300).returncode
    assert code == 0, (tmp_path / "submit.log").read_text()[-3000:]
    written = [row.value for row in spark.read.text(str(tmp_path / "out")).collect()]
    assert sorted(written, key=lambda s: json.loads(s)["t"]) == example_output("fire", stream("fire"))
    offsets = (tmp_path / "ck" / "offsets" / "0").read_text()
    assert '"spark.sql.shuffle.partitions":"3"' in offsets, offsets


CLUSTER_JOB = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from dotr.pipeline.spark.session import spark_session
    from dotr.pipeline.spark.job import SparkPipeline

    master, root, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    spark = spark_session(master, config={"spark.cores.max": "2", "spark.executor.cores": "1",
                                          "spark.executor.memory": "1g"})
    for example in sys.argv[4:]:
        ex = root / "examples" / example
        job = SparkPipeline(spark, ex / "rules.dotr", [ex / "ontology.ttl"])
        records = []
        query = job.foreach(job.results(job.read_files(out / example / "in"), out / example / "changes"),
                            lambda _, b: records.extend(b), out / example / "checkpoint")
        query.awaitTermination()
        (out / f"{example}.jsonl").write_text("".join(json.dumps({k: v for k, v in r.items() if k != "kind"},
                                                                 ensure_ascii=False) + "\\n" for r in records))
    executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1  # without the driver
    assert executors == 2, f"{executors} executors"
""")


def test_every_example_on_a_two_worker_standalone_cluster(tmp_path):
    for example in EXAMPLES:
        publish(tmp_path / example / "in", "stream.jsonl", stream(example))
    (tmp_path / "job.py").write_text(CLUSTER_JOB)
    with standalone_cluster(workers=2, cores=1, memory="1g") as url:
        with open(tmp_path / "job.log", "w") as log:
            code = subprocess.run([sys.executable, str(tmp_path / "job.py"), url, str(ROOT), str(tmp_path), *EXAMPLES],
                                  stdout=log, stderr=log, timeout=600).returncode
    assert code == 0, (tmp_path / "job.log").read_text()[-3000:]
    for example in EXAMPLES:
        assert (tmp_path / f"{example}.jsonl").read_text().splitlines() == example_output(example, stream(example))
