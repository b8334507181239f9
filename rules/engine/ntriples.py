"""Graphs as N-Triples text, written as rdflib's serializer writes them (the canonical form of a
graph in ``Result.graphs``): a sorted document, each triple once.

>>> from dotr.rules import ir
>>> document([(ir.Iri("http://ex.org/f"), ir.Iri("http://ex.org/temp"), ir.Num(52))])
'<http://ex.org/f> <http://ex.org/temp> "52"^^<http://www.w3.org/2001/XMLSchema#integer> .\\n'

A term known by its id is written from a cache (:class:`IdTexts`), so that graphs built from
term ids (the patterns' ``construct``) need no term objects:

>>> from dotr.rules.engine.terms import TermDictionary, iri_text
>>> d = TermDictionary()
>>> texts = IdTexts(d)
>>> texts.subject(d.intern(ir.Iri("http://ex.org/f"))), texts.object(d.number(52))
('<http://ex.org/f>', '"52"^^<http://www.w3.org/2001/XMLSchema#integer>')
"""

from __future__ import annotations

import re

from dotr.rules.lang import ir
from dotr.rules.engine.terms import FIRST_INT_ID, INT_OFFSET, TermDictionary, iri_text

_PLAIN_IRI = re.compile(r"[^<>\"{}|^`\\\s\x00-\x20]+")
_XSD_INTEGER = "http://www.w3.org/2001/XMLSchema#integer"
_TERMS: dict = {}  # (term, in object position) -> its text, but for plain IRIs
_IRIS: dict[str, str] = {}  # plain IRI (no escapes needed) -> its text


def term_text(term, obj: bool = False) -> str:
    """The N-Triples text of a dotr term (``obj``: in object position, where a literal is
    written as rdflib writes an object)."""
    if type(term) is ir.Iri:
        value = term.value
        text = _IRIS.get(value)
        if text is not None:
            return text
        if len(_IRIS) > 100_000:
            _IRIS.clear()
        text = _IRIS[value] = f"<{value}>" if _PLAIN_IRI.fullmatch(value) else iri_text(value)
        return text
    elif type(term) is ir.Num and type(term.value) is int:  # (as rdflib writes an integer)
        return f'"{term.value}"^^<{_XSD_INTEGER}>'
    # Num(0) == Num(0.0) == Num(-0.0) in Python, not in N-Triples
    key = (term, obj, repr(term.value)) if type(term) is ir.Num else (term, obj)
    text = _TERMS.get(key)
    if text is None:
        if len(_TERMS) > 100_000:
            _TERMS.clear()
        from rdflib.plugins.serializers.nt import _quoteLiteral  # (rdflib: at the first literal)
        from rdflib.term import Literal as RdfLiteral

        node = to_rdflib(term)
        text = _TERMS[key] = _quoteLiteral(node) if obj and isinstance(node, RdfLiteral) else node.n3()
    return text


def document(triples) -> str:
    """A graph (triples of terms) as a sorted N-Triples document, each triple once."""
    return "".join(sorted({f"{term_text(s)} {term_text(p)} {term_text(o, True)} .\n" for s, p, o in triples}))


def document_with_rdflib(triples) -> str:
    """:func:`document` through rdflib's serializer (its reference)."""
    from rdflib import Graph

    g = Graph()
    for tr in triples:
        g.add(tuple(to_rdflib(x) for x in tr))
    lines = sorted(line for line in g.serialize(format="nt").splitlines() if line.strip())
    return "\n".join(lines) + "\n"


class IdTexts:
    """The N-Triples text of term ids of ``dictionary``, in subject or predicate position and in
    object position (they differ only for some literals), each written once and then looked up
    (a bounded cache: a long stream's fresh terms do not grow it for ever). An id keeps its term
    for the cache's life: after ``TermDictionary.truncate``, make a new one."""

    def __init__(self, dictionary: TermDictionary, bound: int = 200_000):
        self.dictionary, self.bound = dictionary, bound
        self._texts: dict[int, tuple[str, str]] = {}

    def both(self, term_id: int) -> tuple[str, str]:
        """(subject text, object text) of ``term_id``."""
        texts = self._texts.get(term_id)
        if texts is None:
            if len(self._texts) > self.bound:
                self._texts.clear()
            if term_id >= FIRST_INT_ID:  # an integer (its id holds it: no term made), as term_text writes it
                text = f'"{term_id - INT_OFFSET}"^^<{_XSD_INTEGER}>'
                texts = self._texts[term_id] = (text, text)
            else:
                term = self.dictionary.term(term_id)
                texts = self._texts[term_id] = (term_text(term), term_text(term, True))
        return texts

    def subject(self, term_id: int) -> str:
        return self.both(term_id)[0]

    def object(self, term_id: int) -> str:
        return self.both(term_id)[1]


def to_rdflib(term):
    """The rdflib term of a dotr term (a name as a plain literal).

    >>> to_rdflib(ir.Iri("http://ex.org/a"))
    rdflib.term.URIRef('http://ex.org/a')
    """
    from rdflib.term import Literal as RdfLiteral, URIRef  # (rdflib: imported by what needs it)

    if isinstance(term, ir.Iri):
        return URIRef(term.value)
    if isinstance(term, ir.Num):
        return RdfLiteral(term.value)
    if isinstance(term, ir.Literal):
        return RdfLiteral(term.lexical, lang=term.lang, datatype=URIRef(term.datatype) if term.datatype else None)
    if isinstance(term, ir.Name):
        return RdfLiteral(term.value)
    raise TypeError(f"not a constant: {term!r}")
