"""Event queries: SPARQL SELECT (parsed by rdflib) and rule bodies, compiled onto the store.

rdflib parses the query and builds its algebra; the algebra is then compiled into operators that
run on int ids: each basic graph pattern becomes join plans (``rules.engine.plan``) with its simple
filters pushed in, started at run time from its most selective triple pattern; OPTIONAL, UNION,
BIND, VALUES, FILTER, DISTINCT, GROUP BY with aggregates and joins work on solutions (dicts
variable -> id). rdflib's own evaluator is never used.

>>> from dotr.rules import ir, parse
>>> from dotr.rules.engine.store import DictStore
>>> from dotr.rules.engine.terms import TermDictionary
>>> program = parse('''@prefix : <http://ex.org/> .
... event Hot(?s, ?v) := select ?s ?v where { ?s :value ?v filter(?v > 60) } .''')
>>> d, store = TermDictionary(), DictStore()
>>> q = compile_event(program.events[0], program.prefixes, d)
>>> value = (d.intern(ir.Iri("http://ex.org/value")), 2)
>>> for sensor, reading in (("a", 70), ("b", 50)):
...     _ = store.add(value, (d.intern(ir.Iri("http://ex.org/" + sensor)), d.intern(ir.Num(reading))), 5)
>>> [tuple(d.term(i) for i in row) for row in q.run(store)]
[(Iri(value='http://ex.org/a'), Num(value=70))]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from rdflib import BNode, Literal as RdfLiteral, URIRef, Variable

from dotr.rules import ir
from dotr.rules.lang.errors import RuleError
from dotr.rules.engine.plan import compile_rule
from dotr.rules.lang.queries import ParsedQueries
from dotr.rules.lang.queries.sparql import parse_select
from dotr.rules.lang.queries.sparql import rdf_term as from_rdflib
from dotr.rules.engine.sparql.expr import (IriValue, Solution, Undefined, UnsupportedQuery, compile_expr as _compile_expr,
                                      holds as _holds, unsupported as _unsupported)
from dotr.rules.engine.store import Store
from dotr.rules.engine.terms import TermDictionary

__all__ = ["CompiledEvent", "UnsupportedQuery", "compile_event", "compile_pattern", "compile_select"]


# --------------------------------------------------------------------------------- operators

class _Plans:
    """A conjunction of atoms (plus comparisons and negations) compiled into join plans, one per
    seed atom; the seed is chosen at run time as the atom with the fewest candidate facts."""

    def __init__(self, atoms: list[ir.Atom], extra: tuple, head: tuple[str, ...], d: TermDictionary):
        self.atoms, self.vars = atoms, head
        body = tuple(ir.AtomLiteral(a) for a in atoms) + tuple(extra)
        self.compiled = compile_rule(tuple(ir.Var(n) for n in head), body, d, head_relation=(-2, len(head)))
        self.seeds = []  # per atom: its relation (None: a variable predicate), its constants
        for atom, rel in zip(atoms, self.compiled.body_relations):
            consts = tuple((pos, d.intern(t)) for pos, t in enumerate(atom.args) if not isinstance(t, ir.Var))
            self.seeds.append((rel, consts))

    def rows(self, store: Store) -> list[tuple]:
        if not self.atoms:
            out: list = []
            self.compiled.seeded[0]([((), 0)], store, out.append)
            return [row for _, row, _ in out]
        best, best_delta, best_size = 0, None, None
        for i, (rel, consts) in enumerate(self.seeds):
            if rel is None:
                continue
            relation = store.relations.get(rel)
            if relation is None:
                return []
            if consts:
                positions = tuple(p for p, _ in consts)
                key = consts[0][1] if len(consts) == 1 else tuple(v for _, v in consts)
                candidates = relation.index(positions).get(key, ())
            else:
                candidates = relation.facts
            if not candidates:  # (an atom of the conjunction matches nothing)
                return []
            if best_size is None or len(candidates) < best_size:
                best, best_delta, best_size = i, (candidates, relation.facts), len(candidates)
        out = []
        plan = self.compiled.seeded[best]
        if best_delta is None:  # only variable-predicate patterns: scan every triple relation
            for pid in list(store.triple_predicates):
                plan(list(store.relations[(pid, 2)].facts.items()), store, out.append, pid)
        else:
            candidates, facts = best_delta
            plan([(f, facts[f]) for f in candidates], store, out.append)
        return [row for _, row, _ in out]


class _BGP:
    """A basic graph pattern (with the filters pushed into it) as join plans."""

    def __init__(self, triples, pushed: list[ir.Comparison], d: TermDictionary, span):
        atoms = [ir.Atom(self._pred(p, span), (self._term(s), self._term(o))) for s, p, o in triples]
        names: dict[str, None] = {}
        for atom in atoms:
            for t in (atom.pred, *atom.args):
                if isinstance(t, ir.Var):
                    names.setdefault(t.name)
        self.plans = _Plans(atoms, tuple(pushed), tuple(names), d)

    @staticmethod
    def _pred(p, span):
        if isinstance(p, Variable):
            return ir.Var(str(p))
        if isinstance(p, URIRef):
            return ir.Iri(str(p))
        raise _unsupported(f"predicate {p!r}", span)

    @staticmethod
    def _term(node):
        if isinstance(node, Variable):
            return ir.Var(str(node))
        if isinstance(node, BNode):  # a blank node in a pattern is a variable
            return ir.Var("_:" + str(node))
        return from_rdflib(node)

    def run(self, store: Store) -> list[Solution]:
        names = self.plans.vars
        return [dict(zip(names, row)) for row in self.plans.rows(store)]


class _Join:
    def __init__(self, left, right):
        self.left, self.right = left, right

    def run(self, store):
        return _join(self.left.run(store), self.right.run(store))


def _compatible(a: Solution, b: Solution) -> bool:
    return all(b[k] == v for k, v in a.items() if k in b)


def _join(left: list[Solution], right: list[Solution]) -> list[Solution]:
    if not left or not right:
        return []
    return [{**a, **b} for a in left for b in right if _compatible(a, b)]


class _LeftJoin:
    def __init__(self, left, right, test):
        self.left, self.right, self.test = left, right, test

    def run(self, store):
        right = self.right.run(store)
        out = []
        for a in self.left.run(store):
            matched = False
            for b in right:
                if _compatible(a, b):
                    merged = {**a, **b}
                    if self.test is None or _holds(self.test, merged):
                        out.append(merged)
                        matched = True
            if not matched:
                out.append(a)
        return out


class _SolutionUnion:
    def __init__(self, left, right):
        self.left, self.right = left, right

    def run(self, store):
        return self.left.run(store) + self.right.run(store)


class _Filter:
    def __init__(self, inner, test):
        self.inner, self.test = inner, test

    def run(self, store):
        return [s for s in self.inner.run(store) if _holds(self.test, s)]


class _Extend:
    """``BIND(expr AS ?var)``; ``source``: the expression is the variable ``?source``, whose
    term is bound as it is (a name stays a name, not the string of its value)."""

    def __init__(self, inner, var: str, value, d: TermDictionary, source: str | None = None):
        self.inner, self.var, self.value, self.d, self.source = inner, var, value, d, source

    def run(self, store):
        out = []
        if self.source is not None:
            for sol in self.inner.run(store):
                term_id = sol.get(self.source)
                out.append(sol if term_id is None else {**sol, self.var: term_id})
            return out
        for sol in self.inner.run(store):
            try:
                value = self.value(sol)
                term_id = value.id if isinstance(value, IriValue) else self.d.intern(_const_term(value))
                out.append({**sol, self.var: term_id})
            except (Undefined, TypeError):
                out.append(sol)
        return out


def _const_term(value):
    if isinstance(value, bool):
        return ir.Literal("true" if value else "false", ir.XSD + "boolean")
    if isinstance(value, (int, float)):
        return ir.Num(value)
    return ir.Literal(str(value))


class _Values:
    def __init__(self, rows: list[Solution]):
        self.rows = rows

    def run(self, store):
        return [dict(r) for r in self.rows]


class _Project:
    """A projection that matters: under ``DISTINCT`` (duplicates are told apart by the selected
    variables only) and in a subquery (its other variables are not in scope outside it)."""

    def __init__(self, inner, variables: list[str]):
        self.inner, self.variables = inner, variables

    def run(self, store):
        keep = self.variables
        return [{v: sol[v] for v in keep if v in sol} for sol in self.inner.run(store)]


class _Distinct:
    def __init__(self, inner):
        self.inner = inner

    def run(self, store):
        seen, out = set(), []
        for sol in self.inner.run(store):
            key = tuple(sorted(sol.items()))
            if key not in seen:
                seen.add(key)
                out.append(sol)
        return out


class _Aggregate:
    """GROUP BY with aggregates (rdflib's AggregateJoin over a Group): one solution per group
    binding the group variables and each aggregate's result variable. Unbound values are left
    out of an aggregate; one that errs (SUM of a non-number, MIN of nothing) leaves its variable
    unbound. A group variable and the SAMPLE of a variable keep the term bound (a name stays a
    name, not the string of its value)."""

    def __init__(self, inner, keys: list, aggregates: list, d: TermDictionary, span):
        self.inner, self.d = inner, d
        self.keys = [_compile_expr(k, d, span) for k in keys]
        self.key_vars = [str(k) if isinstance(k, Variable) else None for k in keys]
        self.aggregates = []
        for agg in aggregates:
            kind = agg.name[len("Aggregate_"):].rstrip("_").lower()
            if kind not in _AGGREGATES:
                raise _unsupported(agg.name, span)
            arg = None if agg.vars == "*" else _compile_expr(agg.vars, d, span)
            if kind == "sample" and isinstance(agg.vars, Variable):
                arg = str(agg.vars)  # (the bound term itself)
            self.aggregates.append((kind, arg, bool(agg.distinct), str(agg.res)))

    def run(self, store):
        groups: dict[tuple, list[Solution]] = {}
        plain = all(v is not None for v in self.key_vars)
        for sol in self.inner.run(store):
            try:
                key = tuple(sol.get(v) for v in self.key_vars) if plain else tuple(
                    sol.get(v) if v is not None else _term_id(k(sol), self.d) for v, k in zip(self.key_vars, self.keys))
            except (Undefined, TypeError):
                key = None  # an erroring group key: SPARQL groups these together
            groups.setdefault(key, []).append(sol)
        if not groups and not self.keys:
            groups[()] = []  # no GROUP BY: one group, even over no solutions
        out = []
        for key, sols in groups.items():
            row = {} if key is None else {v: k for v, k in zip(self.key_vars, key) if v is not None and k is not None}
            for kind, arg, distinct, res in self.aggregates:
                if isinstance(arg, str):  # SAMPLE(?v)
                    value = next((sol[arg] for sol in sols if sol.get(arg) is not None), None)
                else:
                    value = _aggregate(kind, arg, distinct, sols, self.d)
                if value is not None:
                    row[res] = value
            out.append(row)
        return out


_AGGREGATES = ("count", "sum", "avg", "min", "max", "sample")


def _term_id(value, d: TermDictionary) -> int:
    return value.id if isinstance(value, IriValue) else d.intern(_const_term(value))


def _aggregate(kind: str, arg, distinct: bool, sols: list[Solution], d: TermDictionary) -> int | None:
    """The term id of one aggregate over a group's solutions, or None (an error: unbound)."""
    values = []
    for sol in sols:
        if arg is None:
            values.append(tuple(sorted(sol.items())))
            continue
        try:
            values.append(arg(sol))
        except (Undefined, TypeError):
            continue  # unbound or erroring values are left out, as COUNT(?x) does
    if distinct:
        values = list(dict.fromkeys(values))
    if kind == "count":
        return d.number(len(values))
    if kind == "sample":
        return _term_id(values[0], d) if values else None
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in values):
        return None  # numeric aggregates over non-numbers err
    if kind == "sum":
        return d.number(sum(values))
    if kind == "avg":
        return d.number(sum(values) / len(values) if values else 0)
    if not values:
        return None
    return d.number(min(values) if kind == "min" else max(values))


