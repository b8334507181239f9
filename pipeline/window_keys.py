"""Which C-SPARQL queries can be evaluated split by key, and by which keys (the Spark job's key
groups, ``pipeline.embedded.split_keys``): an analysis of the queries' patterns and the
ontological stage's rules together, so it lives where the two stages meet."""

from __future__ import annotations

from rdflib import RDF, BNode, URIRef, Variable

from dotr.ontology.stage import stage_rules
from dotr.rules import ir
from dotr.rules.lang.loader import CheckResult
from dotr.rules.lang.queries.csparql import is_csparql, parse_csparql, translate
from dotr.rules.lang.queries.sparql import certain_variables, triple_patterns
from dotr.temporal.keys import FactKeys, WindowKeys, fact_keys


def csparql_keys(checked: CheckResult) -> tuple[WindowKeys | None, str]:
    """How the C-SPARQL queries of ``checked`` can be split by key, or why they cannot
    (``(None, reason)``).

    Each query's triple patterns (those under ``OPTIONAL`` too, and any pattern the query
    nests) are read as the body of a rule whose head holds the selected variables that every solution
    binds; :func:`temporal.keys.fact_keys` over these rules and the ontological stage's gives
    the stream predicates keys at which one variable joins every pattern and every rule. A key
    group's windows then hold, with the whole background, every triple that one engine's hold
    with its keys' values, and derive the same entailments of them: each solution whose key
    variable has one of its values comes out of the group exactly as out of one engine, and
    the group reports those (``ontology.csparql.CSparqlEngine.keep_group``). A solution of
    background triples alone comes out of every group, and only its key's reports it. An aggregate is
    split when it groups by the key variable. Not split: CONSTRUCT queries, count windows
    ``[triples N]`` (the last N triples of every key), ``LIMIT``/``OFFSET``, subqueries (a
    variable they do not select is another variable than the outer query's), a profile or any
    rule with a variable predicate (a range axiom's entailment types the object of a triple
    of another key).

    >>> from dotr.rules import check_text
    >>> keys, _ = csparql_keys(check_text('''@prefix : <http://ex.org/> .
    ... :hot(?s) :- :temp(?s, ?v), ?v > 30 .
    ... query Hot := register compute every 5 as select ?s (count(?v) as ?n)
    ...     from stream :readings [range 10 step 5] where { ?s a :hot ; :temp ?v } group by ?s .'''))
    >>> keys.queries, keys.facts
    ({'Hot': 's'}, {('http://ex.org/temp', 2): 0, ('http://www.w3.org/1999/02/22-rdf-syntax-ns#type', 2): 0})
    >>> csparql_keys(check_text('''@prefix : <http://ex.org/> .
    ... query All := register compute every 5 as select (count(?v) as ?n)
    ...     from stream :readings [range 10 step 5] where { ?s :temp ?v } .'''))[1]
    'query All: no selected variable is bound in every solution (an aggregate must group by it)'
    """
    program = checked.program
    if program.profiles:
        return None, f"@profile {program.profiles[0]}: its rules read every predicate (a range axiom types the object)"
    rules, queries, heads = list(stage_rules(checked)[0]), {}, set()
    for decl in program.queries:
        if not is_csparql(decl.query):
            continue
        query = checked.queries.get(decl.query) or parse_csparql(decl, program.prefixes, program.timeunit == "ms")[0]
        name = query.name
        if query.form != "select":
            return None, f"query {name} constructs triples"
        if any(w.triples is not None for w in query.windows):
            return None, f"query {name}: a count window holds the last triples of every key"
        algebra = translate(query, program.prefixes).algebra
        if _has(algebra, "Slice"):
            return None, f"query {name}: LIMIT or OFFSET counts the solutions of every key"
        if _has(algebra, "ToMultiSet"):
            return None, f"query {name}: a subquery (its variables are not the outer query's)"
        atoms = []
        for s, p, o in triple_patterns(algebra):
            if not isinstance(p, URIRef):
                return None, f"query {name}: a variable predicate or a path"
            args = tuple(ir.Var(f"?{x}") if isinstance(x, (Variable, BNode)) else ir.Iri(str(x)) for x in (s, o))
            atoms.append(ir.Atom(ir.Iri(str(p) if p != RDF.type else ir.RDF_TYPE), args))
        bound = sorted(certain_variables(algebra["p"]) & {str(v) for v in algebra.get("PV") or ()})
        if not bound:
            return None, f"query {name}: no selected variable is bound in every solution (an aggregate must group by it)"
        head = ir.Atom(ir.Name(f"query {name}"), tuple(ir.Var(f"?{v}") for v in bound))
        heads.add(head.pred.value)
        rules.append(ir.Rule(head, tuple(ir.AtomLiteral(a) for a in atoms)))
        queries[name] = (bound, atoms)
    if not queries:
        return None, "no C-SPARQL queries"
    keys, reason = fact_keys(rules)
    if keys is None:
        return None, reason
    routes = {}
    for name, (bound, atoms) in queries.items():  # a variable at every atom's key (any, if none is split)
        routes[name] = next(v for v in bound if all(
            keys.get((a.pred.value, 2)) is None or a.args[keys[(a.pred.value, 2)]] == ir.Var(f"?{v}") for a in atoms))
    return WindowKeys(FactKeys((k, v) for k, v in keys.items() if k[0] not in heads), routes), ""


def _has(algebra, name: str) -> bool:
    """Whether the translated query has a node ``name`` (``Slice``, ``ToMultiSet``) anywhere."""
    from rdflib.plugins.sparql.parserutils import CompValue  # (loaded with the query's parser)

    if isinstance(algebra, CompValue):
        return algebra.name == name or any(_has(v, name) for v in algebra.values())
    return isinstance(algebra, (list, tuple)) and any(_has(v, name) for v in algebra)
