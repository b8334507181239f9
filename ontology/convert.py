"""Between rdflib terms and dotr terms, and between facts and int tuples.

>>> from rdflib import URIRef, Literal as RdfLiteral
>>> from_rdflib(RdfLiteral(25))
Num(value=25)
>>> to_rdflib(Iri("http://ex.org/a"))
rdflib.term.URIRef('http://ex.org/a')
"""

from __future__ import annotations

from dotr.rules.lang.ir import RDF_TYPE, XSD, Atom, Iri
from dotr.rules.lang.queries.sparql import BNODE_PREFIX, rdf_term
from dotr.rules.engine.inputs import rdflib_node_types
from dotr.rules.engine.ntriples import to_rdflib
from dotr.rules.engine.terms import TermDictionary

from_rdflib = rdf_term  # the dotr term for an rdflib term; blank nodes skolemised


def triple_fact(s, p, o, d: TermDictionary) -> tuple[tuple[int, int], tuple[int, int]]:
    """``(relation, fact)`` for an RDF triple: the fact ``p(s, o)``."""
    return (d.intern(from_rdflib(p)), 2), (d.intern(from_rdflib(s)), d.intern(from_rdflib(o)))


def atom_fact(atom: Atom, d: TermDictionary) -> tuple[tuple[int, int], tuple[int, ...]]:
    """``(relation, fact)`` for a ground atom."""
    return (d.intern(atom.pred), len(atom.args)), tuple(d.intern(a) for a in atom.args)


def intern_fact(fact, d: TermDictionary, cache: dict | None = None) -> tuple:
    """``(relation, fact)`` for a stream fact: a ground atom (``C(s)`` with an IRI class is the
    triple ``s rdf:type C``), an RDF triple of rdflib terms (``cache`` maps rdflib terms to ids,
    to skip conversion), or an already interned ``(relation, int tuple)``."""
    if type(fact) is tuple and len(fact) == 2:  # already interned (checked first: the common case)
        return fact
    if isinstance(fact, Atom):
        if isinstance(fact.pred, Iri) and len(fact.args) == 1:
            fact = Atom(Iri(RDF_TYPE), (fact.args[0], fact.pred))
        return atom_fact(fact, d)
    rdflib_types = rdflib_node_types()
    if len(fact) == 3 and rdflib_types is not None and isinstance(fact[1], rdflib_types[0]):
        ids = cache if cache is not None else {}
        try:
            s, p, o = ids[fact[0]], ids[fact[1]], ids[fact[2]]
        except KeyError:
            for node in fact:
                if node not in ids:
                    ids[node] = d.intern(from_rdflib(node))
            s, p, o = ids[fact[0]], ids[fact[1]], ids[fact[2]]
        return (p, 2), (s, o)
    return fact


__all__ = ["from_rdflib", "to_rdflib", "triple_fact", "atom_fact", "intern_fact", "BNODE_PREFIX", "XSD"]
