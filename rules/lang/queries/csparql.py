"""C-SPARQL and RSP-QL query text: the ``register`` header, stream windows, stream operator and
dataset.

The text after ``query Name :=`` is read in two parts. This module tokenizes the clauses of the
stream languages: C-SPARQL's (``register ... compute every D as``, ``select|construct|ask
[rstream|istream|dstream]``, ``from stream <iri> [range R step S]`` / ``[range R tumbling]`` /
``[triples N]``) and RSP-QL's (``register rstream|istream|dstream <iri> as``, ``from named window
<w> on <stream> [range R step S]``, ``window <w> { ... }``); the rest (prefixes, the select,
construct or ask clause, ``from <file>``, ``from named <file>``, ``where``, ``group by``,
``having``) is standard SPARQL and goes to rdflib's parser with the stream clauses blanked out
and ``window`` written ``graph``, so that every position still points into the rule file.
Durations are numbers with an optional unit or ISO 8601 durations (``PT10S``). The files a
``from`` clause names are resolved against the rule file's folder and must exist.

>>> from dotr.rules.lang.ir import QueryDecl, SparqlText, Span
>>> text = '''register compute every 1 s as select ?o (count(?v) as ?n)
...   from stream <http://ex.org/s1> [range 3 s step 1 s]
...   from stream <http://ex.org/s2> [triples 10]
...   where { ?o <http://ex.org/hasValue> ?v } group by ?o'''
>>> q, diags = parse_csparql(QueryDecl("Q", SparqlText(text, span=Span("r.dotr", 3, 12))), {}, ms=True)
>>> diags, q.every, q.form, q.stream_op
([], 1000, 'select', 'rstream')
>>> [(w.stream, w.range, w.step, w.triples) for w in q.windows]
[('http://ex.org/s1', 3000, 1000, None), ('http://ex.org/s2', None, None, 10)]
>>> _, diags = parse_csparql(QueryDecl("Q", SparqlText(text.replace("3 s", "3 days"), span=Span("r.dotr", 3, 12))), {}, ms=True)
>>> [(d.code, str(d.span)) for d in diags]
[('E410', 'r.dotr:4:43')]
>>> q, _ = parse_csparql(QueryDecl("Q", SparqlText('''REGISTER ISTREAM <http://ex.org/out> AS SELECT ?s
...   FROM NAMED WINDOW <http://ex.org/w> ON <http://ex.org/s1> [RANGE PT10S STEP PT5S]
...   WHERE { WINDOW <http://ex.org/w> { ?s a <http://ex.org/Hot> } }''')), {}, ms=True)
>>> q.stream_op, q.every, [(w.name, w.stream, w.range, w.step) for w in q.windows]
('istream', 5000, [('http://ex.org/w', 'http://ex.org/s1', 10000, 5000)])
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from math import gcd
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from ..errors import Diagnostic, UsageError
from ..ir import UNIT_MS, QueryDecl, SparqlText, Span, iso_duration_ms
from . import joins
from .sparql import _translate

STREAM_OPS = ("rstream", "istream", "dstream")


@dataclass(frozen=True)
class StreamWindow:
    """``from stream <stream> [range R step S]`` (time units of the rule file: ticks or ms) or
    ``[triples N]`` (the last N triples of the stream); ``name``: an RSP-QL window's IRI (its
    content is the named graph ``window <name> { ... }`` reads; a C-SPARQL window's content is in
    the default graph)."""

    stream: str
    range: int | None = None
    step: int | None = None
    triples: int | None = None
    name: str | None = None


@dataclass(frozen=True)
class CSparqlQuery:
    """A checked C-SPARQL or RSP-QL query. ``every`` is the evaluation period (time units of the
    rule file); ``sparql`` is the SPARQL part for rdflib (stream clauses blanked, same span).
    ``background``: the files of its ``from`` clauses (their merge is the background of its
    default graph), ``named``: ``(graph IRI, file)`` of its ``from named`` clauses; a query with
    neither reads the reasoner's background."""

    name: str
    form: str  # "select" | "construct" | "ask"
    stream_op: str  # "rstream" | "istream" | "dstream"
    every: int
    windows: tuple[StreamWindow, ...]
    background: tuple[str, ...]
    sparql: SparqlText
    span: Span | None = None
    named: tuple[tuple[str, str], ...] = ()

    @property
    def dataset(self) -> bool:
        """Whether the query names its background (``from`` or ``from named`` files)."""
        return bool(self.background or self.named)


def is_csparql(text: SparqlText) -> bool:
    """Whether a query declaration's text is C-SPARQL or RSP-QL (it starts with ``register``)."""
    head = text.text.lstrip()
    return head[:8].lower() == "register" and head[8:9].isspace()


