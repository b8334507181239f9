"""Program analysis: predicate dependencies, strata, and the stage split; and the
rules that are steps along a transitive relation (``transitive_steps``, for the materialiser).

The stage split is computed, not declared (docs/language.md, "Rules"): a Datalog rule whose body
predicates depend only on stream and background predicates runs in the ontological stage; every
other rule runs in the temporal stage.

>>> from dotr.rules.lang.parser import parse
>>> a = analyse(parse('''
...   located(S, R) :- attached(S, D), in_room(D, R).
...   hot(R) :- [3] [] temp_high(R).
...   alarm(R) :- hot(R), located(S, R).
...   calm(R) :- located(S, R), not alarm(R).'''))
>>> [str(r.head.pred.value) for r in a.ontological], [str(r.head.pred.value) for r in a.temporal]
(['located'], ['hot', 'alarm', 'calm'])
>>> a.rule_strata
(0, 0, 0, 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import networkx as nx

from . import ir

PredKey = tuple  # (Name | Iri, arity)
_TYPE = ir.Iri(ir.RDF_TYPE)
_ANY_CLASS: PredKey = (_TYPE, 2)
#: the key of a variable-predicate atom P(X, Y): every triple
ANY_TRIPLE: PredKey = (ir.Var("?predicate"), 2)


def pred_key(atom: ir.Atom) -> PredKey:
    """``(predicate, arity)``; a membership in a named class ``C(x)`` (``rdf:type(x, C)``) is
    keyed by its class, ``(C, 1)``, so that classes are told apart like predicates."""
    if atom.pred == _TYPE and len(atom.args) == 2 and isinstance(atom.args[1], ir.Iri):
        return (atom.args[1], 1)
    if isinstance(atom.pred, ir.Var):
        return ANY_TRIPLE
    return (atom.pred, len(atom.args))


def body_atoms(body: tuple[ir.BodyLiteral, ...]):
    """``(atom, negated, literal)`` for every atom of a body, windowed or not."""
    for lit in body:
        if isinstance(lit, (ir.AtomLiteral, ir.TemporalLiteral)):
            yield lit.atom, lit.negated, lit


@dataclass(frozen=True)
class Analysis:
    """What the stages need to know about a program's rules."""

    graph: nx.DiGraph  # predicate -> predicate, edge attribute ``negative``
    strata: dict  # PredKey -> stratum (0 = lowest)
    rule_strata: tuple[int, ...]  # stratum of each rule of ``program.rules``, same order
    ontological: tuple[ir.Rule, ...]
    temporal: tuple[ir.Rule, ...]
    derived: frozenset  # predicates that appear in some rule head (intensional)
    negative_cycles: tuple[tuple, ...]  # SCCs containing a negative edge, as (pred, pred) edges
    #: whether a pattern's graph can change what the ontological stage derives or what the events
    #: extract (a rule of the stage or an event reads its predicates): then the graphs go through
    #: the stage again at their time point
    graphs_reach_events: bool = True
    #: the predicates patterns' construct templates give triples of (None: any, a template has a
    #: variable predicate)
    graph_preds: frozenset | None = frozenset()

    @property
    def stratum_count(self) -> int:
        return max(self.rule_strata, default=-1) + 1

    def graphs_reach(self, preds: Iterable[PredKey]) -> bool:
        """Whether a triple of a pattern's graph can be a fact of one of ``preds``."""
        outputs = self.graph_preds
        return _overlap(outputs or frozenset(), frozenset(preds), outputs is None)


def pred_text(key: PredKey) -> str:
    """A predicate key as diagnostics name it: ``hot/1``, ``<http://ex.org/p>/2``."""
    pred, arity = key
    if isinstance(pred, ir.Var):  # a variable predicate (ANY_TRIPLE): any triple
        return "a variable predicate (any triple)"
    text = f"<{pred.value}>" if isinstance(pred, ir.Iri) else pred.value
    return text if arity is None else f"{text}/{arity}"


