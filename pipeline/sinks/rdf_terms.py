"""The RDF terms TriG and N-Quads write (:mod:`pipeline.sinks.rdf`), read from the text dotr
printed them in: a fact's arguments (``rules.engine.terms.format_term``) and the lines of a
pattern's graph (``rules.engine.ntriples``), without building rdflib terms. Each term is written
as rdflib's N-Triples serializer writes it (the same bytes as before this module).

>>> printed_term("7").nt, printed_term('"x"@en').nt, printed_term("<http://ex.org/a>").iri
('"7"^^<http://www.w3.org/2001/XMLSchema#integer>', '"x"@en', 'http://ex.org/a')
>>> trig_text(printed_term("2.5"), [("http://www.w3.org/2001/XMLSchema#", "xsd")])
'"2.5"^^xsd:decimal'
"""

from __future__ import annotations

import re
from typing import NamedTuple

from dotr.rules import ir
from dotr.rules.engine.terms import iri_text
from dotr.rules.lang.errors import FactError

from ..input_facts import parse_fact


class RdfTerm(NamedTuple):
    """One RDF term: its N-Triples text, and what TriG writes with a prefix."""

    nt: str  #: the N-Triples text
    iri: str | None = None  #: the IRI, when the term is one
    quoted: str = ""  #: a literal's quoted lexical form
    datatype: str | None = None  #: a typed literal's datatype IRI


_INTEGER = re.compile(r"-?[0-9]+")
#: a language tag rdflib takes (``rdflib.term._is_valid_langtag``): a fact with another has no triple
_LANG = re.compile(r"[a-zA-Z]+(?:-[a-zA-Z0-9]+)*")
_ESCAPES = {"\\": "\\\\", "\n": "\\n", '"': '\\"', "\r": "\\r"}
_UNSAFE = re.compile(r'[\\\n"\r]')
#: the escapes of an IRI in N-Triples (``iri_text`` writes ``\\uXXXX``)
_IRI_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")


def quoted(lexical: str) -> str:
    """A lexical form quoted as rdflib's N-Triples serializer quotes it.

    >>> print(quoted('a "b"\\\\'))
    "a \\"b\\"\\\\"
    """
    return f'"{_UNSAFE.sub(lambda m: _ESCAPES[m.group()], lexical)}"' if _UNSAFE.search(lexical) else f'"{lexical}"'


def literal(lexical: str, datatype: str | None = None, lang: str | None = None) -> RdfTerm | None:
    """A literal (None: a language tag RDF does not take)."""
    text = quoted(lexical)
    if lang:
        return RdfTerm(f"{text}@{lang}", quoted=text) if _LANG.fullmatch(lang) else None
    if datatype:  # (the datatype as rdflib writes it: in full, not escaped)
        return RdfTerm(f"{text}^^<{datatype}>", quoted=text, datatype=datatype)
    return RdfTerm(text, quoted=text)


def iri(value: str) -> RdfTerm:
    return RdfTerm(iri_text(value), iri=value)


def printed_term(text: str) -> RdfTerm | None:
    """The RDF term of a printed term: numerals typed as Turtle types them, a plain constant a
    plain literal (None: one RDF has no term for).

    >>> printed_term("roomA").nt, printed_term("1e+20").nt[-7:], printed_term("<a\\\\u003Eb>").iri
    ('"roomA"', 'double>', 'a>b')
    """
    if text.startswith("<") and "\\" not in text:
        return iri(text[1:-1])
    if _INTEGER.fullmatch(text):
        return literal(text, ir.XSD + "integer")
    try:
        term = parse_fact(f"x({text})").args[0]
    except FactError:  # (not a term: a fact whose predicate IRI holds ">(" splits elsewhere)
        return None
    if isinstance(term, ir.Iri):  # (one with escapes)
        return iri(term.value)
    if isinstance(term, ir.Literal):
        return literal(term.lexical, term.datatype, term.lang)
    if isinstance(term, ir.Num):
        kind = "integer" if isinstance(term.value, int) else "double" if "e" in text.lower() else "decimal"
        return literal(text, ir.XSD + kind)
    return literal(str(term.value))


#: a fact's two arguments: IRIs (escaped: no ``>`` inside), literals (a quote inside escaped) with
#: a language tag or datatype, or a name or number (up to the comma)
_ARG = r'<[^>]*>|"(?:[^"\\]|\\.)*"(?:@[^,]*|\^\^<[^>]*>)?|[^,"<][^,]*'
_TWO_ARGS = re.compile(rf"({_ARG}),({_ARG})", re.DOTALL)


def triple_args(args: str) -> tuple[str, str] | None:
    """The two argument texts of a triple's printed arguments (None: not two).

    >>> triple_args('<http://ex.org/a,b>,"x, \\\\"y\\\\""'), triple_args("a,b,c"), triple_args('"a,b"')
    (('<http://ex.org/a,b>', '"x, \\\\"y\\\\""'), None, None)
    """
    match = _TWO_ARGS.fullmatch(args)
    return None if match is None else (match.group(1), match.group(2))


#: a line of a graph dotr wrote in N-Triples (``rules.engine.ntriples.document``)
_NT_LINE = re.compile(r'(<[^>]*>|"(?:[^"\\]|\\.)*"\S*) (<[^>]*>) (<[^>]*>|"(?:[^"\\]|\\.)*"(?:@\S+|\^\^<[^>]*>)?) \.')
_NT_LITERAL = re.compile(r'("(?:[^"\\]|\\.)*")(?:@(\S+)|\^\^<([^>]*)>)?')


def ntriples_line(line: str) -> tuple[RdfTerm, RdfTerm, RdfTerm] | None:
    """The terms of a line of N-Triples (None: a literal subject, which RDF has not).

    >>> s, p, o = ntriples_line('<http://ex.org/a> <http://ex.org/p> "5"^^<http://ex.org/t> .')
    >>> s.iri, o.quoted, o.datatype
    ('http://ex.org/a', '"5"', 'http://ex.org/t')
    """
    match = _NT_LINE.fullmatch(line)
    if match is None or match.group(1)[0] == '"':
        return None
    s, p, o = match.groups()
    if o[0] == "<":
        return _nt_iri(s), _nt_iri(p), _nt_iri(o)
    text, lang, datatype = _NT_LITERAL.fullmatch(o).groups()  # type: ignore[union-attr]
    return _nt_iri(s), _nt_iri(p), RdfTerm(o, quoted=text, datatype=None if lang else datatype)


def _nt_iri(text: str) -> RdfTerm:
    value = text[1:-1]
    if "\\" in value:
        value = _IRI_ESCAPE.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)), value)
    return iri(value)


#: a local name that can be written after a prefix as it is (a subset of Turtle's PN_LOCAL)
_LOCAL = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")


def trig_iri(value: str, prefixes: list[tuple[str, str]]) -> str:
    """An IRI in TriG: with a prefix (the first namespace of ``prefixes``, ``(namespace, name)``
    longest first, that leaves a plain local name), else in full."""
    for ns, name in prefixes:
        if value.startswith(ns) and _LOCAL.fullmatch(value, len(ns)):
            return f"{name}:{value[len(ns):]}"
    return iri_text(value)


def trig_text(term: RdfTerm, prefixes: list[tuple[str, str]]) -> str:
    """A term in TriG: an IRI with a prefix where one applies, a literal as N-Triples writes it
    with a prefixed datatype."""
    if term.iri is not None:
        return trig_iri(term.iri, prefixes)
    if term.datatype is not None:
        return f"{term.quoted}^^{trig_iri(term.datatype, prefixes)}"
    return term.nt
