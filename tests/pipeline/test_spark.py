"""The Spark pipeline gives the embedded pipeline's output: every example, several micro-batches,
bad and late records, both file sinks, the feed source, a restored state, the command line."""

import json
import os
import pickle
import random
import shutil
import tempfile
import time
from pathlib import Path

import pandas as pd
import pytest

from dotr.ontology import OntologicalStage
from dotr.pipeline.cli import main
from dotr.pipeline.reasoner import Reasoner
from dotr.pipeline.keys import carried, split_keys
from dotr.pipeline.io import read_jsonl
from dotr.pipeline.spark.changes import ChangeLog
from dotr.pipeline.spark.job import SparkPipeline, _Worker, conclude_rows, dotr_merge, enrich_rows, result_of
from dotr.pipeline.spark.elements import split_file
from dotr.rules import check, check_text
from tests.pipeline.runs import embedded as embedded_records
from tests.pipeline.spark_inputs import EXAMPLES, ROOT, example_output, files, publish, stream

pytestmark = pytest.mark.spark


def run_job(spark, example: str, folder: Path, tmp_path: Path, changes: Path | None = None, **read) -> list[dict]:
    rules, ontologies = files(example)
    job = SparkPipeline(spark, rules, ontologies)
    out: list[dict] = []
    query = job.foreach(job.results(job.read_files(folder, **read), changes), lambda _, batch: out.extend(batch),
                        tmp_path / "checkpoint")
    query.awaitTermination()
    assert query.exception() is None
    return out


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_example_gives_the_embedded_output(spark, example, tmp_path):
    shutil.copy(ROOT / "examples" / example / "stream.jsonl", tmp_path / "stream.jsonl")
    (tmp_path / "in").mkdir()
    os.replace(tmp_path / "stream.jsonl", tmp_path / "in" / "stream.jsonl")
    out = run_job(spark, example, tmp_path / "in", tmp_path, tmp_path / "changes")
    assert all(r.pop("kind") == "result" for r in out)
    assert [json.dumps(r, ensure_ascii=False) for r in out] == example_output(example, stream(example))


def test_one_time_point_per_file_over_several_micro_batches(spark, tmp_path):
    lines = stream("cooling")
    for i, line in enumerate(lines):
        publish(tmp_path / "in", f"{i:04d}.jsonl", [line])
    out = run_job(spark, "cooling", tmp_path / "in", tmp_path, max_files_per_trigger=3)
    assert [json.dumps(r) for r in out if r.pop("kind") == "result"] == example_output("cooling", lines)


def test_bad_and_late_records_are_rejected_with_their_file_and_line(spark, tmp_path):
    lines = stream("cooling")
    publish(tmp_path / "in", "a.jsonl", lines[:6] + ['{"t": 5, "facts": ["temp(("]}', "not json"])
    publish(tmp_path / "in", "b.jsonl", ['{"t": 3, "facts": ["temp(10)"]}'] + lines[6:])
    out = run_job(spark, "cooling", tmp_path / "in", tmp_path, max_files_per_trigger=1)
    rejects = [r for r in out if r["kind"] == "reject"]
    assert [(Path(r["source"]).name if r["source"] else None, r["line"]) for r in rejects] == \
        [("a.jsonl", 7), ("a.jsonl", 8), (None, None)]
    assert "not a fact" in rejects[0]["reason"] and "time point 3 arrived after" in rejects[2]["reason"]
    results = [json.dumps(r) for r in out if r.pop("kind") == "result"]
    assert results == example_output("cooling", lines)


def test_a_program_change_is_a_bad_record_on_spark(spark, tmp_path):
    """The Spark job runs the program it started with: a record with "program" is rejected with
    its line (docs/language.md), the rest of the stream evaluated as without it."""
    lines = stream("cooling")
    change = '{"t": 5, "program": "other.dotr", "facts": ["temp(99)"]}'
    publish(tmp_path / "in", "a.jsonl", lines[:6] + [change] + lines[6:])
    out = run_job(spark, "cooling", tmp_path / "in", tmp_path)
    rejects = [r for r in out if r["kind"] == "reject"]
    assert [(r["line"], r["record"]) for r in rejects] == [(7, change)]
    assert "changes the program of an embedded run" in rejects[0]["reason"]
    assert [json.dumps(r) for r in out if r.pop("kind") == "result"] == example_output("cooling", lines)


def test_file_sinks_jsonl_and_parquet(spark, tmp_path):
    publish(tmp_path / "in", "s.jsonl", stream("cooling"))
    rules, ontologies = files("cooling")
    job = SparkPipeline(spark, rules, ontologies)
    for fmt in ("jsonl", "parquet"):
        job.write(job.results(job.read_files(tmp_path / "in")), tmp_path / fmt, tmp_path / f"ck-{fmt}", fmt
                  ).awaitTermination()
    expected = example_output("cooling", stream("cooling"))
    written = [row.value for row in spark.read.text(str(tmp_path / "jsonl")).collect()]
    assert sorted(written, key=lambda s: json.loads(s)["t"]) == expected
    rows = spark.read.parquet(str(tmp_path / "parquet")).orderBy("t").collect()
    assert [(r.t, r.facts) for r in rows] == [(json.loads(e)["t"], json.loads(e)["facts"]) for e in expected]