def dependency_graph(rules: tuple[ir.Rule, ...]) -> nx.DiGraph:
    graph = nx.DiGraph()
    for rule in rules:
        head = pred_key(rule.head)
        graph.add_node(head)
        for atom, negated, _ in body_atoms(rule.body):
            body = pred_key(atom)
            if graph.has_edge(body, head):
                graph[body][head]["negative"] |= negated
            else:
                graph.add_edge(body, head, negative=negated)
    if ANY_TRIPLE in graph:  # P(X, Y): derives or reads every triple, rdf:type ones included
        graph.add_node(_ANY_CLASS)
    for wildcard, covers in ((ANY_TRIPLE, lambda n: n[1] == 2 and isinstance(n[0], ir.Iri) or n == _ANY_CLASS),
                             (_ANY_CLASS, lambda n: n[1] == 1 and isinstance(n[0], ir.Iri))):
        if wildcard in graph:  # (rdf:type(X, C) with C a variable: every class)
            for node in list(graph.nodes):
                if node != wildcard and covers(node):
                    graph.add_edge(wildcard, node, negative=False)
                    graph.add_edge(node, wildcard, negative=False)
    return graph


def stratify(graph: nx.DiGraph) -> tuple[dict, list[tuple]]:
    """The stratum of every predicate of a dependency graph (a negative edge into a component
    raises its stratum by one), and the negative edges inside components (cycles through
    negation, as one tuple of edges per component)."""
    # (networkx's Tarjan finds each component after those it reaches; tests/rules/lang/
    # test_analysis.py checks that it does)
    components = list(nx.strongly_connected_components(graph))
    members = {pred: number for number, component in enumerate(components) for pred in component}
    crossing: dict[tuple[int, int], bool] = {}
    cyclic: dict[int, list] = {}
    for u, v, negative in graph.edges(data="negative"):
        cu, cv = members[u], members[v]
        if cu != cv:
            crossing[cu, cv] = crossing.get((cu, cv), False) or negative
        elif negative:
            cyclic.setdefault(cu, []).append((u, v))
    into: dict[int, list[int]] = {}  # component -> the components with an edge into it
    for cu, cv in crossing:
        into.setdefault(cv, []).append(cu)
    comp_stratum: dict[int, int] = {}
    for comp in reversed(range(len(components))):  # each after those that reach it
        comp_stratum[comp] = max((comp_stratum[p] + crossing[p, comp] for p in into.get(comp, ())), default=0)
    return {pred: comp_stratum[comp] for pred, comp in members.items()}, [tuple(e) for e in cyclic.values()]


def analyse(program: ir.Program, pattern_preds: frozenset = frozenset(), event_reads: frozenset | None = None,
            any_triple_output: bool = False) -> Analysis:
    """Strata and stage split of ``program.rules``; ``pattern_preds`` are predicates that pattern
    outputs (construct templates) add to the knowledge of their time point (they go through the
    ontological stage again: Datalog rules over them stay there, so that events see what they
    derive); ``event_reads`` the predicates the events read (None: unknown, any);
    ``any_triple_output``: a template has a variable predicate."""
    rules = program.rules
    graph = dependency_graph(rules)
    strata, negative_cycles = stratify(graph)
    rule_strata = tuple(strata[pred_key(r.head)] for r in rules)

    # stage split: temporal predicates are the heads of temporal rules and everything that
    # depends on them (a Datalog rule with a temporal body predicate is temporal)
    seeds = {pred_key(r.head) for r in rules if r.is_temporal}
    temporal_preds = seeds.union(*nx.bfs_layers(graph, seeds))  # (every head is a node)
    temporal_rules = {
        i for i, r in enumerate(rules)
        if r.is_temporal or any(pred_key(a) in temporal_preds for a, _, _ in body_atoms(r.body))
    }
    ontological = tuple(r for i, r in enumerate(rules) if i not in temporal_rules)
    stage_reads = frozenset(pred_key(a) for r in ontological for a, _, _ in body_atoms(r.body))
    reach = event_reads is None or _overlap(pattern_preds, event_reads | stage_reads, any_triple_output)
    return Analysis(
        graph=graph,
        strata=strata,
        rule_strata=rule_strata,
        ontological=ontological,
        temporal=tuple(r for i, r in enumerate(rules) if i in temporal_rules),
        derived=frozenset(pred_key(r.head) for r in rules) | frozenset(pattern_preds),
        negative_cycles=tuple(negative_cycles),
        graphs_reach_events=reach,
        graph_preds=None if any_triple_output else frozenset(pattern_preds),
    )


