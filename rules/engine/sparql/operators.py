"""The operators a SPARQL query is compiled into (``rules.engine.sparql.planner``): each one's
``run(ds)`` gives its solutions (dicts variable name -> term id; an unbound variable is absent)
over a :class:`Dataset`, and ``certain`` names the variables every one of its solutions binds
(what joins hash on)."""

from __future__ import annotations

from rdflib import BNode, URIRef, Variable

from dotr.rules import ir
from dotr.rules.lang.queries.sparql import rdf_term as from_rdflib
from dotr.rules.engine.guard import GUARD
from dotr.rules.engine.sparql.conjunction import Conjunction
from dotr.rules.engine.sparql.expr import (IriValue, Solution, Undefined, compile_expr, holds,
                                           unsupported)
from dotr.rules.engine.sparql.solutions import join, left_join, minus
from dotr.rules.engine.store import Store
from dotr.rules.engine.terms import TermDictionary


class Dataset:
    """The graphs a query reads: ``store`` is the default graph, ``named`` maps the id of each
    named graph's IRI to its store (``GRAPH``, and RSP-QL's ``WINDOW``)."""

    __slots__ = ("store", "named")

    def __init__(self, store: Store, named: dict[int, Store] | None = None):
        self.store, self.named = store, named or {}


def dataset(source) -> Dataset:
    return source if isinstance(source, Dataset) else Dataset(source)


class BGP:
    """A basic graph pattern (the triples of every group the planner merged) with the filters
    pushed into its plan (``pushed``, rule-language comparisons) or tested on its solutions
    (``residual``)."""

    def __init__(self, triples, pushed: list[ir.Comparison], residual: list, d: TermDictionary, span):
        atoms = [ir.Atom(self._pred(p, span), (self._term(s), self._term(o))) for s, p, o in triples]
        names: dict[str, None] = {}
        for atom in atoms:
            for t in (atom.pred, *atom.args):
                if isinstance(t, ir.Var):
                    names.setdefault(t.name)
        self.vars = tuple(names)
        self.certain = frozenset(names)
        self.conj = Conjunction(atoms, tuple(pushed), self.vars, d)
        self.residual = residual

    @staticmethod
    def _pred(p, span):
        if isinstance(p, Variable):
            return ir.Var(str(p))
        if isinstance(p, URIRef):
            return ir.Iri(str(p))
        raise unsupported(f"predicate {p!r}", span)

    @staticmethod
    def _term(node):
        if isinstance(node, Variable):
            return ir.Var(str(node))
        if isinstance(node, BNode):  # a blank node in a pattern is a variable
            return ir.Var("_:" + str(node))
        return from_rdflib(node)

    def run(self, ds: Dataset, seed_vars: tuple[str, ...] = (), seeds=None) -> list[Solution]:
        names = self.vars
        out = [dict(zip(names, row)) for row in self.conj.rows(ds.store, seed_vars, seeds)]
        for test in self.residual:
            out = [sol for sol in out if holds(test, sol)]
        return out


def seeded(op, ds: Dataset, shared: tuple[str, ...], given: list[Solution]) -> list[Solution]:
    """``op``'s solutions that may be compatible with ``given`` (``shared``: variables both bind
    in every solution): a basic graph pattern is evaluated from the distinct values of ``given``
    at ``shared`` (a bind join) when there are fewer of them than candidates of its most selective
    triple pattern; anything else is evaluated whole."""
    if shared and isinstance(op, BGP):
        estimate = op.conj.estimate(ds.store)
        if estimate is None:
            return []
        seeds = list(dict.fromkeys(tuple(sol[v] for v in shared) for sol in given))
        if len(seeds) <= estimate:
            return op.run(ds, shared, seeds)
    return op.run(ds)