def test_the_parquet_sink_keeps_select_and_ask_answers(spark, tmp_path):
    """An ASK query's answer is a boolean in the record: it has a column of its own (``asks``),
    beside the SELECT queries' solutions, which a map of solution lists could not hold (the
    whole map was lost)."""
    (tmp_path / "r.dotr").write_text("""@prefix : <http://ex.org/> .
query Sel := register as select ?x from stream :s [range 2 step 1] where { ?x :p ?y } .
query Any := register as ask from stream :s [range 2 step 1] where { ?x :p :nothing } .
""")
    publish(tmp_path / "in", "s.jsonl", ['{"t": 1, "facts": [":p(:a, :b)"]}'])
    job = SparkPipeline(spark, tmp_path / "r.dotr", [])
    job.write(job.results(job.read_files(tmp_path / "in")), tmp_path / "out", tmp_path / "ck", "parquet"
              ).awaitTermination()
    (row,) = spark.read.parquet(str(tmp_path / "out")).collect()
    assert row.answers == {"Sel": [{"x": "<http://ex.org/a>"}]} and row.asks == {"Any": False}


def test_feed_source(spark, tmp_path):
    lines = stream("cooling")
    module = tmp_path / "cooling_feed.py"
    module.write_text(f"LINES = {lines!r}\n\ndef record(i):\n    return LINES[i]\n")
    spark.sparkContext.addPyFile(str(module))
    rules, ontologies = files("cooling")
    job = SparkPipeline(spark, rules, ontologies)
    out: list[dict] = []
    query = job.foreach(job.results(job.read_feed("cooling_feed:record", len(lines), per_batch=5)),
                        lambda _, batch: out.extend(batch), tmp_path / "checkpoint")
    query.awaitTermination()
    assert [json.dumps(r) for r in out if r.pop("kind") == "result"] == example_output("cooling", lines)


def test_the_command_line_runs_on_spark(spark, tmp_path):
    """... and its ``--stats`` counts what the embedded run's count (graphs in total: the
    records do not name the pattern that built each)."""
    rules, ontologies = files("fire")
    out = tmp_path / "out.jsonl"
    args = ["run", "-q", "--rules", rules, "--ontology", ontologies[0], "--input", str(ROOT / "examples/fire/stream.jsonl")]
    code = main([*args, "--engine", "spark", "--output", str(out), "--stats", str(tmp_path / "spark.json")])
    assert code == 0
    assert out.read_text() == (ROOT / "tests/pipeline/golden/fire.jsonl").read_text()
    assert main([*args, "--output", str(tmp_path / "embedded.jsonl"), "--stats", str(tmp_path / "embedded.json")]) == 0
    spark_stats, embedded = (json.loads((tmp_path / f"{name}.json").read_text()) for name in ("spark", "embedded"))
    for key in ("records", "time_points", "outputs", "rejects"):
        assert spark_stats[key] == embedded[key], key
    conclusions, expected = spark_stats["conclusions"], embedded["conclusions"]
    assert conclusions["facts"] == expected["facts"] and conclusions["events"] == expected["events"]
    assert conclusions["graphs"] == {"(patterns and queries)": sum(expected["graphs"].values())} != {}


@pytest.mark.parametrize("example", EXAMPLES)
def test_a_restored_state_continues_exactly(example, tmp_path):
    """The stateful step rebuilt from its pickled state (a new worker, or a micro-batch run again
    after a failure) continues as the live engine does. No Spark: the steps themselves."""
    rules, ontologies = files(example)
    checked = check(rules)
    from dotr.ontology.background import load_triples

    stage = OntologicalStage(checked, [t for path in ontologies for t in load_triples(path)])
    keys = split_keys(checked)
    groups = [0] if keys is None else [7, 3]  # the fire example runs split in two key groups
    bundle = pickle.dumps((checked, stage.snapshot(), {}, {"keep_empty": True, "keys": keys, "groups": groups}))
    lines = stream(example)
    elements = list(split_file("s.jsonl", "jsonl", "\n".join(lines).encode(), prefixes=checked.program.prefixes))
    times = sorted({row[2] for row in elements})
    batches = [[row for row in elements if row[2] in times[i:i + 3]] for i in range(0, len(times), 3)]
    live, outputs = _Worker(bundle), []
    reused, reused_outputs = _Worker(bundle), []
    states, reused_states = [None] * len(groups), [None] * len(groups)
    programs: dict = {}
    logs = [ChangeLog(tmp_path / name) for name in ("fresh", "reused", "live")]
    for batch in batches:  # three time points each
        rows = enrich_rows(_Worker(bundle), batch, logs[0])
        outputs += _conclude(_Worker(bundle), rows, states, logs[0])  # a fresh worker every batch
        reused.engines.clear()  # the same worker, its engines reset and restored every batch
        reused_outputs += _conclude(reused, enrich_rows(reused, batch, logs[1]), reused_states, logs[1])
        programs = programs or dict(reused._programs)  # (its groups' LARS rules: compiled once, reused)
        assert reused._programs == programs and (programs or not checked.analysis.temporal)
    continuous = _conclude(live, enrich_rows(live, elements, logs[2]), [None] * len(groups), logs[2])
    assert outputs == continuous == reused_outputs
    assert [json for _, kind, json in outputs if kind == "result"] == example_output(example, lines, keep_empty=True)