def _to_comparisons(expr, d) -> list[ir.Comparison] | None:
    """A filter as rule-language comparisons (to push into a BGP's plan), or None."""
    from rdflib.plugins.sparql.parserutils import CompValue  # (loaded with the query's parser)

    if isinstance(expr, CompValue) and expr.name == "ConditionalAndExpression":
        parts = [expr.expr] + list(expr.other or [])
        out = []
        for p in parts:
            sub = _to_comparisons(p, d)
            if sub is None:
                return None
            out += sub
        return out
    if isinstance(expr, CompValue) and expr.name == "RelationalExpression" and expr.op in ("=", "!=", "<", "<=", ">", ">="):
        left, right = _simple(expr.expr), _simple(expr.other)
        if left is not None and right is not None:
            if expr.op in ("=", "!=") and not (isinstance(left, ir.Num) or isinstance(right, ir.Num)):
                return None  # term equality of non-numbers: SPARQL's value equality differs
            return [ir.Comparison(expr.op, left, right)]
    return None


def _simple(node):
    if isinstance(node, Variable):
        return ir.Var(str(node))
    if isinstance(node, RdfLiteral):
        term = from_rdflib(node)
        return term if isinstance(term, ir.Num) else None
    return None


class _Compiler:
    def __init__(self, d: TermDictionary, span):
        self.d, self.span = d, span

    def op(self, node, project: bool = False):
        """``project``: whether a ``Project`` below (through ``ORDER BY``) keeps only its
        variables; elsewhere the caller reads the selected variables of each solution itself."""
        name = node.name
        if name == "BGP":
            return _BGP(node.triples, [], self.d, self.span)
        if name == "Filter":
            inner = node.p
            pushed = _to_comparisons(node.expr, self.d)
            if inner.name == "BGP" and pushed is not None and all(
                    v.name in {str(x) for t in inner.triples for x in t if isinstance(x, Variable)}
                    for c in pushed for v in _vars(c)):
                return _BGP(inner.triples, pushed, self.d, self.span)
            return _Filter(self.op(inner), _compile_expr(node.expr, self.d, self.span))
        if name == "Join":
            return _Join(self.op(node.p1), self.op(node.p2))
        if name == "LeftJoin":
            test = None if node.expr is None or getattr(node.expr, "name", "") == "TrueFilter" \
                else _compile_expr(node.expr, self.d, self.span)
            return _LeftJoin(self.op(node.p1), self.op(node.p2), test)
        if name == "Union":
            return _SolutionUnion(self.op(node.p1), self.op(node.p2))
        if name == "Extend":
            return _Extend(self.op(node.p), str(node.var), _compile_expr(node.expr, self.d, self.span), self.d,
                           str(node.expr) if isinstance(node.expr, Variable) else None)
        if name == "ToMultiSet":  # (a subquery)
            return self.op(node.p, project=True)
        if name == "values":
            return _Values([{str(k): self.d.intern(from_rdflib(v)) for k, v in row.items() if v is not None}
                            for row in node.res])
        if name == "Slice":
            raise _unsupported("LIMIT / OFFSET", self.span)
        if name == "OrderBy":
            return self.op(node.p, project)
        if name == "Project":
            inner = self.op(node.p)
            return _Project(inner, [str(v) for v in node.PV]) if project else inner
        if name in ("Distinct", "Reduced"):
            return _Distinct(self.op(node.p, project=True))
        if name == "AggregateJoin":
            group = node.p
            return _Aggregate(self.op(group.p), list(group.expr or []), list(node.A), self.d, self.span)
        raise _unsupported(name, self.span)