_TOKEN = re.compile(r'''
    (?P<ws>\s+|\#[^\n]*)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  | (?P<iri><[^<>"{}|^`\\\s]*>)
  | (?P<number>\d+(?:\.\d+)?)
  | (?P<iso>P(?=\d|T\d)[0-9YMWDTHS.]+(?![\w.]))
  | (?P<word>[A-Za-z_][\w-]*(?::[\w.-]*[\w-])?|:[\w.-]*[\w-]|:)
  | (?P<punct>.)
''', re.VERBOSE | re.DOTALL)


_AFTER_DURATION = ("step", "tumbling", "as")


class _Error(Exception):
    def __init__(self, code: str, message: str, offset: int, hint: str | None = None):
        self.code, self.message, self.offset, self.hint = code, message, offset, hint


class _Reader:
    """Tokens of the text (with offsets), skipping white space; brace depth is tracked so that
    C-SPARQL clauses are only recognised outside ``{ ... }``."""

    def __init__(self, text: str):
        self.text = text
        self.tokens = [(m.lastgroup, m.group(), m.start()) for m in _TOKEN.finditer(text) if m.lastgroup != "ws"]
        self.i = 0

    def peek(self, k: int = 0) -> tuple[str, str, int]:
        j = self.i + k
        return self.tokens[j] if j < len(self.tokens) else ("end", "", len(self.text))

    def next(self) -> tuple[str, str, int]:
        token = self.peek()
        self.i += 1
        return token

    def word(self, k: int = 0) -> str:
        kind, value, _ = self.peek(k)
        return value.lower() if kind == "word" else ""

    def expect(self, word: str, what: str) -> int:
        kind, value, offset = self.next()
        if kind != "word" or value.lower() != word:
            raise _Error("E410", f"expected '{word}' {what}, found {value or 'the end'!r}", offset)
        return offset

    def duration(self, ms: bool, what: str) -> int:
        """``3 s``, ``3s``, ``500 ms``, ``1 min``, ``PT3S`` (with ``@timeunit ms``) or ``3``
        (ticks / ms)."""
        kind, value, offset = self.next()
        unit, number = None, value
        if kind == "iso":
            amount = iso_duration_ms(value)
            if amount is None:
                raise _Error("E411", f"{value} {what} is not a duration dotr reads", offset,
                             "write PnW, PnD, PTnH, PTnM, PTnS (no years or months)")
            if not ms:
                raise _Error("E305", f"duration {value} uses a time unit", offset,
                             "declare '@timeunit ms .' or give the duration in ticks")
            if not amount.is_integer() or amount <= 0:
                raise _Error("E411", f"duration {value} {what} is not a positive whole number of milliseconds",
                             offset)
            return int(amount)
        if kind == "number":
            attached = self.peek()[2] == offset + len(value)
            if self.peek()[0] == "word" and (attached or self.word() not in _AFTER_DURATION):
                _, unit, unit_offset = self.next()
        else:
            raise _Error("E410", f"expected a duration {what}, found {value or 'the end'!r}", offset,
                         "write a number with an optional unit (3 s, 500 ms, 1 min) or PT3S")
        if unit is not None and unit.lower() not in UNIT_MS:
            raise _Error("E410", f"unknown time unit {unit!r} {what}", unit_offset,
                         f"the units are: {', '.join(UNIT_MS)}")
        if unit is not None and not ms:
            raise _Error("E305", f"duration {number} {unit} uses a time unit", offset,
                         "declare '@timeunit ms .' or give the duration in ticks")
        amount = float(number) * (UNIT_MS[unit.lower()] if unit else 1)
        if not amount.is_integer() or amount <= 0:
            raise _Error("E411", f"duration {number}{' ' + unit if unit else ''} {what} is not a positive "
                         "whole number of time units", offset)
        return int(amount)


def _span_at(text: SparqlText, offset: int) -> Span | None:
    if text.span is None:
        return None
    before = text.text[:offset]
    line = before.count("\n")
    if line == 0:
        return Span(text.span.path, text.span.line, text.span.column + offset)
    return Span(text.span.path, text.span.line + line, offset - before.rfind("\n"))


def _expand(name: str, kind: str, prefixes: dict[str, str], offset: int) -> str:
    if kind == "iri":
        return name[1:-1]
    prefix, _, local = name.partition(":")
    if prefix not in prefixes:
        raise _Error("E304", f"unknown prefix '{prefix}:'", offset, f"declare it: @prefix {prefix}: <...> .")
    return prefixes[prefix] + local