def test_carried_key_groups_restored_each_micro_batch_continue_exactly():
    """LARS rules in ms split by sensor: each group's state, with the facts it printed last, is
    restored by a fresh worker every micro-batch; the carrying merge gives the live run's and the
    embedded run's records. No Spark: the steps themselves."""
    from tests.strategies.keyed import BACKGROUND, RULES

    checked = check_text("@timeunit ms .\n" + BACKGROUND + "\n".join(r.format(w=3, c=30) for r in RULES
                                                                     if "any_hot" not in r) + "\n")
    keys = split_keys(checked)
    assert keys is not None and carried(checked)
    bundle = pickle.dumps((checked, OntologicalStage(checked, []).snapshot(), {},
                           {"keep_empty": False, "keys": keys, "groups": [7, 3], "carry": True}))
    rnd = random.Random(11)
    # (every second record is empty, so that the groups' next time points after a micro-batch
    # differ: after a record with facts, every group evaluates the next tick, when they expire)
    lines = [json.dumps({"t": t, "facts": [rnd.choice([f"temp({s},{rnd.randrange(60)})", f"smoke({s})", f"ok({s})"])
                                           for s in rnd.sample(["s1", "s2", "s3", "s5"], 2 * (i % 2 == 0))]})
             for i, t in enumerate(sorted(rnd.sample(range(150), 30)))]
    elements = list(split_file("s.jsonl", "jsonl", "\n".join(lines).encode(), prefixes=checked.program.prefixes))
    times = sorted({row[2] for row in elements})
    outputs, states = [], [None, None]
    for i in range(0, len(times), 2):
        batch = [row for row in elements if row[2] in times[i:i + 2]]
        outputs += _conclude(_Worker(bundle), enrich_rows(_Worker(bundle), batch), states)
    live = _Worker(bundle)
    assert outputs == _conclude(live, enrich_rows(live, elements), [None, None])
    records, _ = embedded_records(checked, [], lines)
    expected = [line for line in records if not result_of(json.loads(line)).is_empty()]
    assert len(expected) > 20 and [text for _, kind, text in outputs if kind == "result"] == expected


def _conclude(worker: _Worker, rows: list[tuple], states: list, log: ChangeLog | None = None) -> list[tuple]:
    """The conclude step of every key group (``states`` updated), then the merge step."""
    out = []
    for group, label in enumerate(worker.labels):
        mine = [(t, kind, payload) for t, grp, kind, payload in rows if grp == label]
        part, states[group] = conclude_rows(worker, mine, states[group], group, log)
        out += part
    if len(worker.labels) > 1:
        out = list(next(dotr_merge([pd.DataFrame(out, columns=["t", "kind", "json", "graphs"])])).itertuples(index=False, name=None))
    else:
        assert all(graphs is None for *_, graphs in out)  # in the records
        out = [row[:3] for row in out]
    return sorted(out, key=lambda row: (row[1] == "result", row[0]))


def test_patterns_split_by_key_over_two_groups_give_the_embedded_output(spark, tmp_path):
    """The DOTR-style workload (patterns joined on the room): the temporal stage runs in two key
    groups; bad and late records are still rejected once."""
    from dotr.examples.workloads.dotr_paper import program
    from dotr.examples.workloads.stream_files import write_workload

    write_workload(tmp_path, size=6_000, batch=2_000, per_point=200, terminators=0.2, rules=3)
    (tmp_path / "rules.dotr").write_text(program(rules=3))
    files = sorted((tmp_path / "in").iterdir())
    lines = [line for f in files for line in f.read_text().splitlines()]
    publish(tmp_path / "in", "zz-late.jsonl", ['{"t": 0, "facts": []}', '{"t": 99000000, "facts": ["x(("]}'])
    job = SparkPipeline(spark, tmp_path / "rules.dotr", [tmp_path / "background.nt"])
    assert len(job.groups) == 2 and job.keys == {"A": 1, "B": 1}
    out: list[dict] = []
    query = job.foreach(job.results(job.read_files(tmp_path / "in", max_files_per_trigger=1)),
                        lambda _, batch: out.extend(batch), tmp_path / "checkpoint")
    query.awaitTermination()
    rejects = [r for r in out if r["kind"] == "reject"]
    assert sorted(((Path(r["source"]).name if r["source"] else "", r["line"]) for r in rejects), key=str) == \
        [("", None), ("zz-late.jsonl", 2)]
    results = [json.dumps(r, ensure_ascii=False) for r in out if r.pop("kind") == "result"]
    reasoner = Reasoner.from_files(tmp_path / "rules.dotr", [tmp_path / "background.nt"])
    expected = [json.dumps(r.to_json(), ensure_ascii=False)
                for r in reasoner.run((r.t, r.facts, r.stream) for r in read_jsonl(lines)) if not r.is_empty()]
    assert sum(line.count("urn:dotr:match") for line in expected) > 500
    assert results == expected


def test_key_group_labels_land_on_different_partitions(spark):
    """The group column's values are chosen so that Spark's hash partitioning (as in a streaming
    query, without adaptive coalescing) gives each group its own partition: they run in parallel."""
    from dotr.pipeline.spark.job import _group_labels

    def partition_of(key, frame):
        from pyspark import TaskContext
        return pd.DataFrame({"grp": [int(key[0])], "pid": [TaskContext.get().partitionId()]})

    n = int(spark.conf.get("spark.sql.shuffle.partitions"))
    labels = _group_labels(spark, n)
    adaptive = spark.conf.get("spark.sql.adaptive.enabled")
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    try:
        frame = spark.createDataFrame([(label, i) for label in labels for i in range(3)], "grp long, x long")
        rows = frame.groupBy("grp").applyInPandas(partition_of, "grp long, pid long").collect()
    finally:
        spark.conf.set("spark.sql.adaptive.enabled", adaptive)
    assert sorted(r.pid for r in rows) == list(range(n))
    assert {r.grp: r.pid for r in rows} == {label: p for p, label in enumerate(labels)}


