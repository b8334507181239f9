"""``dotr run --engine spark``: the command's input and output around :class:`SparkPipeline`.

The input (a file, standard input, or a directory to watch) is read by Spark's file source; the
results come back to the driver per micro-batch (``foreachBatch``) and are printed exactly as the
embedded pipeline prints them.
"""

from __future__ import annotations

import argparse
import queue
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Iterator

from ..embedded import InputError, Result


def _trigger(text: str) -> dict:
    return {"availableNow": True} if text == "available-now" else {"processingTime": text}


def spark_results(args: argparse.Namespace, rejects: list[dict], counts: dict) -> Iterator[Result]:
    """The results of ``args``'s run on Spark, in time order; bad records go to ``rejects`` (with
    ``--on-error skip``) or raise :class:`InputError`."""
    from .job import SparkPipeline, result_of
    from .session import spark_session

    spark = spark_session(args.master, config={"spark.ui.enabled": "true", **dict(args.conf or {})})
    if not args.quiet and spark.sparkContext.uiWebUrl:
        print(f"dotr: Spark UI at {spark.sparkContext.uiWebUrl} (--conf spark.ui.enabled=false: none)", file=sys.stderr)
    job = SparkPipeline(spark, args.rules, args.ontology, include_background=args.include_background,
                        keep_empty=args.changes or args.all_time_points, input_format=args.input_format)
    scratch = Path(tempfile.mkdtemp(prefix="dotr-spark-"))
    try:
        # with a checkpoint, the copy of a one-file input lives next to it: a restarted query
        # must find the file it was reading at the same path
        home = Path(args.checkpoint) if args.checkpoint else scratch
        source = Path(args.input) if args.input != "-" else None
        if source is not None and source.is_dir():
            watched = source
        else:  # one input file: Spark's file source watches a directory
            watched = home / "input"
            name = source.name if source is not None else "stdin.jsonl"
            if not (watched / name).exists():
                watched.mkdir(parents=True, exist_ok=True)
                part = watched.parent / (name + ".part")  # (in place at once: Spark may be listing it)
                with open(part, "w", encoding="utf-8") as f:
                    shutil.copyfileobj(open(source, encoding="utf-8") if source else sys.stdin, f)
                part.replace(watched / name)
        if args.checkpoint and args.trigger == "available-now":
            yield from _committed_results(spark, job, watched, home, args, rejects)
            return
        records: queue.Queue = queue.Queue()
        query = job.foreach(job.results(job.read_files(watched)), lambda _, batch: [records.put(r) for r in batch],
                            args.checkpoint or scratch / "checkpoint", _trigger(args.trigger))
        try:
            while query.isActive or not records.empty():
                try:
                    record = records.get(timeout=0.2)
                except queue.Empty:
                    continue
                if record.pop("kind") == "reject":
                    if args.on_error == "stop":
                        raise InputError(record["reason"], record["line"], record["source"] or None)
                    rejects.append(record)
                    continue
                yield result_of(record)
            if query.exception() is not None:
                raise RuntimeError(f"the Spark query failed: {query.exception()}")
        finally:
            if query.isActive:
                query.stop()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _committed_results(spark, job, watched: Path, home: Path, args: argparse.Namespace,
                       rejects: list[dict]) -> Iterator[Result]:
    """The results of a checkpointed run: Spark's file sink in the checkpoint directory commits
    each micro-batch's results exactly once with its state, and the output is derived from
    everything committed so far, so a run killed and started again, or run again after it
    finished, gives the whole output (never only what the last start computed)."""
    import json

    from .job import result_of

    results = home / "results"
    query = job.write(job.results(job.read_files(watched)), results, home / "spark", "jsonl", {"availableNow": True})
    query.awaitTermination()
    if query.exception() is not None:
        raise RuntimeError(f"the Spark query failed: {query.exception()}")
    lines = [row.value for row in spark.read.text(str(results)).collect()] if (results / "_spark_metadata").exists() else []
    records = [json.loads(line) for line in lines]
    for record in records:
        if "rejected" in record:
            reject = record["rejected"]
            if args.on_error == "stop":
                raise InputError(reject["reason"], reject["line"], reject.get("source") or None)
            rejects.append(reject)
    for record in sorted((r for r in records if "rejected" not in r), key=lambda r: r["t"]):
        yield result_of(record)
