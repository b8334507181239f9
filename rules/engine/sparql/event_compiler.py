"""Which compiler an event declaration takes: a rule body (``events.compile_rule_event``) and a
SELECT of one basic graph pattern with simple filters (``rules.lang.queries.select``) are
conjunctions of their atoms, compiled here with no SPARQL compiler (nor rdflib) loaded; any other
SELECT goes to the SPARQL compiler (``rules.engine.sparql.algebra``).

>>> from dotr.rules import parse
>>> from dotr.rules.engine.terms import TermDictionary
>>> program = parse('''@prefix : <http://ex.org/> .
... event Hot(?s, ?v) := select ?s ?v where { ?s :value ?v filter(?v > 60) } .
... event Top(?s) := select distinct ?s where { ?s :value ?v filter(?v > 60) } .''')
>>> hot, top = (compile_event(e, program.prefixes, TermDictionary()) for e in program.events)
>>> [str(a.pred.value) for a in hot.conjunction.atoms], hot.conjunction.extra  # (read here)
(['http://ex.org/value'], (Comparison(op='>', left=Var(name='v'), right=Num(value=60)),))
>>> top.conjunction is None  # (DISTINCT: the SPARQL compiler's)
True
"""

from __future__ import annotations

from dotr.rules import ir
from dotr.rules.engine.sparql.conjunction import Conjunction
from dotr.rules.engine.sparql.events import FAMILIES, CompiledEvent, EventThreshold, compile_rule_event
from dotr.rules.engine.terms import TermDictionary
from dotr.rules.lang.queries import ParsedQueries
from dotr.rules.lang.queries.select import read_select


def event_threshold(event: ir.EventDecl, prefixes: dict[str, str], queries: ParsedQueries | None = None
                    ) -> EventThreshold | None:
    """The threshold of ``event`` (see :class:`EventThreshold`), or None: of a SELECT the reader
    reads (``rules.lang.queries.select``) here, of any other by the SPARQL compiler
    (``algebra.query_threshold``).

    >>> from dotr.rules import parse
    >>> program = parse('''@prefix : <http://ex.org/> .
    ... event Hot(?s, ?v) := select ?s ?v where { ?s :value ?v filter(?v >= 60) } .
    ... event Warm(?s, ?v) := select ?s ?v where { ?s :value ?v filter(40 <= ?v) } .''')
    >>> hot, warm = (event_threshold(e, program.prefixes) for e in program.events)
    >>> hot.family == warm.family, (hot.attribute, hot.op, hot.bound), warm.looseness < hot.looseness
    (True, ('v', '>=', 60), True)
    """
    if event.query is None:
        return None
    simple = read_select(event.query.text, prefixes)
    if simple is None:
        from dotr.rules.engine.sparql.algebra import query_threshold  # (rdflib and the compiler)
        return query_threshold(event, prefixes, queries)
    if not set(event.attributes) <= simple.bound():
        return None
    return EventThreshold.of(Conjunction(simple.atoms, simple.comparisons, event.attributes, FAMILIES),
                             event.attributes)


def compile_event(event: ir.EventDecl, prefixes: dict[str, str], d: TermDictionary,
                  queries: ParsedQueries | None = None) -> CompiledEvent:
    """Compile an ``event`` declaration (a rule body or a SELECT) onto the store (``queries``:
    the checked program's parsed queries, so that a SELECT the SPARQL compiler reads is not
    parsed again)."""
    if event.query is None:
        return compile_rule_event(event, d)
    simple = read_select(event.query.text, prefixes)
    if simple is not None and set(event.attributes) <= simple.bound():
        conj = Conjunction(simple.atoms, simple.comparisons, event.attributes, d)
        return CompiledEvent(event.name, event.attributes, conj.rows, d, conj)
    from dotr.rules.engine.sparql.algebra import compile_query_event  # (rdflib and the compiler)
    return compile_query_event(event, prefixes, d, queries)