def _window(reader: _Reader, stream: str, ms: bool, name: str | None = None) -> StreamWindow:
    kind, value, offset = reader.next()
    if value != "[":
        raise _Error("E410", f"expected a window [range R step S] or [triples N] after the stream, found "
                     f"{value or 'the end'!r}", offset)
    word = reader.word()
    if word == "triples":
        reader.next()
        kind, value, offset = reader.next()
        if kind != "number" or not value.isdigit() or int(value) == 0:
            raise _Error("E411", f"a triple window counts triples: expected a positive whole number, found "
                         f"{value or 'the end'!r}", offset)
        result = StreamWindow(stream, triples=int(value), name=name)
    elif word == "range":
        reader.next()
        size = reader.duration(ms, "in the window range")
        offset = reader.peek()[2]
        if reader.word() == "tumbling":
            reader.next()
            step = size
        else:
            reader.expect("step", "after the window range (or 'tumbling')")
            offset = reader.peek()[2]
            step = reader.duration(ms, "in the window step")
        if step > size:
            raise _Error("E411", "the window step is longer than its range: some triples would be in no window",
                         offset, "use a step no longer than the range")
        result = StreamWindow(stream, range=size, step=step, name=name)
    else:
        raise _Error("E410", f"expected 'range' or 'triples' in the window, found {reader.peek()[1]!r}",
                     reader.peek()[2])
    kind, value, offset = reader.next()
    if value != "]":
        raise _Error("E410", f"expected ']' to close the window, found {value or 'the end'!r}", offset)
    return result


def _resource(reader: _Reader, prefixes: dict[str, str], what: str) -> tuple[str, int]:
    """The IRI (written ``<...>`` or as a prefixed name) that comes next, and its offset."""
    kind, name, offset = reader.next()
    if kind not in ("iri", "word") or (kind == "word" and ":" not in name):
        raise _Error("E410", f"expected {what}, found {name or 'the end'!r}", offset)
    return _expand(name, kind, prefixes, offset), offset


def resolve_file(iri: str, base: Path) -> Path:
    """The file a ``from`` clause names: a path or a ``file:`` IRI, relative ones against the
    rule file's folder (``base``). Raises :class:`UsageError` for what dotr does not read (a network
    IRI) and FileNotFoundError for a file that is not there.

    >>> import tempfile, os; folder = Path(tempfile.mkdtemp()); _ = (folder / "city.ttl").write_text("")
    >>> resolve_file("city.ttl", folder) == folder / "city.ttl", resolve_file(f"file://{folder}/city.ttl", folder).name
    (True, 'city.ttl')
    >>> resolve_file("http://127.0.0.1:9000/city.rdf", folder)
    Traceback (most recent call last):
    dotr.rules.lang.errors.UsageError: dotr reads background files, never the network: <http://127.0.0.1:9000/city.rdf>
    """
    parsed = urlparse(iri)
    if parsed.scheme == "file":
        path = Path(unquote(parsed.path))
    elif parsed.scheme and len(parsed.scheme) > 1:  # (a one-letter scheme is a drive)
        raise UsageError(f"dotr reads background files, never the network: <{iri}>")  # (E412 at the caller)
    else:
        path = Path(unquote(iri))
    path = path if path.is_absolute() else base / path
    if not path.is_file():
        raise FileNotFoundError(f"no background file {str(path)!r} (from <{iri}>)")
    return path


def _base(decl: QueryDecl, text: SparqlText) -> Path:
    """The folder relative ``from`` files are resolved against: the rule file's."""
    span = text.span or decl.span
    if span is None or span.path.startswith("<"):
        return Path.cwd()
    return Path(span.path).resolve().parent


