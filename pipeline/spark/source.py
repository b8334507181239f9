"""``dotr-feed``: a Python streaming data source for in-process feeds and benchmarks.

Options: ``generator`` (``"module:function"``; ``function(i)`` returns the i-th JSON Lines record
as a string, with times non-decreasing in i), ``count`` (records in all), ``perBatch`` (records
per micro-batch) and ``partitions`` (read tasks per micro-batch). Offsets are record indexes, so
a query restarted from its checkpoint reads on exactly where it stopped.
"""

from __future__ import annotations

import importlib

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadMaxRows


def _generator(spec: str):
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


class _Range(InputPartition):
    def __init__(self, start: int, end: int):
        self.start, self.end = start, end


class FeedReader(DataSourceStreamReader):
    def __init__(self, options: dict):
        self.generator = options["generator"]
        self.count = int(options["count"])
        self.per_batch = int(options.get("perBatch", 1000))
        self.parts = int(options.get("partitions", 2))

    def initialOffset(self) -> dict:
        return {"index": 0}

    def getDefaultReadLimit(self):
        return ReadMaxRows(self.per_batch)

    def latestOffset(self, start: dict, limit) -> dict:
        index = start["index"]
        if isinstance(limit, ReadMaxRows):
            return {"index": min(self.count, index + limit.max_rows)}
        return {"index": self.count}

    def partitions(self, start: dict, end: dict):
        a, b = start["index"], end["index"]
        step = max(1, -(-(b - a) // self.parts))
        return [_Range(i, min(b, i + step)) for i in range(a, b, step)]

    def read(self, partition: _Range):
        from .elements import change_or, time_of

        make = _generator(self.generator)
        for i in range(partition.start, partition.end):
            raw = make(i)
            yield change_or("feed", i + 1, time_of(raw), raw.encode()) if '"background"' in raw else \
                ("feed", i + 1, time_of(raw), "jsonl", raw.encode())


class FeedSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "dotr-feed"

    def schema(self) -> str:
        from .elements import ELEMENTS

        return ELEMENTS

    def streamReader(self, schema) -> FeedReader:
        return FeedReader(self.options)


def register(spark) -> None:
    """Make ``spark.readStream.format("dotr-feed")`` available in this session."""
    spark.dataSource.register(FeedSource)