def test_warm_up_readies_a_python_worker_per_task_slot(spark):
    """Built, the job has restored the background in a Python worker per task slot, for the enrich
    step and every key group: the next tasks find them ready."""
    from dotr.pipeline.spark import job as spark_job

    job = SparkPipeline(spark, *files("fire"))
    slots = spark.sparkContext.defaultParallelism
    assert job.warm_up() >= slots
    name, groups = job.job, len(job.groups)

    def probe(frames):
        for _ in frames:
            pass
        worker = spark_job._WORKERS.get(name)
        ready = worker is not None and worker._enricher is not None and len(worker._stages) == groups
        yield pd.DataFrame({"pid": [os.getpid()], "ready": [ready]})

    rows = spark.range(slots, numPartitions=slots).mapInPandas(probe, "pid long, ready boolean").collect()
    assert groups == 2 and all(row.ready for row in rows)


def test_a_directory_whose_files_spark_reads_gives_the_same_output(spark, tmp_path, monkeypatch):
    """A directory that is not local (``hdfs:``, ``s3a:``, ...) has Spark read the files' content,
    which the split step splits as it is; here a local directory is taken for such a one."""
    from dotr.pipeline.spark import job as spark_job

    monkeypatch.setattr(spark_job, "_is_local", lambda path: False)
    lines = stream("cooling")
    publish(tmp_path / "in", "s.jsonl", lines[:5] + ["not json"] + lines[5:])
    out = run_job(spark, "cooling", tmp_path / "in", tmp_path)
    rejects = [r for r in out if r.pop("kind") == "reject"]
    assert [(r["line"], r["source"].endswith("s.jsonl")) for r in rejects] == [(6, True)]
    assert [json.dumps(r) for r in out if r not in rejects] == example_output("cooling", lines)


def test_the_warm_up_query_runs_once_and_the_stream_after_it_starts_afresh(spark, tmp_path):
    """The warm-up runs the query over an empty time point 0 in a scratch directory it removes;
    a stream starting at time point 0 after it gives the embedded output (the engine the warm-up
    left in the workers is not continued: its time point 0 would make the stream's late)."""
    job = SparkPipeline(spark, *files("cooling"), warm_up=False)
    scratch = set(Path(tempfile.gettempdir()).glob("dotr-warm-up-*"))
    assert job.warm_query() == 1
    assert set(Path(tempfile.gettempdir()).glob("dotr-warm-up-*")) == scratch
    lines = stream("cooling")
    publish(tmp_path / "in", "s.jsonl", lines)
    out = []
    query = job.foreach(job.results(job.read_files(tmp_path / "in")), lambda _, batch: out.extend(batch),
                        tmp_path / "checkpoint")
    query.awaitTermination()
    assert [json.dumps(r) for r in out if r.pop("kind") == "result"] == example_output("cooling", lines)


def test_a_micro_batch_run_again_after_failing_half_way_continues_exactly():
    """A conclude step that fails after some time points leaves no half-advanced engine in the
    worker: Spark's retry of the micro-batch, from the same stored state, gives the output of a
    run without the failure. No Spark: the steps themselves."""
    rules, ontologies = files("cooling")
    checked = check(rules)
    bundle = pickle.dumps((checked, OntologicalStage(checked, []).snapshot(), {},
                           {"keep_empty": True, "keys": None, "groups": [0]}))
    lines = stream("cooling")
    worker = _Worker(bundle)
    rows = [(t, kind, payload) for t, _, kind, payload in
            enrich_rows(worker, split_file("s.jsonl", "jsonl", "\n".join(lines).encode(), prefixes=checked.program.prefixes))]
    first, second = rows[:3], rows[3:]
    expected, _ = conclude_rows(_Worker(bundle), rows, None)
    out, state = conclude_rows(worker, first, None)
    broken = second[:2] + [(second[2][0], "point", b"not a pickled time point")]
    with pytest.raises(Exception):
        conclude_rows(worker, broken, state)
    again, _ = conclude_rows(worker, second, state)
    assert out + again == expected


def test_a_checkpointed_run_on_spark_keeps_its_whole_output_when_run_again(spark, tmp_path):
    rules, ontologies = files("fire")
    out = tmp_path / "out.jsonl"
    args = ["run", "-q", "--engine", "spark", "--rules", rules, "--ontology", ontologies[0], "--input",
            str(ROOT / "examples/fire/stream.jsonl"), "--output", str(out), "--checkpoint", str(tmp_path / "ck")]
    golden = (ROOT / "tests/pipeline/golden/fire.jsonl").read_text()
    assert main(args) == 0 and out.read_text() == golden
    assert main(args) == 0 and out.read_text() == golden  # finished: derived from what Spark committed