def compile_pattern(algebra, d: TermDictionary, span=None):
    """Compile an rdflib algebra node (a query's ``algebra["p"]``, SELECT or CONSTRUCT) into an
    operator whose ``run(store)`` gives the solutions (dicts variable name -> term id)."""
    return _Compiler(d, span).op(algebra)


def _vars(comparison: ir.Comparison):
    from dotr.rules.lang.validate import expr_vars
    return [*expr_vars(comparison.left), *expr_vars(comparison.right)]


@dataclass
class CompiledEvent:
    """An event type: ``run(store)`` gives its solutions now, as tuples of term ids in the order
    of ``attributes``, sorted by their terms (``TermDictionary.sort_rows``): which of several
    events of one time point a pattern takes first does not depend on the store's order of
    facts, which differs between stores with other histories (a restored Spark worker)."""

    name: str
    attributes: tuple[str, ...]
    _run: Callable[[Store], list[tuple]]
    dictionary: TermDictionary

    def run(self, store: Store) -> list[tuple]:
        rows = self._run(store)
        if len(rows) > 1:
            self.dictionary.sort_rows(rows)
        return rows


def compile_event(event: ir.EventDecl, prefixes: dict[str, str], d: TermDictionary,
                  queries: ParsedQueries | None = None) -> CompiledEvent:
    """Compile an ``event`` declaration (SPARQL or rule body) onto the store (``queries``: the
    checked program's parsed queries, so that its SELECT is not parsed again)."""
    params = event.attributes
    if event.query is None:
        atoms = [lit.atom for lit in event.body if isinstance(lit, ir.AtomLiteral) and not lit.negated]
        extra = tuple(lit for lit in event.body if not (isinstance(lit, ir.AtomLiteral) and not lit.negated))
        plans = _Plans(atoms, extra, tuple(p.name for p in event.params), d)
        return CompiledEvent(event.name, params, plans.rows, d)
    query = queries.get(event.query) if queries is not None else None
    if query is None:
        query, diags = parse_select(event.query, prefixes)
        if query is None:
            raise RuleError(diags)
    root = _Compiler(d, event.query.span).op(query.algebra["p"])
    if isinstance(root, _BGP) and set(params) <= set(root.plans.vars):  # its rows, no solution dicts
        plans = root.plans
        if tuple(params) == plans.vars:
            return CompiledEvent(event.name, params, plans.rows, d)
        positions = [plans.vars.index(p) for p in params]
        return CompiledEvent(event.name, params,
                             lambda store: [tuple(row[i] for i in positions) for row in plans.rows(store)], d)

    def run_query(store: Store) -> list[tuple]:
        rows = []
        for sol in root.run(store):
            if all(p in sol for p in params):
                rows.append(tuple(sol[p] for p in params))
        return rows
    return CompiledEvent(event.name, params, run_query, d)


@dataclass
class CompiledSelect:
    """A SPARQL SELECT compiled onto the store: ``run(store)`` gives its solutions (dicts variable
    name -> term id; variables left unbound are absent)."""

    text: ir.SparqlText
    _root: object

    def run(self, store: Store) -> list[Solution]:
        return self._root.run(store)


def compile_select(text: ir.SparqlText, prefixes: dict[str, str], d: TermDictionary,
                   query=None) -> CompiledSelect:
    """Compile a SPARQL SELECT (e.g. an EP-SPARQL query's group, ``temporal.epsparql``) onto the
    store (``query``: its parsed form, when the caller has it).

    >>> from dotr.rules.engine.store import DictStore
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
    return CompiledSelect(text, _Compiler(d, text.span).op(query.algebra["p"]))