class Join:
    """The join of a group's parts that are not triple patterns (OPTIONAL, UNION, subqueries,
    VALUES, BIND ...) with its basic graph pattern (``bgp``, every triple pattern of the group and
    of the plain groups nested in it). The parts are evaluated first; then, from the smallest
    result (or the pattern, when it has fewer candidates), each step joins a part that shares a
    variable with what was joined so far, the pattern first (seeded with the solutions so far when
    that reads less), the smallest part next; a part sharing none is joined only when nothing else
    is left."""

    def __init__(self, bgp: BGP | None, others: list):
        self.bgp, self.others = bgp, others
        self.certain = frozenset().union(*(op.certain for op in ([bgp] if bgp else []) + others))

    def run(self, ds: Dataset) -> list[Solution]:
        parts = []
        for op in self.others:
            sols = op.run(ds)
            if not sols:
                return []
            parts.append((op.certain, sols))
        bgp, estimate = self.bgp, None
        if bgp is not None:
            estimate = bgp.conj.estimate(ds.store)
            if estimate is None:
                return []
        parts.sort(key=lambda part: len(part[1]))
        if bgp is not None and estimate <= len(parts[0][1]):
            current, certain, bgp = bgp.run(ds), bgp.certain, None
        else:
            certain, current = parts.pop(0)
        while parts or bgp is not None:
            if not current:
                return []
            if bgp is not None and (bgp.certain & certain or not parts):
                shared = tuple(sorted(bgp.certain & certain))
                right, part_certain, bgp = seeded(bgp, ds, shared, current), bgp.certain, None
            else:
                connected = [part for part in parts if part[0] & certain]
                part = connected[0] if connected else parts[0]
                parts.remove(part)
                part_certain, right = part
                shared = tuple(sorted(part_certain & certain))
            current = join(current, right, shared)
            GUARD.charge(len(current))  # (the budget of the time point, a cancellation: between joins)
            certain = certain | part_certain
        return current


class LeftJoin:
    def __init__(self, left, right, test):
        self.left, self.right, self.test = left, right, test
        self.certain = left.certain

    def run(self, ds):
        left = self.left.run(ds)
        if not left:
            return []
        shared = tuple(sorted(self.left.certain & self.right.certain))
        test = self.test
        joined = left_join(left, seeded(self.right, ds, shared, left), shared,
                           None if test is None else (lambda sol: holds(test, sol)))
        GUARD.charge(len(joined))
        return joined


class Minus:
    def __init__(self, left, right):
        self.left, self.right = left, right
        self.certain = left.certain

    def run(self, ds):
        left = self.left.run(ds)
        if not left:
            return []
        shared = tuple(sorted(self.left.certain & self.right.certain))
        return minus(left, seeded(self.right, ds, shared, left), shared)


class Union:
    def __init__(self, left, right):
        self.left, self.right = left, right
        self.certain = left.certain & right.certain

    def run(self, ds):
        return self.left.run(ds) + self.right.run(ds)


class Filter:
    def __init__(self, inner, tests: list):
        self.inner, self.tests = inner, tests
        self.certain = inner.certain

    def run(self, ds):
        out = self.inner.run(ds)
        for test in self.tests:
            out = [s for s in out if holds(test, s)]
        return out


class Graph:
    """``GRAPH <iri> { ... }`` (the named graph, none when the dataset has no such graph) or
    ``GRAPH ?g { ... }`` (each named graph, ``?g`` bound to its IRI)."""

    def __init__(self, inner, graph: int | None, var: str | None):
        self.inner, self.graph, self.var = inner, graph, var
        self.certain = inner.certain | {var} if var is not None else inner.certain

    def run(self, ds):
        if self.var is None:
            store = ds.named.get(self.graph)
            return [] if store is None else self.inner.run(Dataset(store, ds.named))
        var, out = self.var, []
        for graph, store in ds.named.items():
            for sol in self.inner.run(Dataset(store, ds.named)):
                if sol.get(var, graph) == graph:
                    out.append({**sol, var: graph})
        return out


class Extend:
    """``BIND(expr AS ?var)``; ``source``: the expression is the variable ``?source``, whose
    term is bound as it is (a name stays a name, not the string of its value)."""

    def __init__(self, inner, var: str, value, d: TermDictionary, source: str | None = None):
        self.inner, self.var, self.value, self.d, self.source = inner, var, value, d, source
        self.certain = inner.certain

    def run(self, ds):
        out = []
        if self.source is not None:
            for sol in self.inner.run(ds):
                term_id = sol.get(self.source)
                out.append(sol if term_id is None else {**sol, self.var: term_id})
            return out
        for sol in self.inner.run(ds):
            try:
                value = self.value(sol)
                term_id = value.id if isinstance(value, IriValue) else self.d.intern(_const_term(value))
                out.append({**sol, self.var: term_id})
            except (Undefined, TypeError):
                out.append(sol)
        return out