@pytest.mark.parametrize("seed", [random.randrange(10**6) for _ in range(2)])  # other moments every run
def test_killed_with_minus_9_on_spark_the_same_command_gives_the_whole_output(tmp_path, seed):
    import subprocess
    import sys
    import time

    rules, ontologies = files("cooling")
    lines = [json.dumps({"t": t, "facts": [f"temp({random.Random(t).choice([1, 50, 120, 160])})"]})
             for t in range(400)]
    folder = tmp_path / "in"
    for part in range(8):
        publish(folder, f"p{part}.jsonl", lines[part * 50:(part + 1) * 50])
    out = tmp_path / "out.jsonl"
    command = [sys.executable, "-m", "dotr", "run", "-q", "--engine", "spark", "--master", "local[1]",
               "--rules", rules, "--ontology", ontologies[0], "--input", str(folder), "--output", str(out),
               "--checkpoint", str(tmp_path / "ck"), "--full-iris"]
    proc = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE)
    time.sleep(random.Random(seed).uniform(8, 25))
    proc.kill()
    proc.wait()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert out.read_text().splitlines() == example_output("cooling", lines)


@pytest.mark.slow
def test_a_live_run_killed_then_stopped_by_sigterm_loses_nothing_and_prints_one_line(tmp_path):
    """``--trigger INTERVAL --checkpoint``: killed with -9 after its first micro-batch, started
    again with more files in the watched directory, then stopped with SIGTERM: the output holds
    every time point once (the embedded run's output), the exit code is 143, and standard error
    has the command's own lines only (Spark's output is in its log)."""
    import signal
    import subprocess
    import sys

    rules, ontologies = files("cooling")
    lines = [json.dumps({"t": t, "facts": [f"temp({random.Random(t).choice([1, 50, 120, 160])})"]})
             for t in range(400)]
    folder, out = tmp_path / "in", tmp_path / "out.jsonl"
    for part in range(4):
        publish(folder, f"p{part}.jsonl", lines[part * 50:(part + 1) * 50])
    command = [sys.executable, "-m", "dotr", "run", "-q", "--engine", "spark", "--master", "local[1]",
               "--trigger", "1 second", "--rules", rules, "--ontology", ontologies[0], "--input", str(folder),
               "--output", str(out), "--checkpoint", str(tmp_path / "ck"), "--full-iris"]

    def written() -> int:
        return len(out.read_text().splitlines()) if out.exists() else 0

    def wait_for(proc, n: int) -> None:
        deadline = time.monotonic() + 400
        while written() < n and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert written() >= n, proc.stderr.read() if proc.poll() is not None else "timed out"

    first = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    wait_for(first, 200)
    first.kill()
    first.wait()
    for part in range(4, 8):
        publish(folder, f"p{part}.jsonl", lines[part * 50:(part + 1) * 50])
    second = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    wait_for(second, 400)
    second.send_signal(signal.SIGTERM)
    assert second.wait(timeout=120) == 143
    err = second.stderr.read()
    assert err and all(line.startswith("dotr: ") for line in err.splitlines()), err
    assert out.read_text().splitlines() == example_output("cooling", lines)