def _overlap(outputs: frozenset, reads: frozenset, any_output: bool) -> bool:
    """Can a triple with a key of ``outputs`` match a pattern with a key of ``reads``?"""
    if not reads:
        return False
    if any_output or ANY_TRIPLE in reads:
        return bool(outputs) or any_output

    def classes(keys: frozenset) -> bool:
        return any(key[1] == 1 and isinstance(key[0], ir.Iri) for key in keys)
    # (``rdf:type(X, C)`` with C a variable, read or constructed, meets every class)
    return bool(outputs & reads) or (_TYPE, 2) in reads and classes(outputs) or (_TYPE, 2) in outputs and classes(reads)


def transitive_steps(rules: Sequence[ir.Rule]) -> dict[int, int]:
    """The rules that move one term of an atom one step along a relation that the program closes
    transitively: ``A[C := D] :- A, S(C, D)`` (or ``S(D, C)``), with C occurring once in A (as an
    argument or as A's predicate), D not in A, A not an S atom, nothing else in the body, and
    among ``rules`` the transitivity rule ``S(X, Z) :- S(X, Y), S(Y, Z)``. RDFS's rdfs9 (S =
    subClassOf) and rdfs7 (subPropertyOf; C is the predicate of a triple atom) are such steps.
    Returns rule index -> the index of A among the rule's positive atoms (ontology.materialise
    explains what the shape saves).

    >>> from dotr.rules.lang.parser import parse
    >>> transitive_steps(parse('''sub(X, Z) :- sub(X, Y), sub(Y, Z).
    ...   type(X, D) :- type(X, C), sub(C, D).
    ...   Q(X, Y) :- sub(P, Q), P(X, Y).
    ...   type(X, D) :- type(X, C), other(C, D).''').rules)
    {1: 0, 2: 1}
    """
    transitive = {r.head.pred for r in rules if _is_transitivity(r)}
    out = {}
    for i, rule in enumerate(rules):
        if len(rule.body) != 2 or not all(isinstance(lit, ir.AtomLiteral) and not lit.negated for lit in rule.body):
            continue
        atoms = [lit.atom for lit in rule.body]
        for at in (0, 1):
            a, step = atoms[at], atoms[1 - at]
            if step.pred in transitive and a.pred != step.pred and _moves(a, step, rule.head):
                out[i] = at
                break
    return out


def _is_transitivity(rule: ir.Rule) -> bool:
    """``S(X, Z) :- S(X, Y), S(Y, Z)`` (body in either order), S a constant predicate."""
    head, body = rule.head, rule.body
    if isinstance(head.pred, ir.Var) or len(head.args) != 2 or len(body) != 2 or \
            not all(isinstance(lit, ir.AtomLiteral) and not lit.negated and lit.atom.pred == head.pred
                    and len(lit.atom.args) == 2 for lit in body):
        return False
    x, z = head.args
    terms = [*head.args, *body[0].atom.args, *body[1].atom.args]
    if not all(isinstance(t, ir.Var) for t in terms) or x == z:
        return False
    for first, second in ((body[0].atom, body[1].atom), (body[1].atom, body[0].atom)):
        if first.args[0] == x and second.args[1] == z and first.args[1] == second.args[0] not in (x, z):
            return True
    return False


def _moves(a: ir.Atom, step: ir.Atom, head: ir.Atom) -> bool:
    """Is ``head`` ``a`` with one end of ``step`` (occurring once in ``a``) replaced by the other
    (not in ``a``)?"""
    if len(step.args) != 2 or not all(isinstance(t, ir.Var) for t in step.args) or step.args[0] == step.args[1]:
        return False
    terms = (a.pred, *a.args)
    for c, d in (step.args, step.args[::-1]):
        if terms.count(c) == 1 and d not in terms:
            moved = tuple(d if t == c else t for t in terms)
            if moved == (head.pred, *head.args):
                return True
    return False
