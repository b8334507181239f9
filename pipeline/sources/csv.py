"""CSV files as streams, through a mapping to RDF (``dotr run --input FILE.csv --mapping
MAP.toml``): each row is a record, its time from one column, its triples from the mapping's
subject templates and predicates. The triples are the rdflib terms the same graph written as
Turtle in a JSON Lines record would give, so a CSV and its hand conversion give one output.

A mapping is a TOML file (docs/cli.md, "CSV input")::

    [prefixes]
    ex = "http://example.org/"
    xsd = "http://www.w3.org/2001/XMLSchema#"

    [time]
    column = "time"     # ISO 8601 date-times (UTC unless they say), or numbers taken as they are
    unit = "s"          # what one time point is: ms (the default), s, min or h

    stream = "ex:readings"  # the records' stream, for C-SPARQL windows (default: none named)

    [[subjects]]
    template = "http://example.org/reading/{sensor}/{time}"
    class = "ex:Reading"
    predicates."ex:sensor" = { template = "http://example.org/sensor/{sensor}" }
    predicates."ex:value" = { column = "value", datatype = "xsd:integer" }

>>> m = Mapping.parse(_EXAMPLE, "m.toml", ["time", "sensor", "value"])
>>> [record] = read_csv(["2014-08-01T00:00:05,s1,25"], m, first_line=2)
>>> record.t, [o for _, _, o in record.facts]
(1406851205, ['<http://example.org/sensor/s1>', '25', '<http://example.org/Reading>'])
"""

from __future__ import annotations

import csv
import hashlib
import re
import time
import tomllib
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal, InvalidOperation
from typing import Iterable, Iterator
from urllib.parse import quote

from rdflib import Literal
from rdflib.namespace import RDF, XSD

from dotr.ontology.turtle import TokenTriple
from dotr.rules import DotrError, InputError
from dotr.rules.engine.terms import format_term
from dotr.rules.lang.queries.sparql import rdf_term

from ..io import MAX_TIME, Record

_EXAMPLE = '''
[prefixes]
ex = "http://example.org/"
xsd = "http://www.w3.org/2001/XMLSchema#"
[time]
column = "time"
unit = "s"
[[subjects]]
template = "http://example.org/reading/{sensor}/{time}"
class = "ex:Reading"
predicates."ex:sensor" = { template = "http://example.org/sensor/{sensor}" }
predicates."ex:value" = { column = "value", datatype = "xsd:integer" }
'''

UNITS = {"ms": 1, "s": 1000, "min": 60_000, "h": 3_600_000}
_FIELD = re.compile(r"\{([^{}]*)\}")
_INTEGER = re.compile(r"[+-]?[0-9]+")
_NUMERIC = {str(XSD.decimal): Decimal, str(XSD.double): float, str(XSD.float): float}
_TYPE = f"<{RDF.type}>"
_XSD_INTEGER = str(XSD.integer)


class MappingError(DotrError):
    """A mapping file that cannot be used (its file and the key named)."""


@dataclass
class _Template:
    """An IRI template: its text between the fields, and the fields' column indexes."""

    parts: list[str]
    columns: list[int]

    def fill(self, row: list[str]) -> str | None:
        """The IRI for ``row`` (each value percent-encoded), None if a field is empty."""
        out = [self.parts[0]]
        for column, part in zip(self.columns, self.parts[1:]):
            value = row[column].strip()
            if not value:
                return None
            out += [quote(value, safe=""), part]
        return "".join(out)


@dataclass
class _Object:
    template: _Template | None = None  # an IRI
    column: int | None = None  # a literal
    datatype: str | None = None
    lang: str | None = None


@dataclass
class _Subject:
    template: _Template
    type: str | None  # (terms as the fast Turtle reader's tokens: "<iri>", an integer's digits, else a term)
    predicates: list[tuple[str, _Object]]


