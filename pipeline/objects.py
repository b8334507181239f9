"""A reasoner's results as the objects a Python program works with: each fact as an atom of dotr
terms (:func:`atoms`), a time point's triples as an rdflib ``Graph`` (:func:`graph`), the facts
of many time points as a pandas DataFrame (:func:`frame`, in the shape ``Reasoner.run`` reads:
``rules.engine.frames``), and a term as a plain value (:func:`value`). They are made on request
from a :class:`~pipeline.records.Result`'s texts: the run itself stays on interned ids.

>>> from dotr.pipeline.records import Result
>>> result = Result(3, ["<http://ex.org/at>(<http://ex.org/s1>,<http://ex.org/roomA>)", "hot(s1,52)"])
>>> atoms(result)[1]
Atom(pred=Name(value='hot'), args=(Name(value='s1'), Num(value=52)))
>>> sorted(graph(result))   # the facts that are triples (an IRI predicate, two arguments)
[(rdflib.term.URIRef('http://ex.org/s1'), rdflib.term.URIRef('http://ex.org/at'), rdflib.term.URIRef('http://ex.org/roomA'))]
>>> print(frame([result]).to_string(index=False))
 t               predicate                  arg1                     arg2
 3 <http://ex.org/at> <http://ex.org/s1> <http://ex.org/roomA>
 3                     hot                    s1                       52
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

import rdflib

from dotr.ontology.convert import to_rdflib
from dotr.rules import ir
from dotr.rules.engine.inputs import parse_fact
from dotr.rules.engine.terms import format_term

from .extras import missing
if TYPE_CHECKING:  # (Result calls atoms and graph as its methods)
    from .records import Result


def atoms(result: Result) -> list[ir.Atom]:
    """The facts of ``result`` as atoms of dotr terms (``ir.Name``, ``ir.Num``, ``ir.Iri``,
    ``ir.Literal``), in the result's order."""
    return [parse_fact(text) for text in result.facts]


def graph(result: Result) -> rdflib.Graph:
    """The triples of ``result``: its facts with an IRI predicate and two arguments (a class
    membership is an ``rdf:type`` triple) and the graphs its patterns and queries built."""
    g = rdflib.Graph()
    for atom in atoms(result):
        if type(atom.pred) is ir.Iri and len(atom.args) == 2:
            g.add((to_rdflib(atom.args[0]), to_rdflib(atom.pred), to_rdflib(atom.args[1])))
    for document in result.graphs:
        g.parse(data=document, format="nt")
    return g


def value(term: ir.Term) -> Any:
    """A term as a DataFrame cell holds it: a number as a Python number, any other term as
    written in a fact (``s1``, ``<http://ex.org/s1>``, ``"Kitchen"@en``), which reads back as the
    same term."""
    if isinstance(term, ir.Var):
        raise TypeError(f"{term!r}: a fact has no variables")
    return term.value if type(term) is ir.Num else format_term(term)


def frame(results: Iterable[Result]) -> Any:
    """The facts of ``results`` as a DataFrame with the columns ``t``, ``predicate``, ``arg1``,
    ``arg2``, ... (a fact with fewer arguments leaves the last cells None): the shape
    ``Reasoner.run`` reads back. Needs pandas (``pip install 'dotr[pandas]'``)."""
    absent = missing("pandas")
    if absent is not None:
        from dotr.rules import MissingDependency

        raise MissingDependency(absent)
    import pandas as pd  # type: ignore[import-untyped]  # (without pandas-stubs)

    rows = [(result.t, atom) for result in results for atom in atoms(result)]
    width = max((len(atom.args) for _, atom in rows), default=0)
    columns: dict[str, list] = {"t": [t for t, _ in rows], "predicate": [value(atom.pred) for _, atom in rows]}
    for i in range(width):
        columns[f"arg{i + 1}"] = [value(atom.args[i]) if i < len(atom.args) else None for _, atom in rows]
    return pd.DataFrame(columns)