def _const_term(value):
    """The term of a computed value; a whole number computed as a fraction (``3 / 1``, ``1.5 +
    1.5``) is the decimal ``3.0``, not the integer 3."""
    if isinstance(value, bool):
        return ir.Literal("true" if value else "false", ir.XSD + "boolean")
    if isinstance(value, float) and value.is_integer():
        return ir.Literal(repr(value), ir.XSD + "decimal")
    if isinstance(value, (int, float)):
        return ir.Num(value)
    return ir.Literal(str(value))


class Values:
    def __init__(self, rows: list[Solution]):
        self.rows = rows
        self.certain = frozenset.intersection(*(frozenset(r) for r in rows)) if rows else frozenset()

    def run(self, ds):
        return [dict(r) for r in self.rows]


class Project:
    """A projection that matters: under ``DISTINCT`` (duplicates are told apart by the selected
    variables only) and in a subquery (its other variables are not in scope outside it)."""

    def __init__(self, inner, variables: list[str]):
        self.inner, self.variables = inner, variables
        self.certain = inner.certain & set(variables)

    def run(self, ds):
        keep = self.variables
        return [{v: sol[v] for v in keep if v in sol} for sol in self.inner.run(ds)]


class Distinct:
    def __init__(self, inner):
        self.inner = inner
        self.certain = inner.certain

    def run(self, ds):
        seen, out = set(), []
        for sol in self.inner.run(ds):
            key = tuple(sorted(sol.items()))
            if key not in seen:
                seen.add(key)
                out.append(sol)
        return out


class Aggregate:
    """GROUP BY with aggregates (rdflib's AggregateJoin over a Group): one solution per group
    binding the group variables and each aggregate's result variable. Unbound values are left
    out of an aggregate; one that errs (SUM of a non-number, MIN of nothing) leaves its variable
    unbound. A group variable and the SAMPLE of a variable keep the term bound (a name stays a
    name, not the string of its value)."""

    def __init__(self, inner, keys: list, aggregates: list, d: TermDictionary, span):
        self.inner, self.d = inner, d
        self.keys = [compile_expr(k, d, span) for k in keys]
        self.key_vars = [str(k) if isinstance(k, Variable) else None for k in keys]
        self.aggregates = []
        for agg in aggregates:
            kind = agg.name[len("Aggregate_"):].rstrip("_").lower()
            if kind not in _AGGREGATES:
                raise unsupported(agg.name, span)
            arg = None if agg.vars == "*" else compile_expr(agg.vars, d, span)
            if kind in ("sample", "min", "max") and isinstance(agg.vars, Variable):
                arg = str(agg.vars)  # (the bound term itself)
            self.aggregates.append((kind, arg, bool(agg.distinct), str(agg.res)))
        self.certain = inner.certain & {v for v in self.key_vars if v is not None}

    def run(self, ds):
        groups: dict[tuple, list[Solution]] = {}
        plain = all(v is not None for v in self.key_vars)
        for sol in self.inner.run(ds):
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
                if isinstance(arg, str):  # SAMPLE, MIN or MAX of a variable: one of its terms
                    ids = [sol[arg] for sol in sols if arg in sol]
                    if kind == "sample" or not ids:
                        value = ids[0] if ids else None
                    else:
                        d = self.d
                        value = (min if kind == "min" else max)(ids, key=lambda i: _order(d.value(i), i, d))
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
    if kind in ("min", "max"):
        if not values:
            return None
        pick = min if kind == "min" else max
        value = pick(values, key=lambda v: _order(v, v.id if isinstance(v, IriValue) else None, d))
        return _term_id(value, d)
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in values):
        return None  # numeric aggregates over non-numbers err
    if kind == "sum":
        return _term_id(sum(values), d)
    return _term_id(sum(values) / len(values), d) if values else d.number(0)  # avg


def _order(value, term_id: int | None, d: TermDictionary) -> tuple:
    """SPARQL's order of terms for MIN and MAX: IRIs, then numbers by value, then other literals
    by their text."""
    if isinstance(value, IriValue) or (value is None and term_id is not None):
        return (0, 0, d.term(term_id).value if term_id is not None else "")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (1, value, "")
    return (2, 0, str(value))


