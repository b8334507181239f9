"""The file to give ``spark-submit``: ``spark-submit --master URL pipeline/spark/submit.py --rules
R --input DIR --sink DIR --checkpoint DIR`` (options: ``--help``; docs/cli.md)."""

from __future__ import annotations

import argparse
import os
import sys

from dotr.pipeline.sinks.formats import FORMATS as OUTPUTS
from dotr.pipeline.sources.formats import FORMATS as INPUTS
from dotr.pipeline.spark.job import SparkPipeline, _is_local


def main(argv: list[str] | None = None) -> int:
    """The job ``spark-submit pipeline/spark/submit.py`` runs: watch a directory, write a file
    sink (options: ``--help``)."""
    from dotr.pipeline.spark.session import spark_session

    parser = argparse.ArgumentParser(prog="dotr-spark", description="dotr as a Spark Structured Streaming job")
    parser.add_argument("--rules", required=True)
    parser.add_argument("--ontology", action="append", default=[])
    parser.add_argument("--input", required=True, help="the directory to watch")
    parser.add_argument("--input-format", default="auto", choices=["auto", *(f.name for f in INPUTS.values() if f.spark)])
    parser.add_argument("--sink", required=True, help="the output directory")
    parser.add_argument("--sink-format", default="jsonl", choices=[f.name for f in OUTPUTS.values() if f.spark_sink])
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--changes", help="the directory of the log of background changes, on a file system the driver "
                                          "and every executor see (default: in a local checkpoint; none: rejected)")
    parser.add_argument("--trigger", default="available-now", help="available-now or an interval ('5 seconds')")
    parser.add_argument("--max-files-per-trigger", type=int)
    parser.add_argument("--master", help="the master URL (default: spark-submit's --master)")
    parser.add_argument("--include-background", action="store_true")
    parser.add_argument("--all-time-points", action="store_true")
    args = parser.parse_args(argv)
    spark = spark_session(args.master, defaults={"spark.ui.enabled": "true"})  # (--conf spark.ui.enabled=false: none)
    job = SparkPipeline(spark, args.rules, args.ontology, include_background=args.include_background,
                        keep_empty=args.all_time_points, input_format=args.input_format)
    trigger = {"availableNow": True} if args.trigger == "available-now" else {"processingTime": args.trigger}
    changes = args.changes or (os.path.join(args.checkpoint, "dotr-background") if _is_local(args.checkpoint) else None)
    query = job.write(job.results(job.read_files(args.input, args.max_files_per_trigger), changes), args.sink,
                      args.checkpoint, args.sink_format, trigger)
    query.awaitTermination()
    return 0


if __name__ == "__main__":
    sys.exit(main())