class Mapping:
    """A mapping read from TOML, for a CSV file whose header is ``header``."""

    def __init__(self, time_column: int, unit: int, subjects: list[_Subject], header: list[str],
                 stream: str | None = None):
        self.time_column, self.unit, self.subjects, self.header = time_column, unit, subjects, header
        self.stream = stream  # the records' stream (C-SPARQL's FROM STREAM), None: the default one
        self.digest = ""  # (of the mapping's text and the header: a checkpoint continues only with the same)

    @classmethod
    def load(cls, path: str, csv_path: str) -> "Mapping":
        """The mapping in the file ``path`` for the CSV file ``csv_path`` (its first line the header)."""
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
            with open(csv_path, encoding="utf-8-sig", newline="") as f:
                header = next(csv.reader([f.readline()]), [])
        except OSError as err:
            raise MappingError(f"{err.filename}: cannot be read ({(err.strerror or str(err)).lower()})") from None
        return cls.parse(text, path, header)

    @classmethod
    def parse(cls, text: str, path: str, header: list[str]) -> "Mapping":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as err:
            raise MappingError(f"{path}: not TOML ({err})") from None
        header = [h.strip() for h in header]

        def fail(where: str, problem: str):
            raise MappingError(f"{path}: {where}: {problem}")

        prefixes = data.get("prefixes", {})
        if not isinstance(prefixes, dict) or not all(isinstance(v, str) for v in prefixes.values()):
            fail("[prefixes]", "each prefix is a name = \"IRI\"")

        def iri(text, where: str) -> str:
            if not isinstance(text, str) or not text:
                fail(where, f"an IRI or a prefixed name, not {text!r}")
            prefix, colon, local = text.partition(":")
            if colon and prefix in prefixes:
                return prefixes[prefix] + local
            if colon and "//" not in text[:len(prefix) + 3] and prefix not in ("urn", "http", "https", "mailto"):
                fail(where, f"the prefix {prefix}: is not declared in [prefixes]")
            if not colon:
                fail(where, f"{text!r} is not an IRI (write prefix:name or a full IRI)")
            return text

        def column(name, where: str) -> int:
            if name not in header:
                fail(where, f"the CSV file has no column {name!r} (its columns: {', '.join(header)})")
            return header.index(name)

        def template(text, where: str) -> _Template:
            if not isinstance(text, str):
                fail(where, f"a template is a string, not {text!r}")
            pieces = _FIELD.split(iri(text, where) if not text.startswith("{") else text)
            return _Template(pieces[0::2], [column(name, where) for name in pieces[1::2]])

        time_spec = data.get("time")
        if not isinstance(time_spec, dict) or "column" not in time_spec:
            fail("[time]", "give the column of the rows' times: [time] column = \"...\"")
        unit = time_spec.get("unit", "ms")
        if unit not in UNITS:
            fail("[time] unit", f"one of {', '.join(UNITS)}, not {unit!r}")
        subjects = []
        specs = data.get("subjects")
        if not isinstance(specs, list) or not specs:
            fail("[[subjects]]", "give at least one subject: [[subjects]] template = \"...\"")
        for i, spec in enumerate(specs, 1):
            where = f"subject {i}"
            if not isinstance(spec, dict) or "template" not in spec:
                fail(where, "a subject has a template")
            unknown = set(spec) - {"template", "class", "predicates"}
            if unknown:
                fail(where, f"no key {sorted(unknown)[0]!r} (template, class, predicates)")
            predicates = []
            for name, obj in (spec.get("predicates") or {}).items():
                at = f"{where}, predicate {name}"
                if not isinstance(obj, dict) or ("template" in obj) == ("column" in obj):
                    fail(at, "give a column (a literal) or a template (an IRI)")
                unknown = set(obj) - {"template", "column", "datatype", "lang"}
                if unknown:
                    fail(at, f"no key {sorted(unknown)[0]!r} (column, template, datatype, lang)")
                if "template" in obj:
                    target = _Object(template=template(obj["template"], at))
                else:
                    datatype = iri(obj["datatype"], at) if "datatype" in obj else None
                    if datatype is not None and "lang" in obj:
                        fail(at, "a literal has a datatype or a language, not both")
                    target = _Object(column=column(obj["column"], at), datatype=datatype, lang=obj.get("lang"))
                predicates.append((f"<{iri(name, at)}>", target))
            kind = f"<{iri(spec['class'], f'{where}, class')}>" if "class" in spec else None
            subjects.append(_Subject(template(spec["template"], where), kind, predicates))
        unknown = set(data) - {"prefixes", "time", "subjects", "stream"}
        if unknown:
            fail(sorted(unknown)[0], "not a part of a mapping (prefixes, time, subjects, stream)")
        stream = iri(data["stream"], "stream") if "stream" in data else None
        mapping = cls(column(time_spec["column"], "[time] column"), UNITS[unit], subjects, header, stream)
        mapping.digest = hashlib.sha256("\n".join([text, *header]).encode()).hexdigest()
        return mapping

    # ------------------------------------------------------------------------ rows
    def time(self, value: str) -> int:
        """A row's time point: a number as it is, a date-time in the unit's time points since 1970."""
        value = value.strip()
        try:
            return int(value)
        except ValueError:
            pass
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            # (this and the row's other ValueErrors: read_csv makes them the row's InputError)
            raise ValueError(f"the time {value!r} is neither an integer nor an ISO 8601 date-time") from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return int(moment.timestamp() * 1000) // self.unit

    def triples(self, row: list[str]) -> list[TokenTriple]:
        """A row's triples in the order a record's graph has (``ontology.turtle.in_order``)."""
        triples = set()
        for subject in self.subjects:
            iri = subject.template.fill(row)
            if iri is None:
                continue
            node = f"<{iri}>"
            if subject.type is not None:
                triples.add(TokenTriple((node, _TYPE, subject.type)))
            for predicate, obj in subject.predicates:
                value = _object(obj, row, self.header)
                if value is not None:
                    triples.add(TokenTriple((node, predicate, value)))
        return sorted(triples, key=_printed)


