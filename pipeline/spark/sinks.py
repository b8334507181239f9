"""Where the Spark job's results go: its file sinks, one per output format that has one (the
registry :mod:`pipeline.sinks.formats` names them: ``spark-submit``'s ``--sink-format``), and the
start of a query (:func:`start`: its name, checkpoint and trigger).

Each sink takes the streaming ``(t, kind, json)`` results (:meth:`SparkPipeline.results`) and
gives the streaming writer, its path and checkpoint left to :func:`start`; both are exactly once.
"""

from __future__ import annotations

import itertools

#: a result record's fields as the Parquet sink reads them from its JSON (``answers``: each query's
#: answer as JSON text, split into the SELECT queries' solutions and the ASK queries' booleans)
RESULT_COLUMNS = ("t long, facts array<string>, removed array<string>, at map<string, array<string>>, "
                  "graphs array<string>, answers map<string, string>, "
                  "events array<struct<type: string, pattern: string, attributes: map<string, string>>>")
SOLUTIONS = "array<map<string, string>>"


def jsonl_sink(results):
    """The embedded pipeline's records, one per line; a rejected record as ``{"t": ...,
    "rejected": {...}}``."""
    from pyspark.sql import functions as F

    rejected = F.col("kind") == "reject"
    line = F.when(rejected, F.format_string('{"t": %s, "rejected": %s}', F.coalesce(F.col("t").cast("string"),
                                                                                    F.lit("null")), "json"))
    return results.select(line.otherwise(F.col("json")).alias("value")).writeStream.format("text")


def parquet_sink(results):
    """Columns ``RESULT_COLUMNS`` with ``answers`` the SELECT queries' and ``asks`` the ASK
    queries' answers, and ``rejected``, the reject as JSON."""
    from pyspark.sql import functions as F

    rejected = F.col("kind") == "reject"
    out = results.select(F.when(~rejected, F.from_json("json", RESULT_COLUMNS)).alias("r"),
                         F.when(rejected, F.col("json")).alias("rejected"))
    answers = F.col("r.answers")
    ask = lambda k, v: v.isin("true", "false")  # noqa: E731 (an ASK query's answer)
    return out.select(
        F.coalesce("r.t", F.lit(None)).alias("t"), "r.facts", "r.removed", "r.at", "r.graphs",
        F.transform_values(F.map_filter(answers, lambda k, v: ~ask(k, v)),
                           lambda k, v: F.from_json(v, SOLUTIONS)).alias("answers"),
        F.transform_values(F.map_filter(answers, ask), lambda k, v: v == "true").alias("asks"),
        "r.events", "rejected").writeStream.format("parquet")


_QUERIES = itertools.count(1)


def start(writer, checkpoint, trigger: dict | None):
    """Start the query of a streaming ``writer`` with its ``checkpoint``, appending, under
    ``trigger`` (default: the input available now)."""
    # the query's name is in every job's description in the Spark UI ("dotr-1 [id = ...] batch =
    # N"); names of the active queries of a session differ
    name = f"dotr-{next(_QUERIES)}"
    writer = writer.queryName(name).option("checkpointLocation", str(checkpoint)).outputMode("append")
    # the stages of the query's micro-batches are named after it (Spark names a stage by the call
    # site of the thread that started the query: "start at NativeMethodAccessorImpl.java:0")
    from pyspark import SparkContext

    sc = SparkContext.getOrCreate()
    previous = {key: sc.getLocalProperty(key) for key in ("callSite.short", "callSite.long")}
    sc.setLocalProperty("callSite.short", f"{name}: dotr split, enrich, conclude per key group, merge")
    sc.setLocalProperty("callSite.long", f"dotr query {name}: the Python steps dotr_split, dotr_enrich, "
                                         "dotr_conclude (one task per key group) and dotr_merge")
    try:
        return writer.trigger(**(trigger or {"availableNow": True})).start()
    finally:
        for key, value in previous.items():
            sc.setLocalProperty(key, value)
