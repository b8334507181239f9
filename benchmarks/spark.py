"""The Spark pipeline end to end on a DOTR-style stream, against the embedded pipeline in the same run.

The workload is DOTR's synthetic evaluation (benchmarks/patterns.py: sensors on objects in rooms,
a Datalog rule deriving each sensor's room, 10 extra Datalog rules over 10k background triples,
pattern rules ``from A and last B(room = A.room) within 30 s from A`` with a SPARQL FILTER),
with sensor readings arriving as larger graphs: every time point (1 s apart) holds
``--per-point`` readings, ``--terminators`` of them terminators (read_valA). The stream is
written as JSON Lines files of ``--batch`` triples each; Spark reads one file per micro-batch
(``maxFilesPerTrigger=1``) from a watched directory and writes JSON Lines files (exactly-once file
sink). Each Spark configuration runs in its own process (one SparkContext per process); the
figures exclude session start-up and the job's set-up (the background materialised and broadcast,
the Python workers started and warmed, printed apart), and include everything from the start of
the query to its last micro-batch.

Reported per size, micro-batch size and master: input triples/s end to end, micro-batch
latency (median, max), and the embedded pipeline (``dotr run``'s Reasoner, parsing included, its
records written to a file as ``dotr run`` writes them) on the same files; then local[2] / local[1].

    python benchmarks/spark.py [--workload dotr|lars|lars+patterns|mixed|csparql] [--sizes 100000 1000000] [--batches 20000 100000]
        [--masters local[1] local[2] cluster] [--json FILE]

The workloads' files are written by ``dotr.examples.workloads.stream_files``. ``--workload
lars`` runs per-sensor LARS rules instead (``LARS_RULES``: windows, negation and a
join with 500 sensors' rooms in the background), which split by sensor; ``--workload
lars+patterns`` adds a pattern over the same readings, which splits by room beside them
(``LARS_PATTERNS``); ``--workload mixed`` runs DOTR's pattern rules and LARS rules over the same
readings in ms (``MIXED_LARS``): the rules by sensor and the patterns by room, each group
evaluating its own time points, the merge carrying each group's facts to the others'.
``--workload csparql`` runs per-sensor C-SPARQL queries (``CSPARQL_QUERIES``: an aggregate over a
window of 30 time points, and an IStream query over what a Datalog rule derives from the window
and the background), which split by sensor.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from dotr.examples.workloads.stream_files import write_workload  # noqa: E402


def run_embedded(folder: Path) -> tuple[float, float, int]:
    """The embedded pipeline on the stream files, writing its records to a file as ``dotr run``
    does (the Spark job's figures include its file sink)."""
    from dotr.pipeline.reasoner import Reasoner
    from dotr.pipeline.io import read_jsonl
    from dotr.pipeline.sinks.jsonl import JsonlWriter

    started = time.perf_counter()
    reasoner = Reasoner.from_files(folder / "rules.dotr", [folder / "background.nt"])
    load = time.perf_counter() - started
    started = time.perf_counter()

    def results():  # (one record per time point; a background change before its time point, as dotr run)
        for path in sorted((folder / "in").iterdir()):
            with open(path) as f:
                for record in read_jsonl(f):
                    yield from reasoner.between(record.t)
                    if record.background:
                        reasoner.change_background(record.background.add, record.background.remove)
                    yield reasoner.step(record.t, record.facts)

    outputs = 0
    with open(folder / "out-embedded.jsonl", "w", encoding="utf-8") as out:
        writer = JsonlWriter(out, {}, full_iris=True)
        for result in results():
            if not result.is_empty():
                writer.write(result)
                outputs += 1
    return time.perf_counter() - started, load, outputs


def run_spark(folder: Path, master: str, split: bool = True) -> dict:
    """In this process: the Spark job over ``folder`` (the temporal stage split by key, or on one
    key); the figures as a dict."""
    from dotr.pipeline.spark.session import spark_session

    if master == "cluster":  # a master and two workers of one core each on this machine (pyspark's scripts)
        from dotr.pipeline.spark.cluster import standalone_cluster

        with standalone_cluster(workers=2, cores=1, memory="3g") as url:
            spark = spark_session(url, config={"spark.cores.max": "2", "spark.executor.cores": "1",
                                               "spark.executor.memory": "3g", "spark.sql.shuffle.partitions": "2"})
            return {**_run_query(spark, folder, split), "master": master}
    spark = spark_session(master, config={"spark.sql.shuffle.partitions": str(max(2, int(master[6:-1])))})
    return {**_run_query(spark, folder, split), "master": master}


def _run_query(spark, folder: Path, split: bool) -> dict:
    from dotr.pipeline.spark.job import SparkPipeline

    master = spark.sparkContext.master
    started = time.perf_counter()
    job = SparkPipeline(spark, folder / "rules.dotr", [folder / "background.nt"], split_by_key=split)
    setup = time.perf_counter() - started
    name = master.replace("/", "_").replace(":", "_") + ("" if split else "-one-key")
    out = folder / f"out-{name}"
    started, busy = time.perf_counter(), _busy_cpu()
    query = job.write(job.results(job.read_files(folder / "in", max_files_per_trigger=1), folder / f"changes-{name}"),
                      out, folder / f"checkpoint-{name}")
    query.awaitTermination()
    elapsed = time.perf_counter() - started
    cores = (_busy_cpu() - busy) / elapsed if busy is not None else None
    batches = [p["durationMs"]["triggerExecution"] / 1000 for p in query.recentProgress if p["numInputRows"]]
    outputs = spark.read.text(str(out)).count()
    spark.stop()
    # after the first micro-batch (which also starts the Python workers and restores the
    # background in them): the steady rate
    rest = sum(json.loads((folder / "counts.json").read_text())[1:])  # triples after the first file
    return {"master": master, "groups": len(job.groups), "seconds": elapsed, "setup_s": setup, "batches": len(batches),
            "batch_median_s": statistics.median(batches), "batch_max_s": max(batches), "outputs": outputs,
            "steady_per_s": rest / sum(batches[1:]) if len(batches) > 1 else None, "cores_busy": cores}


def _busy_cpu() -> float | None:
    """Seconds of CPU time the whole machine has spent busy (Linux), None elsewhere: over the
    query, how many cores Spark kept busy (its JVM works beside the Python workers)."""
    try:
        with open("/proc/stat") as f:
            ticks = [int(x) for x in f.readline().split()[1:]]
    except OSError:
        return None
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")  # all but idle and iowait


def _spin(seconds_out) -> None:
    started = time.perf_counter()
    table = {}
    for i in range(4_000_000):
        table[i & 1023] = i
    seconds_out.put(time.perf_counter() - started)


def parallel_capacity() -> float:
    """How much more CPU-bound Python work two processes do at once than one (2.0 on two free
    cores): what bounds local[2] / local[1] on this machine."""
    import multiprocessing

    out = multiprocessing.Queue()
    alone = multiprocessing.Process(target=_spin, args=(out,))
    alone.start(), alone.join()
    one = out.get()
    pair = [multiprocessing.Process(target=_spin, args=(out,)) for _ in range(2)]
    for p in pair:
        p.start()
    for p in pair:
        p.join()
    both = max(out.get(), out.get())
    return 2 * one / both


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--batches", type=int, nargs="+", default=[20_000, 100_000], help="triples per micro-batch")
    parser.add_argument("--masters", nargs="+", default=["local[1]", "local[2]"],
                        help="local[N], or cluster: a standalone cluster of two one-core workers started here")
    parser.add_argument("--per-point", type=int, default=1000, help="triples per time point")
    parser.add_argument("--terminators", type=float, default=0.002)
    parser.add_argument("--rules", type=int, default=50, help="pattern rules")
    parser.add_argument("--workload", choices=["dotr", "lars", "lars+patterns", "mixed", "csparql"], default="dotr",
                        help="dotr: the DOTR pattern scenario; lars: per-sensor LARS rules (windows, negation, "
                             "a background join); mixed: both kinds of rules over the same readings; csparql: "
                             "per-sensor C-SPARQL queries")
    parser.add_argument("--one-key", action="store_true",
                        help="also run local[2] with the temporal stage on one key (not split by key)")
    parser.add_argument("--changes-every", type=int, default=0, metavar="N",
                        help="every N-th time point moves a sensor to another room (a background change)")
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument("--spark-only", nargs=3, metavar=("FOLDER", "MASTER", "SPLIT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.spark_only:
        folder, master, split = args.spark_only
        print(json.dumps(run_spark(Path(folder), master, split == "split")))
        return 0
    capacity = parallel_capacity()
    print(f"this machine: two processes do {capacity:.2f}x the CPU-bound work of one", flush=True)
    rows = [{"parallel_capacity": capacity}]
    for size in args.sizes:
        for batch in args.batches:
            folder = Path(tempfile.mkdtemp(prefix="dotr-bench-spark-"))
            try:
                write_workload(folder, size, batch, args.per_point, args.terminators, args.rules, args.workload,
                               args.changes_every)
                embedded_s, load_s, embedded_outputs = run_embedded(folder)
                row = {"triples": size, "batch": batch, "embedded_s": embedded_s,
                       "embedded_per_s": size / embedded_s, "outputs": embedded_outputs}
                print(f"{size:>9,} triples, micro-batches of {batch:>7,}: embedded {size / embedded_s:>9,.0f} "
                      f"triples/s ({embedded_s:.1f} s; background {load_s:.1f} s)", flush=True)
                runs = [(master, "split") for master in args.masters]
                runs += [("local[2]", "one-key")] if args.one_key else []
                for master, split in runs:
                    done = subprocess.run([sys.executable, __file__, "--spark-only", str(folder), master, split],
                                          capture_output=True, text=True)
                    if done.returncode != 0:
                        print(done.stderr[-3000:], file=sys.stderr)
                        return 1
                    figures = json.loads(done.stdout.strip().splitlines()[-1])
                    assert figures["outputs"] == embedded_outputs, (figures, embedded_outputs)
                    row[master if split == "split" else f"{master} one key"] = figures
                    steady = figures["steady_per_s"]
                    label = f"{master} ({figures['groups']} group{'s' if figures['groups'] > 1 else ''})"
                    print(f"{'':>45}{label:<20} {size / figures['seconds']:>9,.0f} triples/s ({figures['seconds']:.1f} s,"
                          f" {figures['batches']} micro-batches: median {figures['batch_median_s']:.2f} s, max "
                          f"{figures['batch_max_s']:.2f} s) = {embedded_s / figures['seconds']:.2f}x embedded"
                          + (f"; after the first micro-batch {steady:,.0f} triples/s" if steady else "")
                          + (f"; {figures['cores_busy']:.2f} cores busy" if figures["cores_busy"] else "")
                          + f"; job set up (background, warm-up) in {figures['setup_s']:.1f} s before", flush=True)
                if "local[1]" in row and "local[2]" in row:
                    one, two = row["local[1]"], row["local[2]"]
                    row["scaling"] = one["seconds"] / two["seconds"]
                    steady = f", after the first micro-batch {two['steady_per_s'] / one['steady_per_s']:.2f}x" \
                        if one["steady_per_s"] and two["steady_per_s"] else ""
                    print(f"{'':>45}local[2] / local[1]: {row['scaling']:.2f}x{steady}", flush=True)
                if "local[1]" in row and "cluster" in row:
                    row["cluster_scaling"] = row["local[1]"]["seconds"] / row["cluster"]["seconds"]
                    print(f"{'':>45}cluster / local[1]: {row['cluster_scaling']:.2f}x", flush=True)
                if "local[2] one key" in row and "local[2]" in row:
                    row["split_gain"] = row["local[2] one key"]["seconds"] / row["local[2]"]["seconds"]
                    print(f"{'':>45}local[2] split by key / on one key: {row['split_gain']:.2f}x", flush=True)
                rows.append(row)
            finally:
                shutil.rmtree(folder, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