def test_the_command_line_takes_spark_settings_and_shows_the_ui(tmp_path):
    import subprocess
    import sys

    rules, ontologies = files("fire")
    out = tmp_path / "out.jsonl"
    done = subprocess.run([sys.executable, "-m", "dotr", "run", "--engine", "spark", "--master", "local[1]",
                           "--conf", "spark.sql.shuffle.partitions=3", "--rules", rules, "--ontology", ontologies[0],
                           "--input", str(ROOT / "examples/fire/stream.jsonl"), "--output", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "dotr: Spark UI at http://127.0.0.1:" in done.stderr and "Spark's log in" in done.stderr
    assert out.read_text() == (ROOT / "tests/pipeline/golden/fire.jsonl").read_text()
    bad = subprocess.run([sys.executable, "-m", "dotr", "run", "--engine", "spark", "--conf", "nokey",
                          "--rules", rules], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "expected KEY=VALUE" in bad.stderr


def _split_job_gives_the_embedded_output(spark, tmp_path, rules, lines: list[str], keys: type,
                                        carry: bool = False) -> list[str]:
    """Run ``rules`` on ``lines`` (three micro-batches of six records) in two key groups of the
    kind ``keys``; assert the job's records are the embedded run's, and return those."""
    for i in range(3):
        publish(tmp_path / "in", f"{i}.jsonl", lines[i * 6:(i + 1) * 6])
    (tmp_path / "bg.ttl").write_text("")
    job = SparkPipeline(spark, rules, [tmp_path / "bg.ttl"])
    assert isinstance(job.keys, keys) and len(job.groups) == 2 and job.carry == carry
    out: list[dict] = []
    query = job.foreach(job.results(job.read_files(tmp_path / "in", max_files_per_trigger=1)),
                        lambda _, batch: out.extend(batch), tmp_path / "checkpoint")
    query.awaitTermination()
    results = [json.dumps(r, ensure_ascii=False) for r in out if r.pop("kind") == "result"]
    reasoner = Reasoner.from_files(rules, [tmp_path / "bg.ttl"])
    expected = [json.dumps(r.to_json(), ensure_ascii=False)
                for r in reasoner.run((r.t, r.facts, r.stream) for r in read_jsonl(lines)) if not r.is_empty()]
    assert results == expected
    return expected


def _dotr_run_on_spark_gives_the_embedded_output(tmp_path, rules, lines: list[str], *options: str) -> None:
    """``dotr run --engine spark`` on ``lines`` writes what ``dotr run`` writes (and something)."""
    (tmp_path / "stream.jsonl").write_text("\n".join(lines) + "\n")
    args = ["run", "-q", "--rules", str(rules), *options, "--input", str(tmp_path / "stream.jsonl")]
    assert main([*args, "--engine", "spark", "--output", str(tmp_path / "spark.jsonl")]) == 0
    assert main([*args, "--output", str(tmp_path / "embedded.jsonl")]) == 0
    assert (tmp_path / "spark.jsonl").read_text() == (tmp_path / "embedded.jsonl").read_text() != ""


@pytest.mark.parametrize("patterns, unit", [(False, "ticks"), (True, "ticks"), (True, "ms")])
def test_lars_rules_split_by_key_over_two_groups_give_the_embedded_output(spark, tmp_path, patterns, unit):
    """LARS rules keyed by sensor (windows, negation, background joins, @): the conclude step
    runs in two key groups over several micro-batches, ticks between inputs included; with
    patterns keyed by sensor and by room beside them (graphs, emitted events), also through
    ``dotr run --engine spark``. In ms, each group evaluates its own time points, and the merge
    carries each group's facts to the others' (across micro-batches too)."""
    from tests.strategies.keyed import BACKGROUND, PATTERNS, RULES
    from dotr.temporal.keys import FactKeys, JointKeys

    rules = tmp_path / "rules.dotr"
    rules.write_text(f"@timeunit {unit} .\n" + BACKGROUND + "\n".join(r.format(w=3, c=30) for r in RULES if "any_hot" not in r)
                     + "\n" + "".join(p.format(w=3) + "\n" for p in PATTERNS if patterns))
    rnd = random.Random(7)
    sensors = ["s1", "s2", "s3", "s5"]
    lines = [json.dumps({"t": t, "facts": [rnd.choice([f"temp({s},{rnd.randrange(60)})", f"smoke({s})", f"ok({s})",
                                                       f"level({rnd.randrange(5)})"]) for s in rnd.sample(sensors, 2)]})
             for t in sorted(rnd.sample(range(40), 18))]
    expected = _split_job_gives_the_embedded_output(spark, tmp_path, rules, lines, JointKeys if patterns else FactKeys,
                                                    carry=unit == "ms")
    assert len(expected) > 10
    assert not patterns or sum(len(r.get("graphs", ())) + len(r.get("events", ())) for r in map(json.loads, expected)) > 5
    if patterns:  # the same program as a user runs it: ``dotr run --engine spark`` against the embedded run
        _dotr_run_on_spark_gives_the_embedded_output(tmp_path, rules, lines, "--ontology", str(tmp_path / "bg.ttl"))


def test_epsparql_queries_split_by_key_give_the_embedded_output(spark, tmp_path):
    """EP-SPARQL queries keyed by company (sequences, an optional part over the background, a
    union): two key groups over several micro-batches, answers merged; then the same program
    through ``dotr run --engine spark`` against the embedded run."""
    from dotr.temporal.keys import QueryKeys

    rules = tmp_path / "rules.dotr"
    rules.write_text("@prefix : <http://ex.org/> .\n:r(a, n1) . :r(c, n2) .\n"
                     "query Up := select * where { ?x :p ?v } seq { { ?x :q ?w } optional { ?x :r ?y } } within 6 .\n"
                     "query Any := select ?x ?v where { { ?x :p ?v } union { ?x :q ?v } } and { ?x :p 1 } within 3 .\n")
    rnd = random.Random(3)
    lines = [json.dumps({"t": t, "facts": [f"<http://ex.org/{rnd.choice('pq')}>({rnd.choice('abcde')},{rnd.randrange(3)})"
                                           for _ in range(3)]}) for t in sorted(rnd.sample(range(40), 18))]
    expected = _split_job_gives_the_embedded_output(spark, tmp_path, rules, lines, QueryKeys)
    assert sum(len(rows) for r in map(json.loads, expected) for rows in r.get("answers", {}).values()) > 10
    _dotr_run_on_spark_gives_the_embedded_output(tmp_path, rules, lines)


#: C-SPARQL queries keyed by sensor: an aggregate grouped by it over a Datalog rule's entailments
#: in the window, a DStream joining the background, over two named streams and the default one
CSPARQL = (":hot(?s) :- :temp(?s, ?v), ?v > 1 .\n"
           "query Hot := register compute every 2 as select ?s (count(?v) as ?n) from stream :a [range 4 step 2] "
           "where { ?s a :hot ; :temp ?v } group by ?s .\n"
           "query Gone := register compute every 1 as select dstream ?s ?r from stream :b [range 3 step 1] "
           "where { ?s :temp ?v . ?s :located ?r } .\n")
#: beside them, LARS rules by sensor: each engine by its own keys (EP-SPARQL queries are not
#: split with LARS rules: pipeline.keys)
SEVERAL = "hot(S) :- [3] <> <http://ex.org/temp>(S, V), V > 1 .\nalarm(S) :- hot(S), not [2] <> ok(S) .\n"


@pytest.mark.parametrize("several, unit", [(False, "ticks"), (True, "ticks"), (True, "ms")])
def test_queries_and_engines_of_several_kinds_split_by_key_give_the_embedded_output(spark, tmp_path, several, unit):
    """C-SPARQL queries alone (WindowKeys), and with LARS rules (JointKeys; in ms the LARS facts
    carried), in two key groups over several micro-batches; then the same
    program through ``dotr run --engine spark`` against the embedded run."""
    from dotr.temporal.keys import JointKeys, WindowKeys

    rules = tmp_path / "rules.dotr"
    rules.write_text(f"@timeunit {unit} .\n@prefix : <http://ex.org/> .\n:located(s1, r1) . :located(s2, r2) . "
                     f":located(s4, r1) .\n{CSPARQL}{SEVERAL * several}")
    rnd = random.Random(4)
    lines = [json.dumps({"t": t, "facts": [f"<http://ex.org/temp>(s{rnd.randint(1, 5)},{rnd.randrange(4)})"
                                           if rnd.random() < 0.8 else f"ok(s{rnd.randint(1, 5)})"
                                           for _ in range(rnd.randint(1, 3))],
                         **({"stream": f"http://ex.org/{stream}"} if stream else {})})
             for t, stream in ((t, rnd.choice(["a", "b", None])) for t in sorted(rnd.sample(range(40), 18)))]
    expected = _split_job_gives_the_embedded_output(spark, tmp_path, rules, lines, JointKeys if several else WindowKeys,
                                                    carry=unit == "ms")
    records = [json.loads(r) for r in expected]
    assert sum(len(rows) for r in records for rows in r.get("answers", {}).values()) > 10
    assert not several or sum(len(r["facts"]) for r in records) > 10
    _dotr_run_on_spark_gives_the_embedded_output(tmp_path, rules, lines)


def test_a_live_pipe_into_spark_gives_each_time_point_as_it_comes(tmp_path):
    """``producer | dotr run --engine spark --trigger INTERVAL``: standard input is spooled into
    the watched directory a complete time point at a time; a time point's conclusions are
    printed before the producer has finished, and the whole output is the embedded run's."""
    import subprocess
    import sys

    rules, ontologies = files("cooling")
    lines = [json.dumps({"t": t, "facts": [f"temp({v})"]}) for t, v in enumerate([50, 120, 160, 170, 90, 40, 155])]
    proc = subprocess.Popen([sys.executable, "-m", "dotr", "run", "-q", "--engine", "spark", "--master",
                             "local[1]", "--trigger", "0.5 seconds", "--full-iris", "--rules", rules, "--ontology",
                             ontologies[0]],
                            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in lines[:4]:
        proc.stdin.write(line + "\n")
    proc.stdin.flush()
    import select

    if not select.select([proc.stdout], [], [], 180)[0]:  # printed while the input is still open
        proc.kill()
        pytest.fail("no time point was printed before the end of the input")
    first = proc.stdout.readline()
    assert json.loads(first)["t"] <= 2, first
    for line in lines[4:]:
        proc.stdin.write(line + "\n")
    proc.stdin.close()
    rest = proc.stdout.read()
    assert proc.wait(timeout=300) == 0, proc.stderr.read()
    assert (first + rest).splitlines() == example_output("cooling", lines)


def test_background_changes_reach_every_task_over_several_micro_batches(spark, tmp_path):
    """Sensors moved and retired mid-stream (examples/moves), one record per file, over micro-batches
    of one and three files: the job gives the embedded output. Without a change log, such records
    are rejected."""
    lines = stream("moves")
    for i, line in enumerate(lines):
        publish(tmp_path / "in", f"{i:04d}.jsonl", [line])
    for per_trigger in (1, 3):
        out = run_job(spark, "moves", tmp_path / "in", tmp_path / str(per_trigger), tmp_path / f"changes{per_trigger}",
                      max_files_per_trigger=per_trigger)
        assert [json.dumps(r) for r in out if r.pop("kind") == "result"] == example_output("moves", lines)
    out = run_job(spark, "moves", tmp_path / "in", tmp_path / "none")
    rejects = [r for r in out if r["kind"] == "reject"]
    assert sorted(r["line"] for r in rejects) == [1, 1] and all("no directory for its change log" in r["reason"]
                                                                for r in rejects)


def test_dotr_run_on_spark_moves_sensors_as_the_embedded_run_does(spark, tmp_path):
    rules, ontologies = files("moves")
    out = tmp_path / "out.jsonl"
    args = ["run", "-q", "--engine", "spark", "--rules", rules, "--ontology", ontologies[0], "--input",
            str(ROOT / "examples/moves/stream.jsonl"), "--output", str(out)]
    golden = (ROOT / "tests/pipeline/golden/moves.jsonl").read_text()
    assert main(args) == 0 and out.read_text() == golden
    checkpointed = args + ["--checkpoint", str(tmp_path / "ck")]
    assert main(checkpointed) == 0 and out.read_text() == golden
    assert main(checkpointed) == 0 and out.read_text() == golden  # finished: derived from what Spark committed


def test_spark_rejects_what_the_embedded_run_rejects_and_prints_what_it_prints(spark, tmp_path, capsys):
    """Every kind of bad record, through ``dotr run`` embedded and on Spark: the same output, the
    same rejects file (naming the user's input, not Spark's copy of it), the same first error."""
    rules, ontologies = files("cooling")
    (tmp_path / "r.dotr").write_text(Path(rules).read_text() + "\nsaid(X) :- p(X) .\n")
    reading = lambda t, v: json.dumps({"t": t, "facts": [f"temp({v})"]}).encode()  # noqa: E731
    lines = [reading(1, 160),
             b'{"t": 2, "facts": ["temp(1\xff)"]}',  # not UTF-8
             reading(3, 50),
             reading(2, 120),  # earlier than the record before it
             json.dumps({"t": 4, "facts": ["temp(1)"] * 1000}).encode(),  # longer than --max-record-size
             json.dumps({"t": 4, "facts": [f"p({', '.join(map(str, range(17)))})"]}).encode(),  # 17 arguments
             json.dumps({"t": 4, "facts": [f"temp({'9' * 4301})"]}).encode(),  # a huge integer
             json.dumps({"t": 4, "facts": [], "x": 1}).encode(),  # an unknown key
             json.dumps({"t": 4, "facts": ['p("a\\nb>")']}).encode(),  # a newline and '>' in a literal: printed
             b"not json",
             reading(10**15, 160),  # beyond --max-gap
             reading(5, 1), reading(6, 160)]
    stream = tmp_path / "s.jsonl"
    stream.write_bytes(b"\n".join(lines) + b"\n")
    args = ["run", "-q", "--rules", str(tmp_path / "r.dotr"), "--ontology", ontologies[0], "--input", str(stream),
            "--max-record-size", "5000"]
    for engine in ("embedded", "spark"):
        assert main([*args, "--engine", engine, "--output", str(tmp_path / f"{engine}.jsonl"), "--on-error", "skip",
                     "--rejects", str(tmp_path / f"{engine}.rejects")]) == 0
    output = (tmp_path / "embedded.jsonl").read_text()
    assert (tmp_path / "spark.jsonl").read_text() == output
    assert '"said(\\"a\\\\nb>\\")"' in output  # (the newline escaped in the fact, the fact in JSON)
    rejects = (tmp_path / "embedded.rejects").read_text()
    assert (tmp_path / "spark.rejects").read_text() == rejects
    assert [json.loads(line)["line"] for line in rejects.splitlines()] == [2, 4, 5, 6, 7, 8, 10, 11]
    capsys.readouterr()
    for engine in ("embedded", "spark"):  # --on-error stop: the first bad record, named alike
        assert main([*args, "--engine", engine, "--output", str(tmp_path / "stop.jsonl")]) == 3
        assert capsys.readouterr().err.splitlines()[0] == f"{stream}:line 2: the line is not valid UTF-8"


@pytest.mark.parametrize("per_trigger,order", [(1, "abcde"), (None, "acebd")],
                         ids=["a micro-batch per file", "one micro-batch"])
def test_max_gap_between_files_and_micro_batches_rejects_what_the_embedded_run_rejects(spark, tmp_path, per_trigger,
                                                                                       order):
    """Records far ahead of the file before their own (the cooling rules: tick by tick in a gap,
    where freeze holds) are rejected as `dotr run` rejects them from the files' records in the
    order the job takes them: file by file over micro-batches, in time order within one (the
    same reasons and records); the output is the embedded one without them."""
    rules, ontologies = files("cooling")
    lines = stream("cooling")
    far = [json.dumps({"t": 1000, "facts": ["temp(1)"]}), json.dumps({"t": 1001, "facts": ["temp(160)"]})]
    parts = {"a": lines[:6], "b": far, "c": lines[6:9], "d": far[1:], "e": lines[9:]}
    for name, part in parts.items():
        publish(tmp_path / "in", f"{name}.jsonl", part)
    taken = tmp_path / "taken.jsonl"
    taken.write_text("".join(line + "\n" for name in order for line in parts[name]))
    assert main(["run", "-q", "--rules", rules, "--ontology", ontologies[0], "--input", str(taken), "--output",
                 str(tmp_path / "embedded.jsonl"), "--max-gap", "100", "--on-error", "skip", "--rejects",
                 str(tmp_path / "embedded.rejects")]) == 0
    job = SparkPipeline(spark, rules, ontologies, max_gap=100)
    out: list[dict] = []
    query = job.foreach(job.results(job.read_files(tmp_path / "in", max_files_per_trigger=per_trigger)),
                        lambda _, batch: out.extend(batch), tmp_path / "checkpoint")
    query.awaitTermination()
    assert query.exception() is None
    rejects = [(Path(r["source"]).name, r["line"], r["reason"], r["record"]) for r in out if r["kind"] == "reject"]
    assert sorted(rejects) == [("b.jsonl", 1, *far_reason(far[0], 5)), ("b.jsonl", 2, *far_reason(far[1], 5)),
                               ("d.jsonl", 1, *far_reason(far[1], 8))] if per_trigger else \
        [("b.jsonl", 1, *far_reason(far[0], 15)), ("b.jsonl", 2, *far_reason(far[1], 15)),
         ("d.jsonl", 1, *far_reason(far[1], 15))]
    embedded_rejects = [json.loads(line) for line in (tmp_path / "embedded.rejects").read_text().splitlines()]
    assert sorted((reason, record) for *_, reason, record in rejects) == \
        sorted((r["reason"], r["record"]) for r in embedded_rejects)
    assert [json.dumps(r) for r in out if r.pop("kind") == "result"] == example_output("cooling", lines)


def far_reason(record: str, previous: int) -> tuple[str, str]:
    t = json.loads(record)["t"]
    return f"time {t} is {t - previous:,} after the previous record's {previous} (more than --max-gap 100)", record
