"""The output formats, in one registry: each format's name (``--format``), the extensions that
choose it under ``auto`` (by ``--output``), the writer of a run's time points, whether it writes
RDF triples only, and its Spark file sink (``spark-submit``'s ``--sink-format``). ``dotr run``
(embedded and on Spark) and the Spark job read through it; adding a format is a writer and one
entry here (docs/architecture.md).

>>> output_format_of("out.trig").name, output_format_of("out.nq").name, output_format_of("-").name
('trig', 'nquads', 'jsonl')
>>> output_format_of("out.trig", "jsonl").name, FORMATS["trig"].triples_only
('jsonl', True)
>>> [f.name for f in FORMATS.values() if f.writer is None]  # (a Spark file sink only)
['parquet']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Protocol, TextIO

if TYPE_CHECKING:
    from ..records import Result


class RecordWriter(Protocol):
    """What writes a run's time points: :meth:`write` for each, in time order."""

    def write(self, result: Result) -> None: ...


#: ``writer(out, prefixes, full_iris)``: a run's writer to ``out`` (the rule file's ``prefixes``;
#: ``full_iris``: the canonical form, no prefixes)
Writer = Callable[[TextIO, "dict[str, str]", bool], RecordWriter]


# (the writers are imported when a run starts: ``dotr check`` and ``--help`` need only the names)
def _jsonl(out: TextIO, prefixes: dict[str, str], full_iris: bool) -> RecordWriter:
    from .jsonl import JsonlWriter

    return JsonlWriter(out, prefixes, full_iris)


def _trig(out: TextIO, prefixes: dict[str, str], full_iris: bool) -> RecordWriter:
    from .rdf import RdfWriter

    return RdfWriter(out, prefixes, full_iris, "trig")


def _nquads(out: TextIO, prefixes: dict[str, str], full_iris: bool) -> RecordWriter:
    from .rdf import RdfWriter

    return RdfWriter(out, prefixes, full_iris, "nquads")


def _spark_jsonl(results: Any) -> Any:
    from ..spark.sinks import jsonl_sink

    return jsonl_sink(results)


def _spark_parquet(results: Any) -> Any:
    from ..spark.sinks import parquet_sink

    return parquet_sink(results)


@dataclass(frozen=True)
class OutputFormat:
    name: str
    extensions: tuple[str, ...]
    #: the writer of a run's time points (None: a Spark file sink only)
    writer: Writer | None
    #: writes RDF triples only: no atom that is not a triple, no answer of a SELECT or ASK query
    #: (a program that prints them is refused)
    triples_only: bool = False
    #: the Spark job's file sink: the streaming writer of its ``(t, kind, json)`` results (None: none)
    spark_sink: Callable[[Any], Any] | None = None


FORMATS: dict[str, OutputFormat] = {f.name: f for f in (
    OutputFormat("jsonl", (".jsonl", ".json", ".ndjson"), _jsonl, spark_sink=_spark_jsonl),
    OutputFormat("trig", (".trig",), _trig, triples_only=True),
    OutputFormat("nquads", (".nq", ".nquads"), _nquads, triples_only=True),
    OutputFormat("parquet", (".parquet",), None, spark_sink=_spark_parquet),
)}


def output_format_of(location: str, given: str = "auto") -> OutputFormat:
    """The format ``given`` (``--format``), or under ``auto`` the one ``location``'s extension
    names (JSON Lines for any other, and for standard output and a broker's topic)."""
    if given != "auto":
        return FORMATS[given]
    lower = location.lower()
    return next((f for f in FORMATS.values() if f.writer is not None and lower.endswith(f.extensions)),
                FORMATS["jsonl"])


def unwritable(fmt: OutputFormat, checked) -> tuple[list[str], list[str]]:
    """What the program ``checked`` prints that ``fmt`` cannot write: the predicates that are not
    triples (``name/arity``) and the queries that answer with solutions or a boolean."""
    if not fmt.triples_only:
        return [], []
    from .rdf import answering_queries, not_triples

    return not_triples(checked), answering_queries(checked)


__all__ = ["FORMATS", "OutputFormat", "RecordWriter", "output_format_of", "unwritable"]
