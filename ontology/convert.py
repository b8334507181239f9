"""Between rdflib terms and dotr terms, and between facts and int tuples.

>>> from rdflib import URIRef, Literal as RdfLiteral
>>> from_rdflib(RdfLiteral(25))
Num(value=25)
>>> to_rdflib(Iri("http://ex.org/a"))
rdflib.term.URIRef('http://ex.org/a')
"""

from __future__ import annotations

from rdflib import BNode, Literal as RdfLiteral, URIRef
from rdflib.term import Node

from rules.ir import RDF_TYPE, XSD, Atom, Iri, Literal, Name, Num
from rules.terms import TermDictionary, canonical

_TYPE = Iri(RDF_TYPE)
#: blank nodes become IRIs in this namespace (skolemised), so that they can be joined and printed
BNODE_PREFIX = "urn:dotr:bnode:"


def from_rdflib(node: Node):
    """The dotr term for an rdflib term; blank nodes are skolemised to ``urn:dotr:bnode:...``."""
    if isinstance(node, URIRef):
        return Iri(str(node))
    if isinstance(node, BNode):
        return Iri(BNODE_PREFIX + str(node))
    if isinstance(node, RdfLiteral):
        datatype = str(node.datatype) if node.datatype is not None else None
        return canonical(Literal(str(node), datatype, node.language))
    raise TypeError(f"not an RDF term: {node!r}")


def to_rdflib(term) -> Node:
    if isinstance(term, Iri):
        return URIRef(term.value)
    if isinstance(term, Num):
        return RdfLiteral(term.value)
    if isinstance(term, Literal):
        return RdfLiteral(term.lexical, lang=term.lang, datatype=URIRef(term.datatype) if term.datatype else None)
    if isinstance(term, Name):
        return RdfLiteral(term.value)
    raise TypeError(f"not a constant: {term!r}")


def triple_fact(s: Node, p: Node, o: Node, d: TermDictionary) -> tuple[tuple[int, int], tuple[int, int]]:
    """``(relation, fact)`` for an RDF triple: the fact ``p(s, o)``."""
    return (d.intern(from_rdflib(p)), 2), (d.intern(from_rdflib(s)), d.intern(from_rdflib(o)))


def atom_fact(atom: Atom, d: TermDictionary) -> tuple[tuple[int, int], tuple[int, ...]]:
    """``(relation, fact)`` for a ground atom."""
    return (d.intern(atom.pred), len(atom.args)), tuple(d.intern(a) for a in atom.args)


__all__ = ["from_rdflib", "to_rdflib", "triple_fact", "atom_fact", "BNODE_PREFIX", "XSD"]
