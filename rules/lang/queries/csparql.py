"""C-SPARQL query text: the ``register`` header, stream windows and stream operator.

The text after ``query Name :=`` is read in two parts. This module tokenizes the C-SPARQL
clauses (``register ... compute every D as``, ``select|construct [rstream|istream|dstream]``,
``from stream <iri> [range R step S]`` / ``[range R tumbling]`` / ``[triples N]``); the rest
(prefixes, the select or construct clause, ``from <background>``, ``where``, ``group by``,
``having``) is standard SPARQL and goes to rdflib's parser with the C-SPARQL clauses blanked out,
so that every position still points into the rule file.

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
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from math import gcd
from typing import Any

from ..errors import Diagnostic
from ..ir import UNIT_MS, QueryDecl, SparqlText, Span
from .sparql import _translate

STREAM_OPS = ("rstream", "istream", "dstream")


@dataclass(frozen=True)
class StreamWindow:
    """``from stream <stream> [range R step S]`` (time units of the rule file: ticks or ms) or
    ``[triples N]`` (the last N triples of the stream)."""

    stream: str
    range: int | None = None
    step: int | None = None
    triples: int | None = None


@dataclass(frozen=True)
class CSparqlQuery:
    """A checked C-SPARQL query. ``every`` is the evaluation period (time units of the rule
    file); ``sparql`` is the SPARQL part for rdflib (C-SPARQL clauses blanked, same span)."""

    name: str
    form: str  # "select" | "construct"
    stream_op: str  # "rstream" | "istream" | "dstream"
    every: int
    windows: tuple[StreamWindow, ...]
    background: tuple[str, ...]
    sparql: SparqlText
    span: Span | None = None


def is_csparql(text: SparqlText) -> bool:
    """Whether a query declaration's text is C-SPARQL (it starts with ``register``)."""
    head = text.text.lstrip()
    return head[:8].lower() == "register" and head[8:9].isspace()


_TOKEN = re.compile(r'''
    (?P<ws>\s+)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  | (?P<iri><[^<>"{}|^`\\\s]*>)
  | (?P<number>\d+(?:\.\d+)?)
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
        """``3 s``, ``3s``, ``500 ms``, ``1 min`` (with ``@timeunit ms``) or ``3`` (ticks / ms)."""
        kind, value, offset = self.next()
        unit, number = None, value
        if kind == "number":
            attached = self.peek()[2] == offset + len(value)
            if self.peek()[0] == "word" and (attached or self.word() not in _AFTER_DURATION):
                _, unit, unit_offset = self.next()
        else:
            raise _Error("E410", f"expected a duration {what}, found {value or 'the end'!r}", offset,
                         "write a number with an optional unit: 3 s, 500 ms, 1 min")
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


def _window(reader: _Reader, stream: str, ms: bool) -> StreamWindow:
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
        result = StreamWindow(stream, triples=int(value))
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
        result = StreamWindow(stream, range=size, step=step)
    else:
        raise _Error("E410", f"expected 'range' or 'triples' in the window, found {reader.peek()[1]!r}",
                     reader.peek()[2])
    kind, value, offset = reader.next()
    if value != "]":
        raise _Error("E410", f"expected ']' to close the window, found {value or 'the end'!r}", offset)
    return result


def parse_csparql(decl: QueryDecl, prefixes: dict[str, str], ms: bool
                  ) -> tuple[CSparqlQuery | None, list[Diagnostic]]:
    """The query and its diagnostics (``ms``: the rule file declares ``@timeunit ms``)."""
    text = decl.query
    chars = list(text.text)

    def blank(start: int, end: int) -> None:
        for k in range(start, end):
            if chars[k] != "\n":
                chars[k] = " "
    try:
        reader = _Reader(text.text)
        start = reader.expect("register", "at the start of a C-SPARQL query")
        if reader.word() in ("query", "stream"):
            reader.next()
            if reader.peek()[0] == "word" and reader.word() not in ("compute", "as"):
                reader.next()  # the C-SPARQL name: the declaration's name is the one used
        every = None
        if reader.word() == "compute":
            reader.next()
            reader.expect("every", "after 'compute'")
            every = reader.duration(ms, "after 'compute every'")
        as_offset = reader.expect("as", "before the query (register ... compute every D as select ...)")
        blank(start, as_offset + 2)
        body = reader.peek()[2]
        form, stream_op, windows, background, depth = None, "rstream", [], [], 0
        while reader.peek()[0] != "end":
            kind, value, offset = reader.peek()
            if value == "{":
                depth += 1
            elif value == "}":
                depth -= 1
            elif depth == 0 and kind == "word" and value.lower() in ("select", "construct") and form is None:
                form = value.lower()
                if reader.word(1) in STREAM_OPS:
                    stream_op = reader.word(1)
                    op_offset = reader.peek(1)[2]
                    blank(op_offset, op_offset + len(stream_op))
                    reader.next()
            elif depth == 0 and kind == "word" and value.lower() == "from":
                if reader.word(1) == "stream":
                    reader.next(), reader.next()
                    kind, name, name_offset = reader.next()
                    if kind not in ("iri", "word") or (kind == "word" and ":" not in name):
                        raise _Error("E410", f"expected the stream's IRI after 'from stream', found {name!r}",
                                     name_offset)
                    windows.append(_window(reader, _expand(name, kind, prefixes, name_offset), ms))
                    blank(offset, reader.peek(-1)[2] + 1)
                    continue
                if reader.word(1) != "named":
                    kind, name, name_offset = reader.peek(1)
                    if kind in ("iri", "word"):
                        background.append(_expand(name, kind, prefixes, name_offset))
            reader.next()
        if form is None:
            raise _Error("E410", "expected 'select' or 'construct' after 'as'", body)
        if not windows:
            raise _Error("E410", "a C-SPARQL query reads at least one stream: from stream <iri> [range R step S]",
                         body)
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
                        decl.span), []


def translate(query: CSparqlQuery, prefixes: dict[str, str]) -> Any:
    """rdflib's parsed and translated SPARQL part of a checked query."""
    translated, diags = _translate(query.sparql.text, query.sparql, prefixes)
    assert translated is not None, diags
    return translated
