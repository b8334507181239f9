"""Where a run's time points and rejected records go, the same for the embedded run and the
Spark driver: each :class:`Result` counted (the summary, ``--watch``), kept or skipped
(``--changes``, ``--all-time-points``), written by its format's writer (the registry
:mod:`pipeline.sinks.formats`); each rejected record written to the rejects file as it comes.

>>> import io
>>> from dotr.pipeline.records import Result
>>> sink = io.StringIO()
>>> out = Output(sink, OutputOptions(changes=True))
>>> out.result(Result(1, ["a"])); out.result(Result(2, ["a"])); out.result(Result(3, []))
>>> sink.getvalue().splitlines()
['{"t": 1, "facts": ["a"], "removed": []}', '{"t": 3, "facts": [], "removed": ["a"]}']
>>> out.counts
{'records': 0, 'time points': 3, 'outputs': 2}
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Callable, Protocol

from .records import Result
from .sinks.formats import FORMATS
from .summary import RunStats


class Sink(Protocol):
    """What output is written to (:class:`~dotr.pipeline.files.OutputFile`, standard output)."""

    def write(self, text: str) -> None: ...

    def flush(self) -> None: ...


@dataclass
class OutputOptions:
    """How results are written (the options of ``dotr run`` that change the output)."""

    format: str = "jsonl"  # a name of :data:`~pipeline.sinks.formats.FORMATS` with a writer
    prefixes: dict[str, str] = field(default_factory=dict)
    full_iris: bool = False
    changes: bool = False  # only what was added and removed since the previous time point
    all_time_points: bool = False  # time points with nothing to print too


class Output:
    """A run's output: :meth:`result` for each time point evaluated, in time order; :meth:`reject`
    for each rejected record. ``counts`` (records, time points, outputs) and ``previous`` (the
    facts printed last, with ``--changes``) are a run's state, kept across a checkpoint."""

    def __init__(self, sink: Sink, options: OutputOptions, stats: RunStats | None = None,
                 rejects: Callable[[], Sink] | None = None, counts: dict | None = None,
                 previous: set[str] | None = None):
        self.sink, self.options = sink, options
        self.stats = stats if stats is not None else RunStats()
        self.counts = counts if counts is not None else {"records": 0, "time points": 0, "outputs": 0}
        self.previous = previous if previous is not None else set()
        self.rejected = 0
        self.on_time_point: Callable[[int], None] | None = None  # a progress view's
        self._writer = FORMATS[options.format].writer(sink, options.prefixes, options.full_iris)
        self._open_rejects = rejects
        self.rejects: Sink | None = None

    def result(self, result: Result, seconds: float | None = None, sources: list[str] | None = None) -> None:
        """Count and write the result of a time point that took ``seconds`` (None: not known),
        whose graphs the patterns or queries ``sources`` built."""
        counts = self.counts
        counts["time points"] += 1
        self.stats.observe(result, seconds, sources)
        if self.on_time_point is not None:
            self.on_time_point(result.t)
        if self.options.changes:
            self.previous = result.keep_changes(self.previous)
            if not result.removed and result.is_empty() and not self.options.all_time_points:
                return
        elif result.is_empty() and not self.options.all_time_points:
            return
        counts["outputs"] += 1
        self._writer.write(result)

    def reject(self, entry: dict) -> None:
        """A rejected record (``{"line", "reason", "record"}``, and ``"source"`` on Spark)."""
        if self.rejects is None:
            if self._open_rejects is None:
                return
            self.rejects = self._open_rejects()
        self.rejects.write(json.dumps(entry) + "\n")  # (ASCII: a bad record may hold any character)
        self.rejected += 1

    def flush(self) -> None:
        self.sink.flush()
        if self.rejects is not None:
            self.rejects.flush()


def rejects_path(rejects: str | None, output: str) -> str:
    """The rejects file: ``--rejects``, else ``OUTPUT.rejects.jsonl`` (``dotr.rejects.jsonl`` for
    standard output or a broker's topic)."""
    return rejects or ((output if output != "-" and "://" not in output else "dotr") + ".rejects.jsonl")