def _printed(triple: TokenTriple) -> tuple:
    return tuple(term if type(term) is str else format_term(term) for term in triple)


def _object(obj: _Object, row: list[str], header: list[str]):
    """The object's token: ``<iri>``, an integer's digits, else the term rdflib's literal gives."""
    if obj.template is not None:
        iri = obj.template.fill(row)
        return f"<{iri}>" if iri is not None else None
    value = row[obj.column].strip()
    if not value:
        return None
    if obj.datatype is None:
        return rdf_term(Literal(value, lang=obj.lang))
    if obj.datatype == _XSD_INTEGER:
        if not _INTEGER.fullmatch(value):
            raise ValueError(f"column {header[obj.column]}: {value!r} is not an integer")
        return str(int(value))
    check = _NUMERIC.get(obj.datatype)
    if check is not None:
        try:
            check(value)
        except (ValueError, InvalidOperation):
            raise ValueError(f"column {header[obj.column]}: {value!r} is not an {obj.datatype.split('#')[-1]}") \
                from None
    return rdf_term(Literal(value, datatype=obj.datatype))


def read_csv(lines: Iterable[str], mapping: Mapping, first_line: int = 1,
             replay: float = 0.0) -> Iterator[Record | InputError]:
    """The records of a CSV file's lines (its header, line 1, skipped), a malformed row yielded as
    an :class:`InputError` naming its line. ``replay``: pace the records, ``replay`` time
    points' worth of milliseconds per millisecond of the clock (1: as the times say, in real time)."""
    width = len(mapping.header)
    start = None  # (first time, clock) when replaying
    for number, raw in enumerate(lines, start=first_line):
        if number == 1 or not raw.strip():
            continue
        try:
            row = next(csv.reader([raw]))
            if len(row) != width:
                raise ValueError(f"{len(row)} fields, the header has {width}")
            t = mapping.time(row[mapping.time_column])
            if not -MAX_TIME < t < MAX_TIME:
                raise ValueError(f"the time {t} is beyond ±2^62")
            facts = mapping.triples(row)
        except (ValueError, csv.Error) as err:
            error = InputError(str(err), number)
            error.raw = raw.rstrip("\r\n")
            yield error
            continue
        if replay > 0:
            now = time.monotonic()
            if start is None:
                start = (t, now)
            wait = (t - start[0]) * mapping.unit / 1000 / replay - (now - start[1])
            if wait > 0:
                time.sleep(wait)
        yield Record(number, t, facts, raw.rstrip("\r\n"), mapping.stream)
