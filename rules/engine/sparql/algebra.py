"""Event queries: SPARQL SELECT (parsed by rdflib) compiled onto the store (a query of one basic
graph pattern with simple filters is compiled without rdflib: ``rules.engine.sparql.events``).

rdflib parses the query and builds its algebra; the planner (``rules.engine.sparql.planner``)
compiles the algebra into operators that run on int ids: the triple patterns of a group and of
the plain groups joined with it become one conjunction whose join order is chosen at each
evaluation from the store's statistics (``rules.engine.sparql.conjunction``), with the filters
pushed in; OPTIONAL, UNION, MINUS, BIND, VALUES, GRAPH, FILTER, DISTINCT, subqueries and GROUP BY
with aggregates work on solutions (dicts variable -> id), joined by hashing or by seeding a
conjunction with them. rdflib's own evaluator is never used.

>>> from dotr.rules import ir, parse
>>> from dotr.rules.engine.backends.dict_store import DictStore
>>> from dotr.rules.engine.terms import TermDictionary
>>> program = parse('''@prefix : <http://ex.org/> .
... event Hot(?s, ?v) := select ?s ?v where { ?s :value ?v filter(?v > 60) } .''')
>>> d, store = TermDictionary(), DictStore()
>>> q = compile_query_event(program.events[0], program.prefixes, d)
>>> value = (d.intern(ir.Iri("http://ex.org/value")), 2)
>>> for sensor, reading in (("a", 70), ("b", 50)):
...     _ = store.add(value, (d.intern(ir.Iri("http://ex.org/" + sensor)), d.intern(ir.Num(reading))), 5)
>>> [tuple(d.term(i) for i in row) for row in q.run(store)]
[(Iri(value='http://ex.org/a'), Num(value=70))]
"""

from __future__ import annotations

from dataclasses import dataclass

from dotr.rules import ir
from dotr.rules.lang.errors import RuleError
from dotr.rules.lang.queries import ParsedQueries
from dotr.rules.lang.queries.sparql import parse_select
from dotr.rules.engine.sparql.events import FAMILIES, CompiledEvent, EventThreshold, compile_rule_event
from dotr.rules.engine.sparql.expr import Solution, UnsupportedQuery
from dotr.rules.engine.sparql.operators import BGP, Dataset, dataset
from dotr.rules.engine.sparql.planner import compile_pattern
from dotr.rules.engine.store import Store
from dotr.rules.engine.terms import TermDictionary

__all__ = ["CompiledEvent", "Dataset", "UnsupportedQuery", "compile_pattern", "compile_query_event",
           "compile_select", "query_threshold"]


def compile_query_event(event: ir.EventDecl, prefixes: dict[str, str], d: TermDictionary,
                        queries: ParsedQueries | None = None) -> CompiledEvent:
    """Compile an ``event`` declaration (SPARQL or rule body) onto the store (``queries``: the
    checked program's parsed queries, so that its SELECT is not parsed again), its SELECT by the
    SPARQL compiler: what ``events.compile_event`` does with a query its own reader does not
    take (``rules.lang.queries.select``), and the reference for those it takes."""
    params = event.attributes
    if event.query is None:
        return compile_rule_event(event, d)
    query = (queries if queries is not None else ParsedQueries()).require(
        "select", event.query, lambda: parse_select(event.query, prefixes))
    root = compile_pattern(query.algebra["p"], d, event.query.span)
    if isinstance(root, BGP) and not root.residual and set(params) <= set(root.vars):  # its rows, no dicts
        conj = root.conj
        if tuple(params) == conj.vars:
            return CompiledEvent(event.name, params, conj.rows, d, conj)
        positions = [conj.vars.index(p) for p in params]
        return CompiledEvent(event.name, params,
                             lambda store: [tuple(row[i] for i in positions) for row in conj.rows(store)], d)

    def run_query(store: Store) -> list[tuple]:
        rows = []
        for sol in root.run(Dataset(store)):
            if all(p in sol for p in params):
                rows.append(tuple(sol[p] for p in params))
        return rows
    return CompiledEvent(event.name, params, run_query, d)


@dataclass
class CompiledSelect:
    """A SPARQL SELECT compiled onto the store: ``run(store)`` gives its solutions (dicts variable
    name -> term id; variables left unbound are absent) over a store or a :class:`Dataset`."""

    text: ir.SparqlText
    _root: object

    def run(self, store: Store | Dataset) -> list[Solution]:
        return self._root.run(dataset(store))


def query_threshold(event: ir.EventDecl, prefixes: dict[str, str], queries: ParsedQueries | None = None
                    ) -> EventThreshold | None:
    """The threshold of ``event`` (see ``events.EventThreshold``) as the SPARQL compiler reads
    its query, or None. Families are compared by their atoms as :class:`TermDictionary` ids of
    one dictionary (``events.FAMILIES``).

    A query dotr's own reader takes (``event_compiler.event_threshold``) and one it leaves to
    rdflib (a nested group) are of one family when their atoms are the same:

    >>> from dotr.rules import parse
    >>> from dotr.rules.engine.sparql.event_compiler import event_threshold
    >>> program = parse('''@prefix : <http://ex.org/> .
    ... event Hot(?s, ?v) := select ?s ?v where { ?s :value ?v filter(?v >= 60) } .
    ... event Warm(?s, ?v) := select ?s ?v where { { ?s :value ?v } filter(?v >= 40) } .''')
    >>> hot, warm = event_threshold(program.events[0], program.prefixes), query_threshold(program.events[1], program.prefixes)
    >>> hot.family == warm.family, (warm.attribute, warm.op, warm.bound), warm.looseness < hot.looseness
    (True, ('v', '>=', 40), True)
    """
    if event.query is None:
        return None
    try:
        query = (queries if queries is not None else ParsedQueries()).require(
            "select", event.query, lambda: parse_select(event.query, prefixes))
        root = compile_pattern(query.algebra["p"], FAMILIES, event.query.span)
    except (RuleError, UnsupportedQuery):
        return None
    if not isinstance(root, BGP) or root.residual or not set(event.attributes) <= set(root.vars):
        return None
    return EventThreshold.of(root.conj, event.attributes)


def compile_select(text: ir.SparqlText, prefixes: dict[str, str], d: TermDictionary,
                   query=None) -> CompiledSelect:
    """Compile a SPARQL SELECT (e.g. an EP-SPARQL query's group, ``temporal.epsparql``) onto the
    store (``query``: its parsed form, when the caller has it).

    >>> from dotr.rules.engine.backends.dict_store import DictStore
    >>> d = TermDictionary(); store = DictStore()
    >>> p, a = d.intern(ir.Iri("http://ex.org/p")), d.intern(ir.Name("a"))
    >>> _ = store.add((p, 2), (a, d.number(3)), 10)
    >>> q = compile_select(ir.SparqlText("select * where { ?s :p ?v }"), {"": "http://ex.org/"}, d)
    >>> [{k: d.value(v) for k, v in s.items()} for s in q.run(store)]
    [{'s': 'a', 'v': 3}]
    """
    if query is None:
        query, diags = parse_select(text, prefixes)
        if query is None:
            raise RuleError(diags)
    return CompiledSelect(text, compile_pattern(query.algebra["p"], d, text.span))
