"""How the temporal stage splits into key groups on Spark (``dotr check`` prints it): each
engine's keys by its own analysis (:func:`split_keys`, or why not: :func:`split_reason`), the
partition of the keys into groups (:func:`make_partition`), a time point's part per group
(:func:`split_point`), and the C-SPARQL queries' keys (:func:`csparql_keys`: the queries'
patterns and the ontological stage's rules together, so it lives where the two stages meet)."""

from __future__ import annotations

from dataclasses import replace

from dotr.ontology.stage import stage_rules
from dotr.rules import ir
from dotr.rules.lang.analysis import body_atoms, pred_key
from dotr.rules.lang.loader import CheckResult
from dotr.rules.lang.queries.csparql import is_csparql, parse_csparql, translate
from dotr.rules.lang.queries.sparql import certain_variables, triple_patterns
from dotr.temporal.keys import (FactKeys, JointKeys, JointPartition, QueryKeys, WindowKeys, fact_keys,
                                partition_keys)

from .records import Enriched


def split_point(point: Enriched, partition: JointPartition) -> list[Enriched]:
    """``point`` per group of a split temporal stage (:meth:`Reasoner.keep_group`), each
    engine's part by its partition: the stream facts and the ontological conclusions by the LARS
    rules' keys (those of unsplit predicates in every group), or, without LARS rules, in group 0
    only (printed once); the events by the patterns' keys; the solutions of the EP-SPARQL
    queries' groups by theirs; the stream facts of C-SPARQL windows by stream and key (every
    stream with facts named in every group)."""
    n, facts = partition.n, partition.facts
    if facts is not None:
        stream, conclusions = facts.split(point.stream), facts.split(point.conclusions)
    else:
        stream = [point.stream] + [[] for _ in range(n - 1)]
        conclusions = [point.conclusions] + [[] for _ in range(n - 1)]
    parts = zip(stream, conclusions,
                partition.events.split(point.events) if partition.events is not None else [point.events] * n,
                partition.solutions.split(point.solutions) if partition.solutions is not None else [point.solutions] * n,
                partition.windows.split_streams(point.streams) if partition.windows is not None else [point.streams] * n)
    return [replace(point, stream=own, conclusions=concluded, events=events, solutions=solutions, streams=streams,
                    group=group)
            for group, (own, concluded, events, solutions, streams) in enumerate(parts)]


def split_keys(checked: CheckResult) -> dict[str, int] | FactKeys | JointKeys | QueryKeys | WindowKeys | None:
    """How the temporal stage of these rules can be split by key, or None (:func:`split_reason`
    says why). Patterns whose graphs never re-enter the ontological stage (no profile, no event
    reading them): event type -> key attribute position (:func:`temporal.keys.partition_keys`).
    LARS rules: predicate -> key argument (:func:`temporal.keys.fact_keys`; in ms, see
    :func:`carried`). EP-SPARQL queries: each query by a variable
    (:func:`temporal.epsparql.query_keys`). C-SPARQL queries: the stream facts by key, each
    query's solutions by a variable (:func:`pipeline.window_keys.csparql_keys`). Engines of
    several kinds, each by its own keys (:class:`temporal.keys.JointKeys`), when the rules read
    and derive nothing the patterns' graphs construct."""
    return _split(checked)[0]


def split_reason(checked: CheckResult) -> str:
    """Why :func:`split_keys` found no key ("" when it found one)."""
    return _split(checked)[1]


def _split(checked: CheckResult) -> tuple[dict | None, str]:
    """Each temporal engine's keys by its own analysis; the program is split when every engine
    it has is (one engine's keys alone, several as :class:`JointKeys`)."""
    program, analysis = checked.program, checked.analysis
    keys: dict[str, object] = {}
    if program.patterns:
        if program.profiles or analysis.graphs_reach_events:
            return None, "pattern graphs re-enter the ontological stage (a profile, or an event reads them)"
        keys["events"] = partition_keys(program)
        if keys["events"] is None:
            return None, "no pattern keys" if not analysis.temporal else "LARS rules with patterns that have no keys"
    if analysis.temporal:
        keys["facts"], reason = fact_keys(analysis.temporal)
        if keys["facts"] is None:
            return None, reason
        if program.patterns and _lars_meets_graphs(analysis):
            return None, "the LARS rules read or derive what a pattern's graph constructs"
    if any(not is_csparql(q.query) for q in program.queries):
        from dotr.temporal.epsparql import EpSparqlEngine, query_keys  # (with the SPARQL compiler)

        keys["queries"], reason = query_keys(EpSparqlEngine.from_program(program, parsed=checked.queries))
        if keys["queries"] is None:
            return None, reason
        if "facts" in keys:
            return None, ("EP-SPARQL queries with LARS rules: the key groups evaluate different time points (each "
                          "where its own facts hold or change), and a query answers at each one a reasoner evaluates")
    if any(is_csparql(q.query) for q in program.queries):
        keys["windows"], reason = csparql_keys(checked)
        if keys["windows"] is None:
            return None, reason
    if not keys:
        return None, "nothing temporal"
    return (next(iter(keys.values())) if len(keys) == 1 else JointKeys(**keys)), ""


def _lars_meets_graphs(analysis) -> bool:
    """Whether a temporal rule reads or derives a predicate (or class) that a pattern's graph can
    hold: only then do the LARS engine's facts and the graphs' meet."""
    return analysis.graphs_reach(pred_key(atom) for rule in analysis.temporal
                                 for atom in (rule.head, *(a for a, _, _ in body_atoms(rule.body))))


def carried(checked: CheckResult) -> bool:
    """Whether the key groups of :func:`split_keys` evaluate different time points, so that a
    group's printed facts must be carried to the time points it skips (:func:`carry_facts`):
    LARS rules in ``@timeunit ms``, where each group evaluates where its own facts change."""
    keys = split_keys(checked)
    return checked.program.timeunit != "ticks" and (
        isinstance(keys, FactKeys) or isinstance(keys, JointKeys) and keys.facts is not None)


def make_partition(keys: dict | FactKeys | QueryKeys | WindowKeys | JointKeys, n: int, dictionary) -> JointPartition:
    """The partition of :func:`split_keys`'s keys into ``n`` groups."""
    if not isinstance(keys, JointKeys):
        part = {FactKeys: "facts", QueryKeys: "queries", WindowKeys: "windows"}.get(type(keys), "events")
        keys = JointKeys(**{part: keys})
    return JointPartition(keys, n, dictionary)


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
        query = checked.queries.require(f"csparql {decl.name}", decl.query,
                                            lambda: parse_csparql(decl, program.prefixes, program.timeunit == "ms"))
        name = query.name
        if query.form != "select":
            return None, f"query {name} constructs triples" if query.form == "construct" else \
                f"query {name} asks (one answer over every key)"
        if query.dataset or any(w.name for w in query.windows):
            return None, f"query {name} reads named graphs or its own background files"
        if any(w.triples is not None for w in query.windows):
            return None, f"query {name}: a count window holds the last triples of every key"
        algebra = translate(query, program.prefixes).algebra
        if _has(algebra, "Slice"):
            return None, f"query {name}: LIMIT or OFFSET counts the solutions of every key"
        if _has(algebra, "ToMultiSet"):
            return None, f"query {name}: a subquery (its variables are not the outer query's)"
        from rdflib import RDF, BNode, URIRef, Variable  # (rdflib: imported by a program that needs it)

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