def parse_csparql(decl: QueryDecl, prefixes: dict[str, str], ms: bool
                  ) -> tuple[CSparqlQuery | None, list[Diagnostic]]:
    """The query (C-SPARQL, or RSP-QL when ``register`` is followed by a stream operator) and its
    diagnostics (``ms``: the rule file declares ``@timeunit ms``)."""
    text = decl.query
    chars = list(text.text)

    def blank(start: int, end: int) -> None:
        for k in range(start, end):
            if chars[k] != "\n":
                chars[k] = " "
    try:
        reader = _Reader(text.text)
        start = reader.expect("register", "at the start of a C-SPARQL or RSP-QL query")
        rspql = reader.word() in STREAM_OPS
        stream_op, every = "rstream", None
        if rspql:  # REGISTER RSTREAM <out> AS
            stream_op = reader.next()[1].lower()
            _resource(reader, prefixes, f"the IRI of the stream the query writes after 'register {stream_op}'")
        else:
            if reader.word() in ("query", "stream"):
                reader.next()
                if reader.peek()[0] == "word" and reader.word() not in ("compute", "as"):
                    reader.next()  # the C-SPARQL name: the declaration's name is the one used
            if reader.word() == "compute":
                reader.next()
                reader.expect("every", "after 'compute'")
                every = reader.duration(ms, "after 'compute every'")
        as_offset = reader.expect("as", "before the query (register ... compute every D as select ..., or "
                                  "register rstream <iri> as select ...)")
        blank(start, as_offset + 2)
        body = reader.peek()[2]
        form, windows, background, named, depth = None, [], [], [], 0
        read_windows: list[tuple[str, int]] = []  # RSP-QL: the windows its WINDOW blocks name
        base = _base(decl, text)
        while reader.peek()[0] != "end":
            kind, value, offset = reader.peek()
            word = value.lower() if kind == "word" else ""
            if value == "{":
                depth += 1
            elif value == "}":
                depth -= 1
            elif depth == 0 and word in ("select", "construct", "ask") and form is None:
                form = word
                if reader.word(1) in STREAM_OPS:
                    if rspql:
                        raise _Error("E410", "an RSP-QL query names its stream operator after 'register'",
                                     reader.peek(1)[2])
                    stream_op = reader.word(1)
                    op_offset = reader.peek(1)[2]
                    blank(op_offset, op_offset + len(stream_op))
                    reader.next()
            elif depth == 0 and word == "from":
                after = reader.word(1)
                if after == "stream" and not rspql:  # C-SPARQL: from stream <s> [window]
                    reader.next(), reader.next()
                    stream, _ = _resource(reader, prefixes, "the stream's IRI after 'from stream'")
                    windows.append(_window(reader, stream, ms))
                    blank(offset, reader.peek(-1)[2] + 1)
                    continue
                if after == "named" and reader.word(2) == "window" and rspql:  # from named window <w> on <s> [window]
                    reader.next(), reader.next(), reader.next()
                    name, name_offset = _resource(reader, prefixes, "the window's IRI after 'from named window'")
                    if any(w.name == name for w in windows):
                        raise _Error("E410", f"window <{name}> is declared twice", name_offset)
                    reader.expect("on", "after the window's IRI (from named window <w> on <stream> [range R step S])")
                    if reader.word() == "stream":
                        reader.next()
                    stream, _ = _resource(reader, prefixes, "the stream's IRI after 'on'")
                    windows.append(_window(reader, stream, ms, name))
                    blank(offset, reader.peek(-1)[2] + 1)
                    continue
                target = 2 if after == "named" else 1
                kind, name, name_offset = reader.peek(target)
                if kind in ("iri", "word") and (kind == "iri" or ":" in name):
                    iri = _expand(name, kind, prefixes, name_offset)
                    try:
                        path = str(resolve_file(iri, base))
                    except (ValueError, OSError) as err:
                        raise _Error("E412", str(err), name_offset,
                                     "name a file: from <city.ttl> (relative to the rule file's folder) "
                                     "or from <file:///...>") from None
                    if after == "named":
                        named.append((iri, path))
                    else:
                        background.append(path)
            elif depth > 0 and word == "window" and rspql and reader.peek(-1)[1] not in ("?", "$"):
                kind, name, name_offset = reader.peek(1)
                if kind in ("iri", "word"):
                    read_windows.append((_expand(name, kind, prefixes, name_offset), name_offset))
                chars[offset:offset + 6] = "GRAPH "  # (as long as WINDOW: positions are kept)
            reader.next()
        if form is None:
            raise _Error("E410", "expected 'select', 'construct' or 'ask' after 'as'", body)
        if form == "ask" and stream_op != "rstream":
            raise _Error("E410", f"an ASK query reports its answer at every evaluation: {stream_op} does not apply",
                         body, "leave the stream operator out (RStream)")
        if not windows:
            raise _Error("E410", "an RSP-QL query reads at least one window: from named window <w> on <stream> "
                         "[range R step S]" if rspql else
                         "a C-SPARQL query reads at least one stream: from stream <iri> [range R step S]", body)
        for name, name_offset in read_windows:
            if not any(w.name == name for w in windows):
                raise _Error("E410", f"window <{name}> is not declared", name_offset,
                             "declare it: from named window <w> on <stream> [range R step S]")
        steps = [w.step for w in windows if w.step is not None]
        if every is None:
            if not steps:
                raise _Error("E411", "a query whose windows all count triples needs 'compute every D'", start)
            every = 0
            for step in steps:
                every = gcd(every, step)
    except _Error as err:
        return None, [Diagnostic(err.code, err.message, _span_at(text, err.offset) or decl.span, err.hint)]
    sparql = SparqlText("".join(chars), span=text.span)
    query, diags = _translate(sparql.text, sparql, prefixes)
    if query is None:
        return None, diags
    return CSparqlQuery(decl.name, form, stream_op, every, tuple(windows), tuple(background), sparql,
                        decl.span, tuple(named)), joins.query_warnings(sparql, query.algebra["p"], f"query {decl.name}")


def translate(query: CSparqlQuery, prefixes: dict[str, str]) -> Any:
    """rdflib's parsed and translated SPARQL part of a checked query."""
    translated, diags = _translate(query.sparql.text, query.sparql, prefixes)
    assert translated is not None, diags
    return translated
